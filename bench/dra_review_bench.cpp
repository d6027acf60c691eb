// DRA review benchmark: what judging a pod with DRA claims costs against 5,000 nodes (--nodes) with a
// ResourceSlice of 8 GPUs each (--gpus), four A100 nodes in five and H100s on the rest, each GPU with its own
// uuid as NVIDIA's driver publishes it. The whole offline check of each pod (parse, every rule, dra-claims'
// device matching, the patch) is timed, best and median of --runs, for:
//   - a one-GPU template (fits the first node: the common case);
//   - 4 H100s by selector (the first fitting node is the fifth);
//   - 16 GPUs (no node has them: every device group is tried, the message built);
//   - a selector no device matches (every group tried, the attribute values surveyed);
//   - a plain nvidia.com/gpu: 4 pod served by the DeviceClass's extendedResourceName (KEP-5004);
//   - a selector on one GPU's uuid, which tells a group's nodes apart: every node is tried, the last fits;
//   - a tenant's template of 32 costly selectors that name uuid (policy/review_budget.hpp): within the
//     review's budget; one of 32 distinct selectors of 10 KiB of regular expressions, costly to compile;
//     security-review-2026-12.md's claim of counted repeats; then the first and the last with a budget too
//     large to bind, as every review was before 2026-12-07 (on 20 nodes of --gpus GPUs, once: unbounded,
//     it grows with the fleet).
// The nodes are two device groups (A100 and H100), so most rows try two nodes, not 5,000.
// Prints numbers; asserts nothing. Run: make bench.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "gpuadmit/policy/review_budget.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace gpuadmit;

json device(int node, int k) {
  const bool a100 = node % 5 != 4;
  return {{"name", "gpu-" + std::to_string(k)},
          {"attributes",
           {{"type", {{"string", "gpu"}}},
            {"uuid", {{"string", "GPU-" + std::to_string(node) + "-" + std::to_string(k)}}},
            {"productName", {{"string", a100 ? "NVIDIA A100-SXM4-80GB" : "NVIDIA H100 80GB HBM3"}}},
            {"architecture", {{"string", a100 ? "Ampere" : "Hopper"}}},
            {"cudaComputeCapability", {{"version", a100 ? "8.0.0" : "9.0.0"}}},
            {"driverVersion", {{"version", "580.95.5"}}}}},
          {"capacity", {{"memory", {{"value", "80Gi"}}}}}};
}

// 32 selectors that each spend a selector's whole budget (1,000,000 steps) on matches(), the dearest step,
// and name uuid, which each GPU carries alone: each is evaluated on every device (#47's reproducer).
json hostile_template() {
  std::string expression = "cel.bind(uuid, \"" + std::string(3800, 'a') + "\", false";
  for (int i = 0; i < 50; ++i) expression += "||uuid.matches('(a|aa)*b')";
  expression += ")";
  json selectors = json::array();
  for (int i = 0; i < 32; ++i) selectors.push_back({{"cel", {{"expression", expression}}}});
  json exactly = {{"deviceClassName", "gpu.nvidia.com"}, {"allocationMode", "All"}, {"selectors", selectors}};
  return {{"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", "hostile"}, {"namespace", "ml-team"}}},
          {"spec", {{"spec", {{"devices", {{"requests", {{{"name", "gpu"}, {"exactly", exactly}}}}}}}}}}};
}

