#include "presets_reader.hpp"

#include <set>
#include <string>

namespace gpuadmit::config {
namespace {

using policy::Preset;

// A list of Kubernetes objects taken as they are (env entries, volumes, mounts, tolerations), each with the
// member that identifies it.
void read_object_list(YamlReader& r, const YAML::Node& node, const nlohmann::json* value,
                      const std::string& path, const char* identity, nlohmann::json& out) {
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

// The preset's member `key` (at `p`), when it has one: read_object_list on its YAML and its JSON.
void read_objects(YamlReader& r, const YAML::Node& n, const nlohmann::json& v, const char* key,
                  const std::string& p, const char* identity, nlohmann::json& out) {
  if (const YAML::Node list = n[key]) {
    read_object_list(r, list, v.contains(key) ? &v[key] : nullptr, p + "." + key, identity, out);
  }
}

void read_selector(YamlReader& r, const YAML::Node& n, const std::string& p, Preset& preset) {
  if (const YAML::Node sel = n["selector"]; sel && r.map(sel, p + ".selector", {"matchLabels", "gpu"})) {
    if (sel["matchLabels"])
      r.string_map(sel["matchLabels"], p + ".selector.matchLabels", "strings", preset.match_labels);
    if (sel["gpu"]) {
      assign(preset.gpu_only,
             r.one_of<bool>(sel["gpu"], p + ".selector.gpu", {{"true", true}, {"false", false}}));
    }
  }
  if (preset.match_labels.empty() && !preset.gpu_only) {
    r.error(n, p,
            "a preset needs a selector (matchLabels, or gpu: true): one without would apply to every pod");
  }
}

void read_resources(YamlReader& r, const YAML::Node& n, const std::string& p, Preset& preset) {
  const YAML::Node res = n["resources"];
  if (!res || !r.map(res, p + ".resources", {"requests", "limits"})) return;
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

void read_volume_mounts(YamlReader& r, const YAML::Node& n, const nlohmann::json& v, const std::string& p,
                        Preset& preset) {
  if (!n["volumeMounts"]) return;
  read_objects(r, n, v, "volumeMounts", p, "mountPath", preset.volume_mounts);
  for (const nlohmann::json& mount : preset.volume_mounts) {
    if (!mount.contains("name"))
      r.error(n["volumeMounts"], p + ".volumeMounts", "every mount needs a volume name");
  }
}

// Preset `n` at `p` (`v` its JSON); `names` holds the names of the presets before it.
Preset read_preset(YamlReader& r, const YAML::Node& n, const nlohmann::json& v, const std::string& p,
                   std::set<std::string>& names) {
  Preset preset;
  if (n["name"]) assign(preset.name, r.string(n["name"], p + ".name"));
  if (preset.name.empty())
    r.error(n, p, "every preset needs a name (it is what warnings and gpuadmit.io/applied show)");
  if (!names.insert(preset.name).second)
    r.error(n["name"], p + ".name", "another preset has the name " + preset.name);
  read_selector(r, n, p, preset);
  if (n["containers"]) {
    assign(preset.all_containers,
           r.one_of<bool>(n["containers"], p + ".containers", {{"gpu", false}, {"all", true}}));
  }
  read_objects(r, n, v, "env", p, "name", preset.env);
  read_resources(r, n, p, preset);
  read_objects(r, n, v, "tolerations", p, nullptr, preset.tolerations);
  if (n["nodeSelector"])
    r.string_map(n["nodeSelector"], p + ".nodeSelector", "strings", preset.node_selector);
  read_objects(r, n, v, "volumes", p, "name", preset.volumes);
  read_volume_mounts(r, n, v, p, preset);
  if (n["annotations"]) r.string_map(n["annotations"], p + ".annotations", "strings", preset.annotations);
  return preset;
}

}  // namespace

void read_presets(YamlReader& r, const YAML::Node& node, const nlohmann::json* value,
                  policy::RuleSet& rules) {
  const std::string path = "spec.presets";
  if (!node.IsSequence() || value == nullptr || !value->is_array()) {
    r.error(node, path, "expected a list of presets");
    return;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const YAML::Node n = node[i];
    if (!r.map(n, p,
               {"name", "selector", "containers", "env", "resources", "tolerations", "nodeSelector",
                "volumes", "volumeMounts", "annotations"})) {
      continue;
    }
    rules.presets.presets.push_back(read_preset(r, n, (*value)[i], p, names));
  }
}

}  // namespace gpuadmit::config
