#include "gpuadmit/config/policy_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <sstream>

#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/policy/catalogue.hpp"
#include "presets_reader.hpp"
#include "workloads_reader.hpp"
#include "yaml_load.hpp"
#include "yaml_reader.hpp"

namespace gpuadmit::config {
namespace {

using policy::Action;
using policy::RuleSet;

constexpr std::size_t kMaxPolicyBytes = 1024 * 1024;

void read_tolerations(YamlReader& r, const YAML::Node& node, const std::string& path,
                      std::vector<k8s::Toleration>& out) {
  if (!node.IsSequence()) {
    r.error(node, path, "expected a list of tolerations");
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const YAML::Node t = node[i];
    if (!r.map(t, p, {"key", "operator", "value", "effect", "tolerationSeconds"})) continue;
    k8s::Toleration toleration;
    if (t["key"]) assign(toleration.key, r.string(t["key"], p + ".key"));
    toleration.op = "Equal";
    if (t["operator"]) {
      assign(toleration.op, r.one_of<std::string>(t["operator"], p + ".operator",
                                                  {{"Exists", "Exists"}, {"Equal", "Equal"}}));
    }
    if (t["value"]) assign(toleration.value, r.string(t["value"], p + ".value"));
    if (t["effect"]) {
      assign(toleration.effect, r.one_of<std::string>(t["effect"], p + ".effect",
                                                      {{"NoSchedule", "NoSchedule"},
                                                       {"PreferNoSchedule", "PreferNoSchedule"},
                                                       {"NoExecute", "NoExecute"}}));
    }
    if (t["tolerationSeconds"]) {
      if (auto s = r.integer(t["tolerationSeconds"], p + ".tolerationSeconds", 0, 1LL << 40))
        toleration.toleration_seconds = *s;
    }
    if (toleration.op == "Exists" && !toleration.value.empty()) {
      r.error(t, p, "a toleration with operator Exists must not have a value");
    }
    if (toleration.key.empty() && toleration.op != "Exists") {
      r.error(t, p, "a toleration without a key must use operator Exists");
    }
    out.push_back(std::move(toleration));
  }
}

// What a GPUPolicy may set in a rule besides a stricter action: the parameters where a higher value asks
// more of a pod (the memory a GPU pod must hold, the checkpoint space a claim must have). The other
// parameters choose how a fix is made or what a rule matches; a namespace that changed them could loosen the
// cluster policy, so they stay the cluster's.
constexpr std::array<std::string_view, 3> kMemoryFloors{"overhead", "perGpu", "safetyPercent"};
constexpr std::array<std::string_view, 3> kCheckpointFloors{"minimum", "checkpointsKept", "headroomPercent"};

std::span<const std::string_view> floors_of(std::string_view rule) {
  if (rule == "memory-floor") return kMemoryFloors;
  if (rule == "checkpoint-pvc") return kCheckpointFloors;
  return {};
}

// A rule's settings (spec.rules.<id>) as the rule's own reader asks for them (policy::ParameterReader). The
// keys it asks for are the keys allowed: the others are reported, before the problems with the values, as a
// mapping's unknown keys always are.
class YamlParameters final : public policy::ParameterReader {
 public:
  // `floors`: null for a policy; for a GPUPolicy, the parameters it may raise (every other setting but
  // the action is refused, and the action may only get stricter). The values read onto are the cluster's.
  YamlParameters(YamlReader& r, YAML::Node node, std::string path,
                 const std::span<const std::string_view>* floors = nullptr)
      : r_(r),
        node_(std::move(node)),
        path_(std::move(path)),
        first_error_(r.errors().size()),
        floors_(floors) {}
  YamlParameters(const YamlParameters&) = delete;
  YamlParameters& operator=(const YamlParameters&) = delete;
  YamlParameters(YamlParameters&&) = delete;
  YamlParameters& operator=(YamlParameters&&) = delete;
  ~YamlParameters() override = default;

  // Reports the keys nothing asked for, and those of the sections, at the place a mapping check would.
  void check_keys() {
    std::vector<std::string> unknown;
    for (const auto& entry : node_) {
      if (std::find(asked_.begin(), asked_.end(), entry.first.Scalar()) == asked_.end()) {
        unknown.push_back(r_.unknown_key(entry.first, path_, asked_));
      }
    }
    // The sections' first: their errors come after this mapping's first one, so inserting this mapping's
    // unknown keys afterwards leaves them where they belong.
    for (auto section = sections_.rbegin(); section != sections_.rend(); ++section) (*section)->check_keys();
    r_.insert_errors(first_error_, unknown);
  }