// The same request with 32 distinct selectors of 10 KiB of regular expressions: costly to compile.
json costly_to_compile_template() {
  json t = hostile_template();
  t["metadata"]["name"] = "costly-to-compile";
  json& selectors = t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"];
  for (int k = 0; k < 32; ++k) {
    std::string expression = "cel.bind(uuid, 'x', false";
    for (int i = 0; expression.size() < 10'000; ++i)
      expression += "||uuid.matches('(a|aa)*b" + std::to_string(k * 1000 + i) + "')";
    selectors[k]["cel"]["expression"] = expression + ")";
  }
  return t;
}

// security-review-2026-12.md H2's claim: 32 selectors of counted repeats that name uuid, allocationMode
// All. cel-go prices matches() by the lengths alone, so the API server's cost estimate likely admits it.
json counted_repeats_template() {
  json t = hostile_template();
  t["metadata"]["name"] = "counted-repeats";
  json& selectors = t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"];
  const std::string repeat = "matches('^([A-Za-z0-9 -]{1,64}){1,16}$')";
  for (auto& selector : selectors) {
    selector["cel"]["expression"] = "device.attributes['gpu.nvidia.com'].uuid." + repeat +
                                    " && device.attributes['gpu.nvidia.com'].productName." + repeat;
  }
  return t;
}

json cluster(int nodes, int gpus) {
  json items = json::array();
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "dra-gpu-" + std::to_string(i);
    items.push_back({{"kind", "Node"},
                     {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
                     {"status",
                      {{"allocatable", {{"cpu", "96"}, {"memory", "1056Gi"}, {"pods", "110"}}},
                       {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
    json devices = json::array();
    for (int k = 0; k < gpus; ++k) devices.push_back(device(i, k));
    items.push_back({{"kind", "ResourceSlice"},
                     {"metadata", {{"name", name + "-gpu.nvidia.com"}}},
                     {"spec",
                      {{"driver", "gpu.nvidia.com"},
                       {"nodeName", name},
                       {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                       {"devices", devices}}}});
  }
  items.push_back(json::parse(R"({"kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},"spec":{
    "selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
    "extendedResourceName":"nvidia.com/gpu"}})"));
  const auto add_template = [&](const std::string& name, int count, const std::string& selector) {
    json exactly = {{"deviceClassName", "gpu.nvidia.com"}, {"count", count}};
    if (!selector.empty()) exactly["selectors"] = {{{"cel", {{"expression", selector}}}}};
    items.push_back(
        {{"kind", "ResourceClaimTemplate"},
         {"metadata", {{"name", name}, {"namespace", "ml-team"}}},
         {"spec", {{"spec", {{"devices", {{"requests", {{{"name", "gpu"}, {"exactly", exactly}}}}}}}}}}});
  };
  add_template("one-gpu", 1, "");
  add_template("four-h100", 4,
               "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('h100')");
  add_template("sixteen", 16, "");
  add_template("h200", 1, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'");
  add_template("by-uuid", 1,
               "device.attributes['gpu.nvidia.com'].uuid == 'GPU-" + std::to_string(nodes - 1) + "-0'");
  items.push_back(hostile_template());
  items.push_back(costly_to_compile_template());
  items.push_back(counted_repeats_template());
  return {{"kind", "List"}, {"items", items}};
}

json pod(const std::string& resources, const std::string& claims) {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml-team"},
    "spec":{"containers":[{"name":"main","image":"nvcr.io/nvidia/pytorch:24.10-py3","resources":)" +
                     resources + "}]" + claims + "}}");
}

json claim_pod(const std::string& template_name) {
  return pod(R"({"claims":[{"name":"gpu"}]})",
             R"(,"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":")" + template_name + "\"}]");
}

// The hostile template's review: the whole check (the review's own budget), then dra-claims' evaluation
// alone with a budget too large to bind, on 20 nodes, once.
// The whole check of one pod, once, within the review's own budget.
void budgeted_row(const char* what, const std::string& template_name, const policy::ClusterView& view,
                  const policy::RuleSet& rules) {
  const auto start = Clock::now();
  const auto checked = admission::check_object(claim_pod(template_name), rules, "ml-team", &view);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::printf("  %-42s once     %8.2f ms (%s)\n", what, ms,
              checked && checked->allowed ? "allowed, with a warning" : "denied");
}

// dra-claims' evaluation of one pod alone, with a budget too large to bind (every review before
// 2026-12-07), on a small view, once.
void unbounded_row(const char* what, const std::string& template_name, const policy::ClusterView& view,
                   const policy::RuleSet& rules) {
  auto document = k8s::OwnedJsonDocument::of(claim_pod(template_name));
  if (!document) return;
  policy::Request request{document->root(), "ml-team", policy::Mode::kValidate, &view};
  policy::ReviewBudget unbounded(std::int64_t{1} << 60);
  request.budget = &unbounded;
  const auto start = Clock::now();
  const auto decision = policy::evaluate(request, rules);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::printf("  %-42s once     %8.2f ms (%lld steps, %s)\n", what, ms,
              static_cast<long long>(unbounded.spent()), decision ? "judged" : "error");
}

void hostile_rows(const policy::ClusterView& view, const policy::RuleSet& rules, int gpus) {
  budgeted_row("32 costly uuid selectors (review budget)", "hostile", view, rules);
  budgeted_row("32 x 10 KiB of regexes (review budget)", "costly-to-compile", view, rules);
  budgeted_row("the security review's claim (budget)", "counted-repeats", view, rules);
  auto small = policy::snapshot_from_list(cluster(20, gpus));
  if (!small) return;
  const policy::ClusterView small_view{std::make_shared<const policy::ClusterSnapshot>(std::move(*small)),
                                       false, 0};
  unbounded_row("costly uuid selectors, unbounded, 20 nodes", "hostile", small_view, rules);
  unbounded_row("the review's claim, unbounded, 20 nodes", "counted-repeats", small_view, rules);
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000;
  int gpus = 8;
  int runs = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (value <= 0 || (flag != "--nodes" && flag != "--gpus" && flag != "--runs")) {
      std::fprintf(stderr, "usage: gpuadmit_dra_review_bench [--nodes N] [--gpus G] [--runs R]\n");
      return 2;
    }
    (flag == "--nodes" ? nodes : flag == "--gpus" ? gpus : runs) = value;
  }
  auto built = policy::snapshot_from_list(cluster(nodes, gpus));
  if (!built) {
    std::fprintf(stderr, "cluster: %s\n", built.error().message.c_str());
    return 1;
  }
  const policy::ClusterView view{std::make_shared<const policy::ClusterSnapshot>(std::move(*built)), false,
                                 0};
  const policy::RuleSet rules;
  std::printf("DRA review benchmark: %d nodes with %d GPUs each, %d runs per pod (whole offline check)\n",
              nodes, gpus, runs);
  const std::vector<std::pair<const char*, json>> pods{
      {"one GPU (template, fits the first node)", claim_pod("one-gpu")},
      {"4 H100s by selector (the 5th node fits)", claim_pod("four-h100")},
      {"16 GPUs (no node: all visited, denied)", claim_pod("sixteen")},
      {"H200 (no device matches: denied)", claim_pod("h200")},
      {"nvidia.com/gpu: 4 (KEP-5004, node-fit)", pod(R"({"limits":{"nvidia.com/gpu":4}})", "")},
      {"one GPU by uuid (each node tried: last)", claim_pod("by-uuid")},
  };
  for (const auto& [what, object] : pods) {
    std::vector<double> ms;
    bool allowed = false;
    for (int r = 0; r < runs; ++r) {
      const auto start = Clock::now();
      auto checked = admission::check_object(object, rules, "ml-team", &view);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      allowed = checked && checked->allowed;
    }
    std::sort(ms.begin(), ms.end());
    std::printf("  %-42s best %8.2f ms, median %8.2f ms (%s)\n", what, ms.front(), ms[ms.size() / 2],
                allowed ? "allowed" : "denied");
  }
  hostile_rows(view, rules, gpus);
  return 0;
}
