#include "flags.hpp"

#include <algorithm>
#include <cstdio>

#include "gpuadmit/policy/catalogue.hpp"

namespace gpuadmit::cli {

Result<ParsedFlags> parse_flags(Args args, std::initializer_list<FlagSpec> specs) {
  ParsedFlags parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "-" || !arg.starts_with("-")) {
      parsed.positional.emplace_back(arg);
      continue;
    }
    std::string_view name = arg.substr(arg.starts_with("--") ? 2 : 1);
    std::optional<std::string_view> inline_value;
    if (const auto eq = name.find('='); eq != std::string_view::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool is_long = arg.starts_with("--");
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) {
      return is_long ? s.name == name : (!s.short_name.empty() && s.short_name == name);
    });
    if (spec == specs.end()) return make_error("unknown flag " + std::string(arg));
    std::string value;
    if (spec->takes_value) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return make_error("flag --" + std::string(spec->name) + " needs a value");
      }
    } else if (inline_value) {
      return make_error("flag --" + std::string(spec->name) + " takes no value");
    }
    parsed.values[std::string(spec->name)].push_back(std::move(value));
  }
  return parsed;
}

int command_error(const Command& command, const std::string& message) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(command.name.size()), command.name.data(),
               message.c_str());
  return kExitUsage;
}

int usage_error(const Command& command, const std::string& message) {
  std::fprintf(stderr, "%.*s: %s\n\n%s", static_cast<int>(command.name.size()), command.name.data(),
               message.c_str(), usage_text(command.usage).c_str());
  return kExitUsage;
}

std::optional<ParsedFlags> command_flags(Args args, std::initializer_list<FlagSpec> specs,
                                         const Command& command, int& exit_code) {
  auto flags = parse_flags(args, specs);
  if (!flags) {
    exit_code = usage_error(command, flags.error().message);
    return std::nullopt;
  }
  if (flags->has("help")) {
    std::fputs(usage_text(command.usage).c_str(), stdout);
    exit_code = kExitOk;
    return std::nullopt;
  }
  return std::move(*flags);
}

std::string usage_text(std::string_view text) {
  constexpr std::string_view kPlaceholder = "{cluster-aware rules}";
  std::string out(text);
  for (auto at = out.find(kPlaceholder); at != std::string::npos; at = out.find(kPlaceholder, at)) {
    const std::string list = policy::cluster_aware_rule_list();
    out.replace(at, kPlaceholder.size(), list);
    at += list.size();
  }
  return out;
}

std::optional<int> answer_bare_or_help(Args args, std::string_view usage) {
  if (!args.empty() && args[0] != "--help" && args[0] != "-h" && args[0] != "help") return std::nullopt;
  std::fwrite(usage.data(), 1, usage.size(), args.empty() ? stderr : stdout);
  return args.empty() ? kExitUsage : kExitOk;
}

}  // namespace gpuadmit::cli
