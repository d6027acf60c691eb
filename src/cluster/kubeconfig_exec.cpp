#include "kubeconfig_exec.hpp"

#include <nlohmann/json.hpp>

namespace gpuadmit::cluster {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kV1 = "client.authentication.k8s.io/v1";
constexpr std::string_view kV1beta1 = "client.authentication.k8s.io/v1beta1";

std::string text_of(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.Scalar() : std::string();
}

// YAML as JSON, for an extension's free-form object (scalars stay strings, as the kubeconfig holds them).
json to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (const auto& entry : node) out[entry.first.as<std::string>()] = to_json(entry.second);
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const auto& item : node) out.push_back(to_json(item));
    return out;
  }
  return node.IsScalar() ? json(node.Scalar()) : json();
}

Result<InteractiveMode> interactive_mode(const YAML::Node& exec, std::string_view api_version,
                                         const std::string& where) {
  const std::string mode = text_of(exec, "interactiveMode");
  if (mode.empty()) {
    // client-go: required in v1; v1beta1 defaults to IfAvailable.
    if (api_version == kV1) return make_error(where + ".interactiveMode: required for " + std::string(kV1));
    return InteractiveMode::kIfAvailable;
  }
  if (mode == "Never") return InteractiveMode::kNever;
  if (mode == "IfAvailable") return InteractiveMode::kIfAvailable;
  if (mode == "Always") return InteractiveMode::kAlways;
  return make_error(where + ".interactiveMode: \"" + mode + "\" is not Never, IfAvailable or Always");
}

Result<bool> read_lists(const YAML::Node& exec, const std::string& where, ExecPlugin& plugin) {
  if (const YAML::Node args = exec["args"]; args && !args.IsNull()) {
    if (!args.IsSequence()) return make_error(where + ".args: expected a list of strings");
    for (const YAML::Node& arg : args) {
      if (!arg.IsScalar()) return make_error(where + ".args: expected a list of strings");
      plugin.args.push_back(arg.Scalar());
    }
  }
  if (const YAML::Node env = exec["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) return make_error(where + ".env: expected a list of {name, value}");
    for (const YAML::Node& var : env) {
      const std::string name = var.IsMap() ? text_of(var, "name") : std::string();
      if (name.empty() || name.find('=') != std::string::npos) {
        return make_error(where + ".env: each entry needs a name (without '=') and a value");
      }
      plugin.env.emplace_back(name, text_of(var, "value"));
    }
  }
  return true;
}

}  // namespace

Result<std::optional<ExecPlugin>> read_exec(const YAML::Node& user, const fs::path& file,
                                            const std::string& where) {
  const YAML::Node exec = user["exec"];
  if (!exec || exec.IsNull()) return std::optional<ExecPlugin>();
  const std::string at = where + ".exec";
  if (!exec.IsMap()) return make_error(at + ": expected a map");
  ExecPlugin plugin;
  plugin.where = at;
  plugin.command = text_of(exec, "command");
  if (plugin.command.empty()) return make_error(at + ".command: missing");
  // client-go resolves a relative command with a path separator against the kubeconfig's directory; a bare
  // name is looked up on the PATH.
  if (plugin.command.find('/') != std::string::npos && fs::path(plugin.command).is_relative()) {
    plugin.command = (file.parent_path() / plugin.command).string();
  }
  plugin.api_version = text_of(exec, "apiVersion");
  if (plugin.api_version != kV1 && plugin.api_version != kV1beta1) {
    return make_error(at + ".apiVersion: \"" + plugin.api_version + "\" is not " + std::string(kV1) + " or " +
                      std::string(kV1beta1) + " (v1alpha1 was removed in Kubernetes 1.24)");
  }
  auto mode = interactive_mode(exec, plugin.api_version, at);
  if (!mode) return mode.error();
  plugin.interactive_mode = *mode;
  plugin.install_hint = text_of(exec, "installHint");
  if (auto lists = read_lists(exec, at, plugin); !lists) return lists.error();
  const std::string provide = text_of(exec, "provideClusterInfo");
  if (!provide.empty() && provide != "true" && provide != "false") {
    return make_error(at + ".provideClusterInfo: expected true or false");
  }
  if (provide == "true") plugin.cluster_info_json = "{}";  // filled in once the cluster is read
  return std::optional<ExecPlugin>(std::move(plugin));
}

std::string exec_cluster_info(const YAML::Node& cluster, const ApiConfig& config) {
  json info = {{"server", config.url()},
               {"certificate-authority-data", encode_base64(config.ca_pem)},
               {"insecure-skip-tls-verify", false}};
  if (!config.tls_server_name.empty()) info["tls-server-name"] = config.tls_server_name;
  if (const YAML::Node extensions = cluster["extensions"]; extensions && extensions.IsSequence()) {
    for (const YAML::Node& extension : extensions) {
      if (extension.IsMap() && text_of(extension, "name") == "client.authentication.k8s.io/exec") {
        info["config"] = to_json(extension["extension"]);
      }
    }
  }
  return info.dump();
}

}  // namespace gpuadmit::cluster
