// A small flag reader for the subcommands: `--name value`, `--name=value`, short aliases, repeated flags and
// boolean switches. Unknown flags and missing values are errors the command turns into exit code 2.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cli {

struct FlagSpec {
  std::string_view name;        // long name without dashes: "filename"
  std::string_view short_name;  // single letter or empty: "f"
  bool takes_value = true;
};

struct ParsedFlags {
  std::map<std::string, std::vector<std::string>, std::less<>> values;  // by long name
  std::vector<std::string> positional;

  [[nodiscard]] bool has(std::string_view name) const { return values.contains(name); }
  [[nodiscard]] std::optional<std::string> last(std::string_view name) const {
    const auto it = values.find(name);
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
  }
  [[nodiscard]] std::vector<std::string> all(std::string_view name) const {
    const auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

Result<ParsedFlags> parse_flags(Args args, std::initializer_list<FlagSpec> specs);

// A subcommand as its messages name it ("gpuadmit check") and its usage text.
struct Command {
  std::string_view name;
  std::string_view usage;
};

// "<name>: <message>" on stderr; returns kExitUsage.
int command_error(const Command& command, const std::string& message);
// The same followed by a blank line and the usage.
int usage_error(const Command& command, const std::string& message);

// The command's flags. When they do not parse, nothing, and `exit_code` is usage_error's; for --help (a
// "help" switch among `specs`), nothing, the usage on stdout and kExitOk.
std::optional<ParsedFlags> command_flags(Args args, std::initializer_list<FlagSpec> specs,
                                         const Command& command, int& exit_code);

// A command with subcommands, called with none ("gpuadmit policy": the usage on stderr, kExitUsage) or
// asking for help (--help, -h, help: the usage on stdout, kExitOk); otherwise nothing, and the caller
// reads args[0].
std::optional<int> answer_bare_or_help(Args args, std::string_view usage);

// A command's usage text with "{cluster-aware rules}" replaced by the catalogue's list of them.
std::string usage_text(std::string_view text);

}  // namespace gpuadmit::cli
