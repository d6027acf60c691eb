// The cluster view wired into the webhook as `gpuadmit serve` wires it (cli::make_watcher_view +
// server::attach_cluster_view), over a scripted API transport: /readyz waits for the first full sync,
// reviews read the watcher's snapshot, /metrics carries the cluster series.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/cli/serve_cluster_view.hpp"
#include "gpuadmit/server/cluster_view.hpp"
#include "support/cluster_objects.hpp"
#include "support/fake_transport.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;

// A schedulable GPU node, untainted, with room for pods (objects.hpp's node_json has no "pods").
std::string gpu_node(const std::string& name, const std::string& gpus) {
  return R"({"metadata":{"name":")" + name +
         R"(","resourceVersion":"5"},"spec":{},"status":{"allocatable":)"
         R"({"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":")" +
         gpus + R"("},"conditions":[{"type":"Ready","status":"True"}]}})";
}

// A GPU pod that is right in every way the cluster-blind rules check, asking for `gpus` GPUs.
nlohmann::json gpu_pod(int gpus) {
  const std::string n = std::to_string(gpus);
  return nlohmann::json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"train","namespace":"ml-team"},
    "spec":{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],
    "volumes":[{"name":"dshm","emptyDir":{"medium":"Memory"}}],
    "containers":[{"name":"train","image":"registry.invalid/train:1",
      "volumeMounts":[{"name":"dshm","mountPath":"/dev/shm"}],"resources":{
      "limits":{"nvidia.com/gpu":")" +
      n + R"(","cpu":"4","memory":"64Gi"},
      "requests":{"nvidia.com/gpu":")" +
      n + R"(","cpu":"4","memory":"64Gi"}}}]}})");
}

// The webhook with a watcher over `transport` attached; the watcher is started like serve starts it.
struct Rig {
  explicit Rig(std::shared_ptr<FakeTransport> t)
      : transport(std::move(t)),
        view(cli::make_watcher_view(transport, fast_watcher_options())),
        webhook(TestWebhookOptions{
            [this](server::WebhookConfig& config) { server::attach_cluster_view(config, *view); }}) {
    view->start([this] { return rules; });
  }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;
  ~Rig() { view->stop(); }

  HttpReply get(const std::string& target) {
    auto reply = webhook.client().request("GET", target);
    REQUIRE(reply);
    return *reply;
  }
  bool ready_within(std::chrono::milliseconds timeout) {
    return eventually([&] { return get("/readyz").status == 200; }, timeout);
  }

  std::shared_ptr<FakeTransport> transport;
  std::shared_ptr<const policy::RuleSet> rules = std::make_shared<const policy::RuleSet>();
  std::unique_ptr<server::ClusterViewProvider> view;  // outlives the webhook (declared before it)
  TestWebhook webhook;
};

void list_the_other_kinds(FakeTransport& transport) {
  for (const std::string& path : kAllPaths) {
    if (path == kNodes) continue;
    transport.push(path, list_response("[]", "10"));
    transport.push(path, watch_stream({}, true));
  }
}

}  // namespace

// The webhook's verdicts rest on what it reads: serve refuses a kubeconfig that turns verification off, which
// the CLI honours with a warning.
TEST_CASE("serve refuses a kubeconfig with insecure-skip-tls-verify", "[serve]") {
  const TempDir dir;
  const std::filesystem::path file = dir.path() / "kubeconfig";
  std::ofstream(file) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                         "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                         "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443', "
                         "insecure-skip-tls-verify: true}}]\n"
                         "users: [{name: u, user: {token: t}}]\n";
  cli::ClusterViewFlags flags;
  flags.kubeconfig = file.string();
  const std::map<std::string, std::string> env;
  auto transport = cli::api_transport_factory(flags, &env, {}, "cluster view")();
  REQUIRE_FALSE(transport.ok());
  CHECK_THAT(transport.error().message, Catch::Contains("cluster view: kubeconfig") &&
                                            Catch::Contains("has insecure-skip-tls-verify; serve needs"));
}

