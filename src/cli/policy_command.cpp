#include <cstdio>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/config/policy_crds.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/config/policy_schema.hpp"
#include "gpuadmit/version.hpp"

namespace gpuadmit::cli {

namespace {

constexpr std::string_view kPolicyUsage = R"(Usage:
  gpuadmit policy default            Print the embedded default policy (a starting point for your own)
  gpuadmit policy validate FILE...   Check policy files; errors are printed as file:line:column (exit 2)
  gpuadmit policy schema             Print the policy's JSON Schema (draft-07), for editors and CI
  gpuadmit policy crds               Print the ClusterGPUPolicy and GPUPolicy CRDs (from the same schema)
)";

}  // namespace

int policy_command(Args args) {
  if (const auto answered = answer_bare_or_help(args, kPolicyUsage)) return *answered;
  if (args[0] == "default" && args.size() == 1) {
    const std::string_view text = config::default_policy_yaml();
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  if (args[0] == "schema" && args.size() == 1) {
    std::printf("%s\n", config::policy_schema().dump(2).c_str());
    return kExitOk;
  }
  if (args[0] == "crds" && args.size() == 1) {
    std::printf("%s\n", config::policy_crds().dump(2).c_str());
    return kExitOk;
  }
  if (args[0] == "validate" && args.size() >= 2) {
    int status = kExitOk;
    for (std::size_t i = 1; i < args.size(); ++i) {
      const std::string path(args[i]);
      auto rules = config::load_policy_file(path);
      if (rules) {
        std::printf("%s: valid\n", path.c_str());
      } else {
        std::fprintf(stderr, "%s\n", rules.error().message.c_str());
        status = kExitUsage;
      }
    }
    return status;
  }
  std::fprintf(stderr, "gpuadmit policy: unexpected arguments\n\n%s", kPolicyUsage.data());
  return kExitUsage;
}

int version_command(Args args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::puts("Usage: gpuadmit version   Print the version of this binary");
    return kExitOk;
  }
  std::printf("gpuadmit %s\n", std::string(kVersion).c_str());
  return kExitOk;
}

}  // namespace gpuadmit::cli
