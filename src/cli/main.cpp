// gpuadmit: composition root. Dispatches to the subcommands; the one place exceptions are caught.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"

namespace {

constexpr std::string_view kUsage = R"(gpuadmit: Kubernetes admission for GPU workloads

Usage:
  gpuadmit <command> [flags]

Commands:
  check     Check manifests offline, as the API server with gpuadmit would (exit 1 when any is denied)
  test      Run policy test suites (gpuadmit-test.yaml) against their expected results; JUnit for CI
  serve     Run the admission webhook over HTTPS
  policy    Print the default policy, validate policy files, or print the policy's JSON Schema
  certs     Generate a CA and a serving certificate (certs generate)
  cluster   Dump a live cluster's nodes, quotas, storage classes and claims for check --cluster
  recommend Work out a model's requests (memory, GPUs, /dev/shm, checkpoint claim), with the formulas
  audit     Judge the pods and workloads that already exist, live or saved, and patch nothing
  why       Explain a stuck or killed GPU pod, or a workload without pods, with the fix
  version   Print the version
  completion Print a shell completion script (bash, zsh, fish; and kubectl's plugin completion)

Run 'gpuadmit <command> --help' for a command's flags.
)";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  // kubectl (1.26+) completes `kubectl gpuadmit ...` by running kubectl_complete-gpuadmit WORDS...: a link
  // of that name to this binary (gpuadmit completion --help).
  const std::string_view self = argc > 0 ? std::string_view(argv[0]) : std::string_view();
  if (self.substr(self.rfind('/') + 1) == "kubectl_complete-gpuadmit") {
    return gpuadmit::cli::complete_command(gpuadmit::cli::Args(args.data(), args.size()), kUsage);
  }
  if (const auto answered = gpuadmit::cli::answer_bare_or_help(args, kUsage)) return *answered;
  const std::string_view command = args[0];
  const gpuadmit::cli::Args rest(args.data() + 1, args.size() - 1);
  try {
    if (command == "check") return gpuadmit::cli::check_command(rest);
    if (command == "test") return gpuadmit::cli::test_command(rest);
    if (command == "serve") return gpuadmit::cli::serve_command(rest);
    if (command == "policy") return gpuadmit::cli::policy_command(rest);
    if (command == "certs") return gpuadmit::cli::certs_command(rest);
    if (command == "cluster") return gpuadmit::cli::cluster_command(rest);
    if (command == "recommend") return gpuadmit::cli::recommend_command(rest);
    if (command == "audit") return gpuadmit::cli::audit_command(rest);
    if (command == "why") return gpuadmit::cli::why_command(rest);
    if (command == "version" || command == "--version") return gpuadmit::cli::version_command(rest);
    if (command == "completion") return gpuadmit::cli::completion_command(rest);
    if (command == "__complete") return gpuadmit::cli::complete_command(rest, kUsage);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuadmit %s: internal error: %s\n", std::string(command).c_str(), e.what());
    return gpuadmit::cli::kExitUsage;
  }
  std::fprintf(stderr, "gpuadmit: unknown command \"%s\"\n\n%s", std::string(command).c_str(), kUsage.data());
  return gpuadmit::cli::kExitUsage;
}
