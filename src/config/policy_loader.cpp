#include "gpuadmit/config/policy_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/policy/catalogue.hpp"

namespace gpuadmit::config {
namespace {

using policy::Action;
using policy::RuleSet;

constexpr std::size_t kMaxPolicyBytes = 1024 * 1024;

// Walks the YAML tree and collects every problem with its position; never stops at the first.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  void error(const YAML::Node& node, const std::string& path, const std::string& what) {
    errors_.push_back(located(node, path, what));
  }
  [[nodiscard]] std::string located(const YAML::Node& node, const std::string& path,
                                    const std::string& what) const {
    const YAML::Mark mark = node.Mark();
    return std::string(source_) + ":" + std::to_string(mark.line + 1) + ":" +
           std::to_string(mark.column + 1) + ": " + path + ": " + what;
  }
  // Errors found after the ones that follow them in the file's reading order (a mapping's unknown keys).
  void insert_errors(std::size_t at, const std::vector<std::string>& errors) {
    errors_.insert(errors_.begin() + static_cast<std::ptrdiff_t>(at), errors.begin(), errors.end());
  }

  // Checks the node is a map whose keys are all in `allowed`; returns false (and reports) otherwise.
  bool map(const YAML::Node& node, const std::string& path, std::initializer_list<std::string_view> allowed) {
    if (!node.IsMap()) {
      error(node, path, "expected a mapping");
      return false;
    }
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        error(entry.first, path, "unknown key \"" + key + "\" (expected one of: " + list + ")");
      }
    }
    return true;
  }

  std::optional<std::string> string(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) {
      error(node, path, "expected a string");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::vector<std::string> strings(const YAML::Node& node, const std::string& path) {
    std::vector<std::string> out;
    if (!node.IsSequence()) {
      error(node, path, "expected a list of strings");
      return out;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (auto s = string(node[i], path + "[" + std::to_string(i) + "]")) out.push_back(*s);
    }
    return out;
  }

  std::optional<k8s::Quantity> quantity(const YAML::Node& node, const std::string& path,
                                        bool positive = true) {
    auto text = string(node, path);
    if (!text) return std::nullopt;
    auto q = k8s::Quantity::parse(*text);
    if (!q) {
      error(node, path, "expected a quantity such as 8, 500m or 32Gi: " + q.error().message);
      return std::nullopt;
    }
    if (positive && !(*q > k8s::Quantity{})) {
      error(node, path, "expected a quantity greater than zero, got " + *text);
      return std::nullopt;
    }
    return *q;
  }

  std::optional<std::int64_t> integer(const YAML::Node& node, const std::string& path, std::int64_t min,
                                      std::int64_t max) {
    if (node.IsScalar()) {
      try {
        const auto value = node.as<std::int64_t>();
        if (value >= min && value <= max) return value;
      } catch (const YAML::Exception&) {
      }
    }
    error(node, path, "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }

  template <typename Enum>
  std::optional<Enum> one_of(const YAML::Node& node, const std::string& path,
                             std::initializer_list<std::pair<std::string_view, Enum>> choices) {
    auto text = string(node, path);
    if (!text) return std::nullopt;
    for (const auto& [name, value] : choices) {
      if (*text == name) return value;
    }
    std::string list;
    for (const auto& choice : choices) list += (list.empty() ? "" : ", ") + std::string(choice.first);
    error(node, path, "expected one of " + list + ", got \"" + *text + "\"");
    return std::nullopt;
  }

  std::optional<Action> action(const YAML::Node& node, const std::string& path) {
    return one_of<Action>(node, path,
                          {{"enforce", Action::kEnforce},
                           {"warn", Action::kWarn},
                           {"audit", Action::kAudit},
                           {"off", Action::kOff}});
  }

  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::string_view source_;
  std::vector<std::string> errors_;
};

template <typename T>
void assign(T& target, std::optional<T> value) {
  if (value) target = std::move(*value);
}

void read_tolerations(Reader& r, const YAML::Node& node, const std::string& path,
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

// A rule's settings (spec.rules.<id>) as the rule's own reader asks for them (policy::ParameterReader). The
// keys it asks for are the keys allowed: the others are reported, before the problems with the values, as a
// mapping's unknown keys always are.
class YamlParameters final : public policy::ParameterReader {
 public:
  YamlParameters(Reader& r, YAML::Node node, std::string path)
      : r_(r), node_(std::move(node)), path_(std::move(path)), first_error_(r.errors().size()) {}
  YamlParameters(const YamlParameters&) = delete;
  YamlParameters& operator=(const YamlParameters&) = delete;
  YamlParameters(YamlParameters&&) = delete;
  YamlParameters& operator=(YamlParameters&&) = delete;
  ~YamlParameters() override = default;

  // Reports the keys nothing asked for, and those of the sections, at the place a mapping check would.
  void check_keys() {
    std::vector<std::string> unknown;
    std::string list;
    for (const std::string_view key : asked_) list += (list.empty() ? "" : ", ") + std::string(key);
    for (const auto& entry : node_) {
      const std::string key = entry.first.Scalar();
      if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) {
        unknown.push_back(
            r_.located(entry.first, path_, "unknown key \"" + key + "\" (expected one of: " + list + ")"));
      }
    }
    // The sections' first: their errors come after this mapping's first one, so inserting this mapping's
    // unknown keys afterwards leaves them where they belong.
    for (auto section = sections_.rbegin(); section != sections_.rend(); ++section) (*section)->check_keys();
    r_.insert_errors(first_error_, unknown);
  }

  void action(std::string_view key, Action& out) override {
    if (const YAML::Node n = child(key)) assign(out, r_.action(n, path_of(key)));
  }
  void quantity(std::string_view key, k8s::Quantity& out) override {
    if (const YAML::Node n = child(key)) assign(out, r_.quantity(n, path_of(key)));
  }
  void integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) override {
    if (const YAML::Node n = child(key)) assign(out, r_.integer(n, path_of(key), min, max));
  }
  void string(std::string_view key, std::string& out) override {
    if (const YAML::Node n = child(key)) assign(out, r_.string(n, path_of(key)));
  }
  void strings(std::string_view key, std::vector<std::string>& out) override {
    if (const YAML::Node n = child(key)) out = r_.strings(n, path_of(key));
  }
  void string_map(std::string_view key, std::string_view what, k8s::StringMap& out) override {
    const YAML::Node n = child(key);
    if (!n) return;
    out.clear();
    if (!n.IsMap()) return r_.error(n, path_of(key), "expected a mapping of " + std::string(what));
    for (const auto& e : n) {
      if (auto v = r_.string(e.second, path_of(key) + "." + e.first.Scalar())) out[e.first.Scalar()] = *v;
    }
  }
  void string_lists(std::string_view key, std::string_view what, policy::StringLists& out) override {
    const YAML::Node n = child(key);
    if (!n) return;
    if (!n.IsMap()) return r_.error(n, path_of(key), "expected a mapping of " + std::string(what));
    out.clear();
    for (const auto& e : n)
      out[e.first.Scalar()] = r_.strings(e.second, path_of(key) + "." + e.first.Scalar());
  }
  void tolerations(std::string_view key, std::vector<k8s::Toleration>& out) override {
    if (const YAML::Node n = child(key)) read_tolerations(r_, n, path_of(key), out);
  }
  std::optional<std::size_t> one_of(std::string_view key, std::span<const std::string_view> names) override {
    const YAML::Node n = child(key);
    if (!n) return std::nullopt;
    auto text = r_.string(n, path_of(key));
    if (!text) return std::nullopt;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (*text == names[i]) return i;
    }
    std::string list;
    for (const std::string_view name : names) list += (list.empty() ? "" : ", ") + std::string(name);
    r_.error(n, path_of(key), "expected one of " + list + ", got \"" + *text + "\"");
    return std::nullopt;
  }
  ParameterReader* section(std::string_view key) override {
    const YAML::Node n = child(key);
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

  Reader& r_;
  YAML::Node node_;
  std::string path_;
  std::size_t first_error_;
  std::vector<std::string_view> asked_;  // the rule's own key names (literals)
  std::vector<std::unique_ptr<YamlParameters>> sections_;
};

void read_rule(Reader& r, const policy::RuleEntry& rule, const YAML::Node& node, RuleSet& rules) {
  const std::string path = "spec.rules." + std::string(rule.id);
  if (!node.IsMap()) return r.error(node, path, "expected a mapping");
  YamlParameters parameters(r, node, path);
  rule.read(parameters, rules);
  parameters.check_keys();
}

void read_string_map(Reader& r, const YAML::Node& node, const std::string& path, k8s::StringMap& out) {
  if (!node.IsMap()) {
    r.error(node, path, "expected a mapping of strings");
    return;
  }
  for (const auto& e : node) {
    if (auto v = r.string(e.second, path + "." + e.first.Scalar())) out[e.first.Scalar()] = *v;
  }
}

// A list of Kubernetes objects taken as they are (env entries, volumes, mounts, tolerations), each with the
// member that identifies it.
void read_object_list(Reader& r, const YAML::Node& node, const nlohmann::json* value, const std::string& path,
                      const char* identity, nlohmann::json& out) {
  if (!node.IsSequence() || value == nullptr || !value->is_array()) {
    r.error(node, path, "expected a list");
    return;
  }
  for (std::size_t i = 0; i < node.size() && i < value->size(); ++i) {
    const nlohmann::json& element = (*value)[i];
    const std::string p = path + "[" + std::to_string(i) + "]";
    if (!element.is_object()) {
      r.error(node[i], p, "expected a mapping");
    } else if (identity != nullptr && !(element.contains(identity) && element[identity].is_string())) {
      r.error(node[i], p, std::string("expected a string \"") + identity + "\"");
    } else {
      out.push_back(element);
    }
  }
}

void read_presets(Reader& r, const YAML::Node& node, const nlohmann::json* value, RuleSet& rules) {
  const std::string path = "spec.presets";
  if (!node.IsSequence() || value == nullptr || !value->is_array()) {
    r.error(node, path, "expected a list of presets");
    return;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const YAML::Node n = node[i];
    const nlohmann::json& v = (*value)[i];
    if (!r.map(n, p,
               {"name", "selector", "containers", "env", "resources", "tolerations", "nodeSelector",
                "volumes", "volumeMounts", "annotations"})) {
      continue;
    }
    policy::Preset preset;
    if (n["name"]) assign(preset.name, r.string(n["name"], p + ".name"));
    if (preset.name.empty())
      r.error(n, p, "every preset needs a name (it is what warnings and gpuadmit.io/applied show)");
    if (!names.insert(preset.name).second)
      r.error(n["name"], p + ".name", "another preset has the name " + preset.name);
    if (const YAML::Node sel = n["selector"]; sel && r.map(sel, p + ".selector", {"matchLabels", "gpu"})) {
      if (sel["matchLabels"])
        read_string_map(r, sel["matchLabels"], p + ".selector.matchLabels", preset.match_labels);
      if (sel["gpu"]) {
        assign(preset.gpu_only,
               r.one_of<bool>(sel["gpu"], p + ".selector.gpu", {{"true", true}, {"false", false}}));
      }
    }
    if (preset.match_labels.empty() && !preset.gpu_only) {
      r.error(n, p,
              "a preset needs a selector (matchLabels, or gpu: true): one without would apply to every pod");
    }
    if (n["containers"]) {
      assign(preset.all_containers,
             r.one_of<bool>(n["containers"], p + ".containers", {{"gpu", false}, {"all", true}}));
    }
    if (n["env"])
      read_object_list(r, n["env"], v.contains("env") ? &v["env"] : nullptr, p + ".env", "name", preset.env);
    if (const YAML::Node res = n["resources"]; res && r.map(res, p + ".resources", {"requests", "limits"})) {
      for (const char* kind : {"requests", "limits"}) {
        const YAML::Node list = res[kind];
        if (!list) continue;
        const std::string lp = p + ".resources." + kind;
        if (!list.IsMap()) {
          r.error(list, lp, "expected a mapping of resource name to quantity");
          continue;
        }
        for (const auto& e : list) {
          if (auto q = r.quantity(e.second, lp + "." + e.first.Scalar())) {
            (std::string_view(kind) == "requests" ? preset.requests : preset.limits)[e.first.Scalar()] = *q;
          }
        }
      }
    }
    if (n["tolerations"]) {
      read_object_list(r, n["tolerations"], v.contains("tolerations") ? &v["tolerations"] : nullptr,
                       p + ".tolerations", nullptr, preset.tolerations);
    }
    if (n["nodeSelector"]) read_string_map(r, n["nodeSelector"], p + ".nodeSelector", preset.node_selector);
    if (n["volumes"]) {
      read_object_list(r, n["volumes"], v.contains("volumes") ? &v["volumes"] : nullptr, p + ".volumes",
                       "name", preset.volumes);
    }
    if (n["volumeMounts"]) {
      read_object_list(r, n["volumeMounts"], v.contains("volumeMounts") ? &v["volumeMounts"] : nullptr,
                       p + ".volumeMounts", "mountPath", preset.volume_mounts);
      for (const nlohmann::json& mount : preset.volume_mounts) {
        if (!mount.contains("name"))
          r.error(n["volumeMounts"], p + ".volumeMounts", "every mount needs a volume name");
      }
    }
    if (n["annotations"]) read_string_map(r, n["annotations"], p + ".annotations", preset.annotations);
    rules.presets.presets.push_back(std::move(preset));
  }
}

void read_workloads(Reader& r, const YAML::Node& node, RuleSet& rules) {
  const std::string path = "spec.workloads";
  if (!node.IsSequence()) {
    r.error(node, path, "expected a list of workload kinds");
    return;
  }
  rules.workloads.clear();
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const YAML::Node n = node[i];
    if (!r.map(n, p, {"apiGroup", "kinds", "template", "replicas"})) continue;
    policy::WorkloadKind kind;
    if (n["apiGroup"]) assign(kind.api_group, r.string(n["apiGroup"], p + ".apiGroup"));
    if (n["kinds"]) kind.kinds = r.strings(n["kinds"], p + ".kinds");
    if (n["template"]) assign(kind.template_path, r.string(n["template"], p + ".template"));
    if (n["replicas"]) assign(kind.replicas, r.string(n["replicas"], p + ".replicas"));
    if (kind.kinds.empty()) r.error(n, p, "expected kinds: a list of at least one kind");
    for (const std::string& k : kind.kinds) {
      if (k == "Pod" || k == "PersistentVolumeClaim")
        r.error(n["kinds"], p + ".kinds", k + " is judged as itself, not as a workload");
    }
    if (kind.template_path.empty() || kind.template_path.front() == '.' || kind.template_path.back() == '.' ||
        kind.template_path.find("..") != std::string::npos) {
      r.error(n["template"] ? n["template"] : n, p + ".template",
              "expected the dotted path of the pod template, such as spec.template or "
              "spec.*ReplicaSpecs.*.template");
    }
    if (kind.replicas.find('.') != std::string::npos) {
      r.error(n["replicas"], p + ".replicas",
              "expected a member name of the template's parent, such as replicas");
    }
    rules.workloads.push_back(std::move(kind));
  }
}