  void action(std::string_view key, Action& out) override {
    const YAML::Node n = child(key);
    if (!n) return;
    const Action cluster = out;
    assign(out, r_.action(n, path_of(key)));
    if (floors_ != nullptr && out < cluster) {
      r_.error(n, path_of(key),
               std::string(policy::to_string(out)) + " is looser than the cluster policy's " +
                   std::string(policy::to_string(cluster)) + "; a GPUPolicy may only make a rule stricter");
      out = cluster;
    }
  }
  void quantity(std::string_view key, k8s::Quantity& out) override {
    const YAML::Node n = floor(key);
    if (!n) return;
    const k8s::Quantity cluster = out;
    assign(out, r_.quantity(n, path_of(key)));
    if (floors_ != nullptr && out < cluster) {
      below_cluster(n, key, n.Scalar(), cluster.to_string());
      out = cluster;
    }
  }
  void integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) override {
    const YAML::Node n = floor(key);
    if (!n) return;
    const std::int64_t cluster = out;
    assign(out, r_.integer(n, path_of(key), min, max));
    if (floors_ != nullptr && out < cluster) {
      below_cluster(n, key, n.Scalar(), std::to_string(cluster));
      out = cluster;
    }
  }
  void string(std::string_view key, std::string& out) override {
    if (const YAML::Node n = settable(key)) assign(out, r_.string(n, path_of(key)));
  }
  void strings(std::string_view key, std::vector<std::string>& out) override {
    if (const YAML::Node n = settable(key)) out = r_.strings(n, path_of(key));
  }
  void string_map(std::string_view key, std::string_view what, k8s::StringMap& out) override {
    const YAML::Node n = settable(key);
    if (!n) return;
    out.clear();
    r_.string_map(n, path_of(key), what, out);
  }
  void string_lists(std::string_view key, std::string_view what, policy::StringLists& out) override {
    const YAML::Node n = settable(key);
    if (!n) return;
    if (!n.IsMap()) return r_.error(n, path_of(key), "expected a mapping of " + std::string(what));
    out.clear();
    for (const auto& e : n)
      out[e.first.Scalar()] = r_.strings(e.second, path_of(key) + "." + e.first.Scalar());
  }
  void tolerations(std::string_view key, std::vector<k8s::Toleration>& out) override {
    if (const YAML::Node n = settable(key)) read_tolerations(r_, n, path_of(key), out);
  }
  std::optional<std::size_t> one_of(std::string_view key, std::span<const std::string_view> names) override {
    const YAML::Node n = settable(key);
    if (!n) return std::nullopt;
    return r_.choice(n, path_of(key), names);
  }
  ParameterReader* section(std::string_view key) override {
    const YAML::Node n = settable(key);
    if (!n) return nullptr;
    if (!n.IsMap()) {
      r_.error(n, path_of(key), "expected a mapping");
      return nullptr;
    }
    return sections_.emplace_back(std::make_unique<YamlParameters>(r_, n, path_of(key))).get();
  }
  void error(std::string what) override { r_.error(node_, path_, what); }

 private:
  YAML::Node child(std::string_view key) {
    asked_.push_back(key);
    const YAML::Node& node = node_;  // the const lookup adds no member for an absent key
    return node[std::string(key)];
  }
  [[nodiscard]] std::string path_of(std::string_view key) const { return path_ + "." + std::string(key); }

  // child(), for a setting a GPUPolicy leaves to the cluster policy: there, present is an error (and the
  // value is not read).
  YAML::Node settable(std::string_view key) {
    YAML::Node n = child(key);
    if (n && floors_ != nullptr) {
      std::string what = "a GPUPolicy may set only action";
      what += floors_->empty() ? std::string(" here") : " and the floors " + comma_list(*floors_) + " here";
      r_.error(n, path_of(key), what + "; " + std::string(key) + " is the cluster policy's");
      return YAML::Node(YAML::NodeType::Undefined);  // a default Node is a defined null
    }
    return n;
  }
  // settable() for a number, which a GPUPolicy may set when it is one of the rule's floors.
  YAML::Node floor(std::string_view key) {
    if (floors_ == nullptr || std::find(floors_->begin(), floors_->end(), key) != floors_->end())
      return child(key);
    return settable(key);
  }
  void below_cluster(const YAML::Node& n, std::string_view key, const std::string& value,
                     const std::string& cluster) {
    r_.error(n, path_of(key),
             value + " is below the cluster policy's " + cluster + "; a GPUPolicy may only raise a floor");
  }

