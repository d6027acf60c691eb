// kubectl's choice of kubeconfig files
// (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/, "The KUBECONFIG
// environment variable" and "Merging kubeconfig files"; client-go clientcmd/loader.go).
#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "gpuadmit/cluster/api_config.hpp"

namespace gpuadmit::cluster {

namespace fs = std::filesystem;

KubeconfigFiles kubeconfig_files(const std::optional<std::string>& flag, std::string_view kubeconfig_env,
                                 const fs::path& home) {
  KubeconfigFiles files;
  if (flag && !flag->empty()) {
    files.paths.emplace_back(*flag);  // must exist: loading it says so if not
    return files;
  }
  std::error_code ignored;
  if (!kubeconfig_env.empty()) {
    std::size_t start = 0;
    while (start <= kubeconfig_env.size()) {
      const std::size_t colon = std::min(kubeconfig_env.find(':', start), kubeconfig_env.size());
      const std::string_view entry = kubeconfig_env.substr(start, colon - start);
      start = colon + 1;
      if (entry.empty()) continue;
      const fs::path path(entry);
      if (!fs::exists(path, ignored)) {
        files.missing.push_back(path);
      } else if (std::find(files.paths.begin(), files.paths.end(), path) == files.paths.end()) {
        files.paths.push_back(path);
      }
    }
    return files;
  }
  if (!home.empty() && fs::exists(home / ".kube" / "config", ignored))
    files.paths.push_back(home / ".kube" / "config");
  return files;
}

Result<ApiConfig> resolve_api_config(const std::optional<std::string>& kubeconfig,
                                     const KubeconfigSelection& selection, const InClusterPaths& paths) {
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up only
    return value == nullptr ? std::string() : std::string(value);
  };
  const std::string home = variable("HOME");
  const KubeconfigFiles files = kubeconfig_files(kubeconfig, variable("KUBECONFIG"), home);
  if (!files.paths.empty()) return load_kubeconfigs(files.paths, selection);
  auto in_cluster = in_cluster_config(paths);
  if (in_cluster) return in_cluster;
  std::string tried;
  for (const fs::path& missing : files.missing) tried += (tried.empty() ? "" : ", ") + missing.string();
  return make_error("no kubeconfig: " +
                    (tried.empty() ? "no $KUBECONFIG and no " + (fs::path(home) / ".kube/config").string()
                                   : "$KUBECONFIG's files do not exist (" + tried + ")") +
                    " (give --kubeconfig FILE); and " + in_cluster.error().message);
}

}  // namespace gpuadmit::cluster