void read_policy(Reader& r, const YAML::Node& root, const nlohmann::json& root_json, RuleSet& rules) {
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
  if (spec["gpuResources"]) {
    rules.gpu_resources = r.strings(spec["gpuResources"], "spec.gpuResources");
    for (std::size_t i = 0; i < rules.gpu_resources.size(); ++i) {
      const std::string& name = rules.gpu_resources[i];
      if (name.empty() || name.find('/') == std::string::npos || name.find('*') < name.size() - 1) {
        r.error(spec["gpuResources"][i], "spec.gpuResources[" + std::to_string(i) + "]",
                "expected an extended resource name such as nvidia.com/gpu, optionally ending in * "
                "(nvidia.com/mig-*)");
      }
    }
  }
  if (spec["excludedNamespaces"]) {
    rules.excluded_namespaces = r.strings(spec["excludedNamespaces"], "spec.excludedNamespaces");
  }
  const YAML::Node rule_nodes = spec["rules"];
  if (!rule_nodes) return;
  if (!rule_nodes.IsMap()) {
    r.error(rule_nodes, "spec.rules", "expected a mapping of rule id to its settings");
    return;
  }
  for (const auto& entry : rule_nodes) {
    const std::string id = entry.first.Scalar();
    const policy::RuleEntry* rule = policy::find_rule(id);
    if (rule == nullptr) {
      r.error(entry.first, "spec.rules",
              "unknown rule \"" + id + "\" (known rules: " + policy::rule_id_list() + ")");
      continue;
    }
    read_rule(r, *rule, entry.second, rules);
  }
}

}  // namespace

Result<RuleSet> load_policy(std::string_view yaml, std::string_view source_name) {
  if (yaml.size() > kMaxPolicyBytes) {
    return make_error(std::string(source_name) + ": policy of " + std::to_string(yaml.size()) +
                      " bytes exceeds the limit of " + std::to_string(kMaxPolicyBytes) + " bytes");
  }
  // Size and nesting limits first (shared with manifests); then the schema walk on yaml-cpp's tree.
  auto bounded = read_documents(yaml, source_name);
  if (!bounded) return bounded.error();
  RuleSet rules;
  Reader reader(source_name);
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(yaml));
    if (documents.size() != 1) {
      return make_error(std::string(source_name) + ": expected exactly one YAML document, found " +
                        std::to_string(documents.size()));
    }
    // Presets carry Kubernetes objects (env, volumes, tolerations): their JSON comes from the same text, read
    // with kubectl's scalar rules.
    static const nlohmann::json kNone = nlohmann::json::object();
    read_policy(reader, documents.front(), bounded->empty() ? kNone : bounded->front().object, rules);
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