  YamlReader& r_;
  YAML::Node node_;
  std::string path_;
  std::size_t first_error_;
  std::vector<std::string_view> asked_;  // the rule's own key names (literals)
  std::vector<std::unique_ptr<YamlParameters>> sections_;
  const std::span<const std::string_view>* floors_;
};

// `tighten`: the rules of a GPUPolicy, read onto the cluster policy's (YamlParameters).
void read_rule(YamlReader& r, const policy::RuleEntry& rule, const YAML::Node& node, RuleSet& rules,
               bool tighten) {
  const std::string path = "spec.rules." + std::string(rule.id);
  if (!node.IsMap()) return r.error(node, path, "expected a mapping");
  const std::span<const std::string_view> floors = floors_of(rule.id);
  YamlParameters parameters(r, node, path, tighten ? &floors : nullptr);
  rule.read(parameters, rules);
  parameters.check_keys();
}

void read_gpu_resources(YamlReader& r, const YAML::Node& node, RuleSet& rules) {
  rules.gpu_resources = r.strings(node, "spec.gpuResources");
  for (std::size_t i = 0; i < rules.gpu_resources.size(); ++i) {
    const std::string& name = rules.gpu_resources[i];
    if (name.empty() || name.find('/') == std::string::npos || name.find('*') < name.size() - 1) {
      r.error(node[i], "spec.gpuResources[" + std::to_string(i) + "]",
              "expected an extended resource name such as nvidia.com/gpu, optionally ending in * "
              "(nvidia.com/mig-*)");
    }
  }
}

void read_rules(YamlReader& r, const YAML::Node& node, RuleSet& rules, bool tighten) {
  if (!node.IsMap()) {
    r.error(node, "spec.rules", "expected a mapping of rule id to its settings");
    return;
  }
  for (const auto& entry : node) {
    const std::string id = entry.first.Scalar();
    const policy::RuleEntry* rule = policy::find_rule(id);
    if (rule == nullptr) {
      r.error(entry.first, "spec.rules",
              "unknown rule \"" + id + "\" (known rules: " + policy::rule_id_list() + ")");
      continue;
    }
    read_rule(r, *rule, entry.second, rules, tighten);
  }
}

void read_policy(YamlReader& r, const YAML::Node& root, const nlohmann::json& root_json, RuleSet& rules,
                 bool tighten) {
  if (!r.map(root, "policy", {"apiVersion", "kind", "metadata", "spec"})) return;
  if (!root["apiVersion"] || root["apiVersion"].Scalar() != "gpuadmit.io/v1alpha1") {
    r.error(root["apiVersion"] ? root["apiVersion"] : root, "apiVersion", "expected gpuadmit.io/v1alpha1");
  }
  if (!root["kind"] || root["kind"].Scalar() != "Policy") {
    r.error(root["kind"] ? root["kind"] : root, "kind", "expected Policy");
  }
  if (const YAML::Node meta = root["metadata"]) r.map(meta, "metadata", {"name", "labels", "annotations"});
  const YAML::Node spec = root["spec"];
  if (!spec) return;  // an empty policy is the default policy
  if (!r.map(spec, "spec",
             {"gpuResources", "excludedNamespaces", "cluster", "rules", "presets", "workloads"}))
    return;
  const nlohmann::json* spec_json = root_json.contains("spec") ? &root_json["spec"] : nullptr;
  if (spec["presets"]) {
    read_presets(r, spec["presets"],
                 spec_json != nullptr && spec_json->contains("presets") ? &(*spec_json)["presets"] : nullptr,
                 rules);
  }
  if (spec["workloads"]) read_workloads(r, spec["workloads"], rules);
  if (const YAML::Node cluster = spec["cluster"]) {
    if (r.map(cluster, "spec.cluster", {"onStale"}) && cluster["onStale"]) {
      assign(rules.on_stale_cluster, r.one_of<policy::OnStale>(cluster["onStale"], "spec.cluster.onStale",
                                                               {{"warn", policy::OnStale::kWarn},
                                                                {"enforce", policy::OnStale::kEnforce},
                                                                {"skip", policy::OnStale::kSkip}}));
    }
  }
  if (spec["gpuResources"]) read_gpu_resources(r, spec["gpuResources"], rules);
  if (spec["excludedNamespaces"]) {
    rules.excluded_namespaces = r.strings(spec["excludedNamespaces"], "spec.excludedNamespaces");
  }
  if (spec["rules"]) read_rules(r, spec["rules"], rules, tighten);
}

// `base`: the rules read onto (the defaults for a policy); `tighten`: a GPUPolicy's, onto the cluster's.
Result<RuleSet> load_policy_text(std::string_view yaml, std::string_view source_name, bool marks,
                                 const RuleSet& base = RuleSet{}, bool tighten = false) {
  if (yaml.size() > kMaxPolicyBytes) {
    return make_error(std::string(source_name) + ": policy of " + std::to_string(yaml.size()) +
                      " bytes exceeds the limit of " + std::to_string(kMaxPolicyBytes) + " bytes");
  }
  // Size and nesting limits first (shared with manifests); then the schema walk on yaml-cpp's tree.
  auto loaded = load_documents(yaml, source_name);
  if (!loaded) return loaded.error();
  RuleSet rules = base;
  YamlReader reader(source_name, marks);
  try {
    const std::vector<YAML::Node>& documents = loaded->nodes;
    if (documents.size() != 1) {
      return make_error(std::string(source_name) + ": expected exactly one YAML document, found " +
                        std::to_string(documents.size()));
    }
    // Presets carry Kubernetes objects (env, volumes, tolerations): their JSON comes from the same text, read
    // with kubectl's scalar rules.
    static const nlohmann::json kNone = nlohmann::json::object();
    const std::vector<Document>& bounded = loaded->documents;
    read_policy(reader, documents.front(), bounded.empty() ? kNone : bounded.front().object, rules, tighten);
  } catch (const YAML::Exception& e) {
    return make_error(std::string(source_name) + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!reader.errors().empty()) {
    std::string message;
    for (const std::string& e : reader.errors()) message += (message.empty() ? "" : "\n") + e;
    return make_error(message);
  }
  return rules;
}

}  // namespace

Result<RuleSet> load_policy(std::string_view yaml, std::string_view source_name) {
  return load_policy_text(yaml, source_name, true);
}

Result<RuleSet> load_policy_object(const nlohmann::json& object, const RuleSet* cluster) {
  if (!object.is_object()) return make_error("a policy object is a mapping");
  const std::string kind = object.value("kind", std::string());
  const nlohmann::json metadata = object.value("metadata", nlohmann::json::object());
  const std::string name = metadata.is_object() ? metadata.value("name", std::string()) : std::string();
  const std::string ns = metadata.is_object() ? metadata.value("namespace", std::string()) : std::string();
  const std::string source = ns.empty() ? kind + "/" + name : kind + " " + ns + "/" + name;
  if (object.value("apiVersion", std::string()) != "gpuadmit.io/v1alpha1" ||
      (kind != "ClusterGPUPolicy" && kind != "GPUPolicy")) {
    return make_error(source +
                      ": expected apiVersion gpuadmit.io/v1alpha1 and kind ClusterGPUPolicy or GPUPolicy");
  }
  nlohmann::json spec = object.value("spec", nlohmann::json::object());
  const bool team = kind == "GPUPolicy";
  if (team && spec.is_object()) {
    for (const auto& [key, value] : spec.items()) {
      if (key != "rules") return make_error(source + ": spec." + key + ": a GPUPolicy sets rules only");
    }
  }
  // The object as a policy file would hold it (the server's metadata left out), read by the same loader.
  const nlohmann::json policy = {{"apiVersion", "gpuadmit.io/v1alpha1"},
                                 {"kind", "Policy"},
                                 {"metadata", {{"name", name}}},
                                 {"spec", std::move(spec)}};
  if (!team) return load_policy_text(to_yaml(policy), source, false);
  return load_policy_text(to_yaml(policy), source, false, cluster != nullptr ? *cluster : default_rule_set(),
                          true);
}

Result<RuleSet> load_policy_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(path + ": cannot open the policy file");
  std::string text;
  text.resize(kMaxPolicyBytes + 1);
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return load_policy(text, path);
}

const RuleSet& default_rule_set() {
  static const RuleSet kRules = [] {
    auto loaded = load_policy(default_policy_yaml(), "<embedded default policy>");
    // The embedded text is tested to load; if a build ever broke it, the struct defaults are the same policy.
    return loaded ? *loaded : RuleSet{};
  }();
  return kRules;
}

}  // namespace gpuadmit::config
