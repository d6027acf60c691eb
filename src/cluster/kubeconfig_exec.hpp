// A kubeconfig user's `exec` (a credential plugin), read as client-go reads it (clientcmd/api/types.go
// ExecConfig, and its validation in clientcmd/validation.go).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "gpuadmit/cluster/api_config.hpp"

namespace gpuadmit::cluster {

// The user's exec plugin, or none; `where` is "kubeconfig FILE: users[NAME].user".
Result<std::optional<ExecPlugin>> read_exec(const YAML::Node& user, const std::filesystem::path& file,
                                            const std::string& where);

// spec.cluster of KUBERNETES_EXEC_INFO for a plugin with provideClusterInfo: the cluster as `config` holds
// it, and the cluster entry's extension named client.authentication.k8s.io/exec as `config`.
std::string exec_cluster_info(const YAML::Node& cluster, const ApiConfig& config);

}  // namespace gpuadmit::cluster
