// The YAML a platform team writes, on any bytes: the policy loader (load_policy) and the manifest reader
// `gpuadmit check` uses (read_documents) either succeed or return an error with a message; nothing throws,
// crashes or recurses without bound. A policy that loads loads the same way twice (no hidden state).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/config/yaml_documents.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto policy = gpuadmit::config::load_policy(text, "fuzz.yaml");
  if (policy) {
    const auto again = gpuadmit::config::load_policy(text, "fuzz.yaml");
    gpuadmit::fuzz::require(again.ok() && *again == *policy, "a policy loads the same way twice");
  } else {
    gpuadmit::fuzz::require(!policy.error().message.empty(), "a policy error says something");
  }
  const auto documents = gpuadmit::config::read_documents(text, "fuzz.yaml");
  if (!documents) gpuadmit::fuzz::require(!documents.error().message.empty(), "a YAML error says something");
  return 0;
}
