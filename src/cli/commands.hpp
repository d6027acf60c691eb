// The subcommands of the gpuadmit binary. Each takes its own arguments (after the command word) and returns
// the process exit code: 0 success, 1 a policy verdict said no (check), 2 usage, input or policy errors.
#pragma once

#include <span>
#include <string_view>

namespace gpuadmit::cli {

using Args = std::span<const std::string_view>;

inline constexpr int kExitOk = 0;
inline constexpr int kExitDenied = 1;
inline constexpr int kExitUsage = 2;

int check_command(Args args);
int test_command(Args args);
int policy_command(Args args);
int serve_command(Args args);
int certs_command(Args args);
int cluster_command(Args args);
int recommend_command(Args args);
int audit_command(Args args);
int why_command(Args args);
int version_command(Args args);
int completion_command(Args args);
// `gpuadmit __complete WORDS...` (and kubectl_complete-gpuadmit): cobra's completion protocol; the commands
// come from `top_usage`, the binary's own usage text.
int complete_command(Args words, std::string_view top_usage);

}  // namespace gpuadmit::cli