TEST_CASE("readyz says the cluster view is not synced until every kind has been listed, then is ready",
          "[serve]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kNodes, list_response("[" + node_json("gpu-0", "5") + "]", "10"));
  transport->push(kNodes, watch_stream({}, true));
  Rig rig(transport);
  // Nodes are listed, the other kinds are not: the webhook must stay out of the Service.
  REQUIRE(transport->wait_idle(kQuotas));
  const HttpReply before = rig.get("/readyz");
  CHECK(before.status == 503);
  CHECK(before.body == "cluster view synced: not yet\n");
  CHECK(rig.get("/healthz").status == 200);  // alive all along: only readiness waits

  list_the_other_kinds(*transport);
  CHECK(rig.ready_within(30s));
}

TEST_CASE("each review reads the watcher's snapshot: node-fit denies 8 GPUs on a 4-GPU cluster", "[serve]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kNodes, list_response("[" + gpu_node("gpu-0", "4") + "]", "10"));
  transport->push(kNodes, watch_stream({}, true));
  list_the_other_kinds(*transport);
  Rig rig(transport);
  REQUIRE(rig.ready_within(30s));

  // pods asking for this many GPUs, allowed?
  auto [gpus, allowed] = GENERATE(table<int, bool>({{4, true}, {8, false}}));
  INFO(gpus << " GPUs");
  auto reply = rig.webhook.client().request("POST", "/validate", admission_review(gpu_pod(gpus), "uid-1"),
                                            "application/json");
  REQUIRE(reply);
  REQUIRE(reply->status == 200);
  INFO(reply->body);
  const auto response = nlohmann::json::parse(reply->body)["response"];
  CHECK(response["allowed"] == allowed);
  if (!allowed) {
    const std::string message = response["status"]["message"];
    INFO(message);
    CHECK(message.find("[node-fit]") != std::string::npos);
    CHECK(message.find("1 node has 4 nvidia.com/gpu, the pod asks for 8") != std::string::npos);
  }
}

TEST_CASE(
    "a cluster that does not serve resource.k8s.io/v1 (before 1.34) makes the webhook ready all the same",
    "[serve]") {
  auto transport = std::make_shared<FakeTransport>();
  for (const std::string& path : {kNodes, kQuotas, kClasses, kClaims}) {
    transport->push(path, list_response("[]", "10"));
    transport->push(path, watch_stream({}, true));
  }
  for (const std::string& path : kOptionalPaths) transport->push(path, not_found());
  Rig rig(transport);
  REQUIRE(rig.ready_within(30s));
  const std::string text = rig.get("/metrics").body;
  INFO(text);
  CHECK(text.find("\ngpuadmit_cluster_available{kind=\"resourceslices\"} 0\n") != std::string::npos);
  CHECK(text.find("\ngpuadmit_cluster_available{kind=\"nodes\"} 1\n") != std::string::npos);
}

TEST_CASE("metrics carry the cluster view's series after the webhook's own", "[serve]") {
  auto transport = std::make_shared<FakeTransport>();
  // A third node advertises a GPU resource the policy does not list.
  const std::string vgpu_node =
      R"({"metadata":{"name":"c","resourceVersion":"7"},"status":{"allocatable":{"example.com/vgpu":"4"}}})";
  transport->push(
      kNodes,
      list_response("[" + node_json("a", "5") + "," + node_json("b", "6") + "," + vgpu_node + "]", "10"));
  transport->push(kNodes, watch_stream({}, true));
  list_the_other_kinds(*transport);
  Rig rig(transport);
  REQUIRE(rig.ready_within(30s));

  const std::string text = rig.get("/metrics").body;
  // series that must be present, as a whole line
  auto line = GENERATE(as<std::string>{}, "gpuadmit_cluster_synced 1", "gpuadmit_cluster_stale 0",
                       "gpuadmit_cluster_objects{kind=\"nodes\"} 3",
                       "gpuadmit_cluster_objects{kind=\"resourceslices\"} 0",
                       "gpuadmit_cluster_watch_restarts_total{kind=\"nodes\"} 0",
                       "gpuadmit_unlisted_gpu_resources{resource=\"example.com/vgpu\"} 1");
  INFO(text);
  CHECK(text.find("\n" + line + "\n") != std::string::npos);
  CHECK(text.find("gpuadmit_cluster_snapshot_age_seconds ") != std::string::npos);
  CHECK(text.find("gpuadmit_admission_reviews_total") < text.find("gpuadmit_cluster_synced"));
}

}  // namespace gpuadmit::test
