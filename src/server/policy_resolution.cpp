#include "gpuadmit/server/policy_resolution.hpp"

#include <algorithm>

#include "gpuadmit/config/policy_loader.hpp"

namespace gpuadmit::server {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxStatusMessageBytes = 2000;

std::string object_meta(const json& object, const char* field) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return {};
  const auto v = m->find(field);
  return v != m->end() && v->is_string() ? v->get<std::string>() : std::string();
}

std::int64_t object_generation(const json& object) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return 0;
  const auto g = m->find("generation");
  return g != m->end() && g->is_number_integer() ? g->get<std::int64_t>() : 0;
}

std::string object_key(const json& object) {
  return object.value("kind", std::string()) + "/" + object_meta(object, "namespace") + "/" +
         object_meta(object, "name");
}

// What a status says, before the bookkeeping fields.
struct StatusVerdict {
  bool active = false;  // some version of this object is in force
  bool ready = false;   // this object_generation is the one in force
  std::string reason;
  std::string message;
};

std::string bounded_message(std::string text) {
  if (text.size() > kMaxStatusMessageBytes) text = text.substr(0, kMaxStatusMessageBytes - 3) + "...";
  return text;
}

std::string one_line_problems(const std::string& errors) {
  std::string out = errors;
  std::replace(out.begin(), out.end(), '\n', ';');
  return out;
}

const json* ready_condition_of(const json& status) {
  const auto conditions = status.find("conditions");
  if (conditions == status.end() || !conditions->is_array()) return nullptr;
  for (const json& c : *conditions) {
    if (c.is_object() && c.value("type", std::string()) == "Ready") return &c;
  }
  return nullptr;
}

// Whether two statuses say the same, times aside: a replica that computes what another already wrote
// writes nothing (and the MODIFIED event of a write does not start an endless round of writes).
bool same_status_meaning(const json& a, const json& b) {
  const auto strip = [](json s) {
    if (!s.is_object()) return json();
    s.erase("loadedAt");
    if (s.contains("conditions") && s["conditions"].is_array()) {
      for (json& c : s["conditions"]) {
        if (c.is_object()) c.erase("lastTransitionTime");
      }
    }
    return s;
  };
  return strip(a) == strip(b);
}

void record_status(const json& object, const StatusVerdict& v, const std::string& now,
                   std::vector<StatusUpdate>& out) {
  const json old =
      object.contains("status") && object["status"].is_object() ? object["status"] : json::object();
  const std::int64_t gen = object_generation(object);
  const std::string status_text = v.ready ? "True" : "False";
  json condition = {{"type", "Ready"},
                    {"status", status_text},
                    {"reason", v.reason},
                    {"message", bounded_message(v.message)},
                    {"observedGeneration", gen}};
  const json* previous = ready_condition_of(old);
  condition["lastTransitionTime"] = previous != nullptr &&
                                            previous->value("status", std::string()) == status_text &&
                                            previous->contains("lastTransitionTime")
                                        ? (*previous)["lastTransitionTime"]
                                        : json(now);
  json status = {{"active", v.active}, {"observedGeneration", gen}, {"conditions", json::array({condition})}};
  const bool loaded_before = old.value("active", false) &&
                             old.value("observedGeneration", std::int64_t{-1}) == gen &&
                             old.contains("loadedAt");
  if (v.ready) {
    status["loadedAt"] = loaded_before ? old["loadedAt"] : json(now);
  } else if (old.contains("loadedAt")) {
    status["loadedAt"] = old["loadedAt"];
  }
  if (!same_status_meaning(old, status)) out.push_back({object, std::move(status)});
}

// The last valid version of `object`, read with `read`; null when there is none or it no longer loads.
template <typename Read>
std::optional<policy::RuleSet> last_valid_rules_of(const LastValid& last_valid, const std::string& key,
                                                   const Read& read, std::int64_t* gen) {
  const auto it = last_valid.find(key);
  if (it == last_valid.end()) return std::nullopt;
  auto rules = read(it->second);
  if (!rules) return std::nullopt;
  *gen = object_generation(it->second);
  return std::move(*rules);
}

// The GPUPolicies of one namespace, oldest first (creationTimestamp is RFC 3339 in UTC: text order is time
// order), then by name.
std::map<std::string, std::vector<const json*>> policies_by_namespace(const std::vector<json>& objects) {
  std::map<std::string, std::vector<const json*>> out;
  for (const json& o : objects) out[object_meta(o, "namespace")].push_back(&o);
  for (auto& [ns, list] : out) {
    std::sort(list.begin(), list.end(), [](const json* a, const json* b) {
      return std::pair(object_meta(*a, "creationTimestamp"), object_meta(*a, "name")) <
             std::pair(object_meta(*b, "creationTimestamp"), object_meta(*b, "name"));
    });
  }
  return out;
}

}  // namespace

