// Whole-file reads for the watched files. Kubernetes swaps Secret and ConfigMap mounts by renaming a
// `..data` symlink, so the watchers compare contents rather than watching paths.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::server {

// Refuses files above `max_bytes`: certificates and policies are small, and a watcher must not be made to
// read something huge that a bad mount points at.
Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes = 1U << 20U);

}  // namespace gpuadmit::server
