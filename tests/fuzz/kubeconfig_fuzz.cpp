// kubeconfig parsing on any bytes: a configuration or an error naming the file, never an exception or a
// crash. Relative paths in the input point into a directory that does not exist, so the target reads no
// file the input names relatively.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "gpuadmit/cluster/api_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path file = "/nonexistent/gpuadmit-fuzz/kubeconfig";
  const auto config = gpuadmit::cluster::kubeconfig_from_text(text, file);
  if (!config) {
    gpuadmit::fuzz::require(config.error().message.starts_with("kubeconfig " + file.string()),
                            "an error names the kubeconfig", config.error().message);
    return 0;
  }
  gpuadmit::fuzz::require(!config->host.empty() && !config->ca_pem.empty(),
                          "a configuration has a host and a CA", config->source);
  return 0;
}