namespace {

// One object's policy, or when this version does not load, its last valid version's: the rules in force
// (none when neither loads) and the status that says so. `where` ends the messages ("for the whole
// cluster", "in namespace team-a"), `otherwise` says what applies when nothing of it does.
template <typename Read>
std::optional<policy::RuleSet> resolve_policy_object(const json& object, const Read& read,
                                                     const LastValid& last_valid, LastValid& kept,
                                                     const std::string& where, const std::string& otherwise,
                                                     const std::string& now,
                                                     std::vector<StatusUpdate>& updates,
                                                     std::int64_t* in_force_gen) {
  const std::string key = object_key(object);
  auto loaded = read(object);
  if (loaded) {
    kept[key] = object;
    *in_force_gen = object_generation(object);
    record_status(object, {true, true, "Loaded", "in force " + where}, now, updates);
    return std::move(*loaded);
  }
  const std::string problems = one_line_problems(loaded.error().message);
  std::int64_t previous_gen = 0;
  if (auto previous = last_valid_rules_of(last_valid, key, read, &previous_gen)) {
    kept[key] = last_valid.at(key);
    *in_force_gen = previous_gen;
    record_status(object,
                  {true, false, "Invalid",
                   problems + ". The last valid version (generation " + std::to_string(previous_gen) +
                       ") stays in force " + where + "."},
                  now, updates);
    return previous;
  }
  record_status(object, {false, false, "Invalid", problems + ". " + otherwise}, now, updates);
  return std::nullopt;
}

void resolve_cluster_policies(const ResolutionInput& input, const std::vector<json>& objects,
                              const LastValid& last_valid, LastValid& kept, Resolution& out) {
  for (const json& object : objects) {
    const std::string name = object_meta(object, "name");
    if (name != input.cluster_policy_name) {
      record_status(
          object,
          {false, false, "NotSelected",
           "gpuadmit enforces the ClusterGPUPolicy named \"" + input.cluster_policy_name +
               "\" (serve --cluster-policy-name, the chart's policyObjects.clusterPolicyName); this one is "
               "not in force"},
          input.now, out.updates);
      continue;
    }
    const auto read = [](const json& o) { return config::load_policy_object(o); };
    std::int64_t gen = 0;
    auto rules = resolve_policy_object(object, read, last_valid, kept, "for the whole cluster",
                                       "The " + input.fallback_source + " stays in force.", input.now,
                                       out.updates, &gen);
    if (rules) {
      out.policies.cluster = std::make_shared<const policy::RuleSet>(std::move(*rules));
      out.source = "ClusterGPUPolicy/" + name + " (generation " + std::to_string(gen) + ")";
    }
  }
}

void resolve_namespace_policies(const ResolutionInput& input, const std::vector<json>& objects,
                                const LastValid& last_valid, LastValid& kept, Resolution& out) {
  const policy::RuleSet& cluster_rules = *out.policies.cluster;
  const auto read = [&](const json& o) { return config::load_policy_object(o, &cluster_rules); };
  for (const auto& [ns, list] : policies_by_namespace(objects)) {
    const json& chosen = *list.front();
    for (std::size_t i = 1; i < list.size(); ++i) {
      record_status(
          *list[i],
          {false, false, "Superseded",
           "GPUPolicy " + ns + "/" + object_meta(chosen, "name") +
               " is older and is the one in force in this namespace: one GPUPolicy per namespace applies"},
          input.now, out.updates);
    }
    std::int64_t gen = 0;
    auto rules = resolve_policy_object(
        chosen, read, last_valid, kept, "in namespace " + ns + " (over " + out.source + ")",
        "The cluster policy (" + out.source + ") applies in namespace " + ns + ".", input.now, out.updates,
        &gen);
    if (rules) out.policies.namespaces[ns] = std::make_shared<const policy::RuleSet>(std::move(*rules));
  }
}

}  // namespace

Resolution resolve_policies(const ResolutionInput& input, LastValid& last_valid) {
  static const std::vector<json> kNone;
  Resolution out;
  out.policies.cluster = input.fallback;
  out.source = input.fallback_source;
  LastValid kept;  // last_valid, pruned to the objects that still exist
  resolve_cluster_policies(input, input.cluster != nullptr ? *input.cluster : kNone, last_valid, kept, out);
  resolve_namespace_policies(input, input.namespaced != nullptr ? *input.namespaced : kNone, last_valid, kept,
                             out);
  last_valid = std::move(kept);
  return out;
}

std::vector<std::string> policy_object_problems(const json& object, const policy::RuleSet& cluster) {
  auto loaded = config::load_policy_object(object, &cluster);
  if (loaded) return {};
  // The denial names the object already: each problem keeps its field path only.
  const std::string ns = object_meta(object, "namespace");
  const std::string prefix = object.value("kind", std::string()) + (ns.empty() ? "/" : " " + ns + "/") +
                             object_meta(object, "name") + ": ";
  std::vector<std::string> problems;
  const std::string& text = loaded.error().message;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    if (!line.empty()) problems.push_back(std::move(line));
    start = end + 1;
  }
  return problems;
}

}  // namespace gpuadmit::server
