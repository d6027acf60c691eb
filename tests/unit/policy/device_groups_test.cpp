// Device groups: nodes whose devices the DRA checks cannot tell apart are tried once, and what they say is
// what trying every node would say. The cluster is built here: 5 H100 nodes and 3 A100 nodes of 4 GPUs
// with their own uuids, 2 CPU nodes, and 3 MIG nodes whose 4 slices come from parents in two patterns.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using nlohmann::json;

json node(const std::string& name) {
  return {{"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"allocatable", {{"cpu", "96"}, {"memory", "1000Gi"}, {"pods", "110"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json attr(const std::string& value) {
  return {{"string", value}};
}

json slice(const std::string& name, const json& devices) {
  return {{"kind", "ResourceSlice"},
          {"metadata", {{"name", name + "-gpu.nvidia.com"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", name},
            {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", devices}}}};
}

json gpus(const std::string& name, const std::string& product) {
  json devices = json::array();
  for (int k = 0; k < 4; ++k) {
    devices.push_back({{"name", "gpu-" + std::to_string(k)},
                       {"attributes",
                        {{"type", attr("gpu")},
                         {"uuid", attr("GPU-" + name + "-" + std::to_string(k))},
                         {"productName", attr(product)}}}});
  }
  return slice(name, devices);
}

// Four 1g.10gb MIG devices; `parents` names each one's parent GPU.
json migs(const std::string& name, const std::vector<std::string>& parents) {
  json devices = json::array();
  for (std::size_t k = 0; k < parents.size(); ++k) {
    devices.push_back({{"name", "mig-" + std::to_string(k)},
                       {"attributes",
                        {{"type", attr("mig")},
                         {"profile", attr("1g.10gb")},
                         {"uuid", attr("MIG-" + name + "-" + std::to_string(k))},
                         {"parentUUID", attr("GPU-" + name + "-" + parents[k])}}}});
  }
  return slice(name, devices);
}

json device_class(const std::string& name, const std::string& type) {
  return {{"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"selectors",
             {{{"cel",
                {{"expression",
                  "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '" +
                      type + "'"}}}}}}}}};
}

json cluster_list() {
  json items = json::array();
  for (int i = 0; i < 5; ++i) {
    const std::string name = "h100-" + std::to_string(i);
    items.push_back(node(name));
    items.push_back(gpus(name, "NVIDIA H100 80GB HBM3"));
  }
  for (int i = 0; i < 3; ++i) {
    const std::string name = "a100-" + std::to_string(i);
    items.push_back(node(name));
    items.push_back(gpus(name, "NVIDIA A100-SXM4-80GB"));
  }
  items.push_back(node("cpu-0"));
  items.push_back(node("cpu-1"));
  const std::vector<std::pair<std::string, std::vector<std::string>>> mig_nodes{
      {"mig-0", {"a", "a", "b", "b"}}, {"mig-1", {"c", "c", "d", "d"}}, {"mig-2", {"e", "e", "e", "f"}}};
  for (const auto& [name, parents] : mig_nodes) {
    items.push_back(node(name));
    items.push_back(migs(name, parents));
  }
  items.push_back(device_class("gpu.nvidia.com", "gpu"));
  items.push_back(device_class("mig.nvidia.com", "mig"));
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

gpuadmit::policy::ClusterView view() {
  auto snapshot = gpuadmit::policy::snapshot_from_list(cluster_list());
  REQUIRE(snapshot);
  snapshot->dra_listed = true;
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

// A pod in namespace ml whose one container uses an inline-free claim: a ResourceClaim named "c" that the
// test adds to the view with `requests` (YAML flow list) and `constraints`.
json pod(const std::string& extra_spec = "", const std::string& cpu = "8") {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - name: main
      image: nvcr.io/nvidia/pytorch:24.10-py3
      resources:
        requests: {cpu: ")" + cpu +
                              R"(", memory: 64Gi}
        limits: {cpu: ")" + cpu +
                              R"(", memory: 64Gi}
        claims: [{name: gpu}]
  resourceClaims: [{name: gpu, resourceClaimName: c}]
)" + extra_spec);
}

gpuadmit::policy::ClusterView with_claim(const std::string& devices_yaml) {
  json list = cluster_list();
  json claim = gpuadmit::test::yaml(
      "kind: ResourceClaim\nmetadata: {name: c, namespace: ml}\nspec:\n  devices:\n" + devices_yaml);
  list["items"].push_back(claim);
  auto snapshot = gpuadmit::policy::snapshot_from_list(list);
  REQUIRE(snapshot);
  snapshot->dra_listed = true;
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

std::string messages_of(const gpuadmit::admission::CheckResult& r, const std::string& rule) {
  std::string out;
  for (const auto& v : r.violations) {
    if (v.rule == rule) out += v.message + "\n";
  }
  return out;
}

std::vector<std::vector<std::string>> group_names(const gpuadmit::policy::ClusterSnapshot& s) {
  std::vector<std::vector<std::string>> out;
  for (const auto& group : s.device_groups) {
    out.emplace_back();
    for (const std::size_t i : group) out.back().push_back(s.nodes[i].name);
  }
  return out;
}

}  // namespace

TEST_CASE("nodes whose devices differ only in their uuids are one device group", "[device-groups]") {
  const auto v = view();
  const std::vector<std::vector<std::string>> expected{
      {"a100-0", "a100-1", "a100-2"},
      {"h100-0", "h100-1", "h100-2", "h100-3", "h100-4"},
      {"mig-0", "mig-1"},  // parents a,a,b,b and c,c,d,d: the same pattern
      {"mig-2"},           // e,e,e,f
  };
  CHECK(group_names(*v.snapshot) == expected);
  CHECK(v.snapshot->own_attribute_names == std::set<std::string, std::less<>>{"parentUUID", "uuid"});
}

TEST_CASE("dra-claims counts every node of a group in what it says", "[device-groups]") {
  const auto v = with_claim(R"(    requests:
    - name: g
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"}}]
)");
  const auto r = check(pod(), gpuadmit::test::policy_with(""), &v);
  CHECK_FALSE(r.allowed);
  CHECK_THAT(
      messages_of(r, "dra-claims"),
      Catch::Contains("on the 13 nodes this pod can use") &&
          Catch::Contains("NVIDIA A100-SXM4-80GB (12 devices on 3 nodes), NVIDIA H100 80GB HBM3 (20 on 5)"));
}

TEST_CASE("a selector that reads a device's uuid is tried on each node of a group", "[device-groups]") {
  auto [uuid, extra, allowed] = GENERATE(table<std::string, std::string, bool>({
      {"GPU-h100-3-2", "", true},   // the fourth node of the H100 group has it
      {"GPU-h100-9-0", "", false},  // no node has it
      {"GPU-h100-3-2", "  nodeSelector: {kubernetes.io/hostname: h100-2}\n", false},  // not on that node
      {"GPU-h100-2-1", "  nodeSelector: {kubernetes.io/hostname: h100-2}\n", true},
  }));
  CAPTURE(uuid, extra);
  const auto v = with_claim(R"(    requests:
    - name: g
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].uuid == ')" +
                            uuid + R"('"}}]
)");
  const auto r = check(pod(extra), gpuadmit::test::policy_with(""), &v);
  CHECK(messages_of(r, "dra-claims").empty() == allowed);
}

TEST_CASE("matchAttribute holds only on the group whose parents allow it", "[device-groups]") {
  auto [count, allowed] = GENERATE(table<int, bool>({{2, true}, {3, true}, {4, false}}));
  CAPTURE(count);
  const auto v = with_claim(R"(    requests:
    - name: m
      exactly: {deviceClassName: mig.nvidia.com, count: )" +
                            std::to_string(count) + R"(}
    constraints: [{matchAttribute: gpu.nvidia.com/parentUUID}]
)");
  const auto r = check(pod(), gpuadmit::test::policy_with(""), &v);
  CHECK(messages_of(r, "dra-claims").empty() == allowed);
}

TEST_CASE("node-fit weighs a DRA pod's cpu against the nodes that have its devices", "[device-groups]") {
  auto [cpu, fragment] = GENERATE(table<std::string, std::string>({
      {"8", ""},
      {"200",
       "no node can run this pod: 8 nodes have no device the claims could have; 5 nodes have 96 cpu, the pod "
       "asks for 200"},
  }));
  CAPTURE(cpu);
  const auto v = with_claim(R"y(    requests:
    - name: g
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"}}]
)y");
  const auto r = check(pod("", cpu), gpuadmit::test::policy_with(""), &v);
  const std::string text = messages_of(r, "node-fit");
  if (fragment.empty()) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(fragment));
  }
}
