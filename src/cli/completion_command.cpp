// Shell completion. `gpuadmit __complete WORDS...` answers in cobra's format (one "candidate<TAB>description"
// per line, then ":DIRECTIVE"), which kubectl asks a plugin's kubectl_complete-gpuadmit for (kubectl 1.26+)
// and which the scripts of `gpuadmit completion bash|zsh|fish` ask for too. Commands, subcommands and flags
// are read from the binary's own usage texts (`gpuadmit CMD --help`), so they never drift from what the
// commands parse.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"

namespace gpuadmit::cli {
namespace {

// cobra's ShellCompDirective: 0 lets the shell complete file names, 4 (NoFileComp) does not.
constexpr int kFiles = 0;
constexpr int kNoFiles = 4;

constexpr std::string_view kCompletionUsage = R"usage(Usage:
  gpuadmit completion bash|zsh|fish

Prints a completion script for gpuadmit and kubectl-gpuadmit (commands, subcommands and flags):
  bash   source <(gpuadmit completion bash)             (or write it to /etc/bash_completion.d/gpuadmit)
  zsh    source <(gpuadmit completion zsh)              (or write it as _gpuadmit into your $fpath)
  fish   gpuadmit completion fish | source              (or write it to ~/.config/fish/completions/gpuadmit.fish)

For 'kubectl gpuadmit <TAB>' (kubectl 1.26 or later), put a link named kubectl_complete-gpuadmit on the PATH:
  ln -s "$(command -v gpuadmit)" ~ /.local / bin / kubectl_complete -
                                              gpuadmit kubectl runs it with the words typed so far; it answers as 'gpuadmit __complete' does.
)usage";

constexpr Command kCompletion{"gpuadmit completion", kCompletionUsage};

struct Candidate {
  std::string word;
  std::string description;
};

// `gpuadmit CMD --help`, run as a child of this very binary.
std::string usage_of(std::string_view command) {
  std::array<char, 4096> self{};
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return {};
  std::string quoted = "'";
  for (const char c : std::string_view(self.data(), static_cast<std::size_t>(n)))
    quoted += c == '\'' ? "'\\''" : std::string(1, c);
  quoted += "'";
  std::string cmd = quoted + " " + std::string(command) + " --help 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");  // NOLINT(cert-env33-c): our own binary, its path quoted
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 4096> chunk{};
  while (const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), pipe))
    out.append(chunk.data(), got);
  ::pclose(pipe);
  return out;
}

// The captures 1 and 2 of every line of `text` that `pattern` matches whole (after `from_line`, if given),
// each word once.
std::vector<Candidate> matches(std::string_view text, const std::regex& pattern,
                               std::string_view from_line = {}) {
  std::vector<Candidate> out;
  bool started = from_line.empty();
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line(text.substr(start, end - start));
    start = end + 1;
    started = started || line == from_line;
    std::smatch m;
    if (started && std::regex_match(line, m, pattern) &&
        std::none_of(out.begin(), out.end(), [&](const Candidate& c) { return c.word == m[1]; })) {
      out.push_back({m[1], m[2]});
    }
  }
  return out;
}

// "  name   description" lines of the top usage's Commands: section.
std::vector<Candidate> commands_of(std::string_view top_usage) {
  return matches(top_usage, std::regex(R"(^  ([a-z]+) +(.*)$)"), "Commands:");
}

// Flags ("  -o, --output   text or json") of a usage.
std::vector<Candidate> flags_of(const std::string& usage) {
  return matches(usage, std::regex(R"(^ +(?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*) *(.*)$)"));
}

// Subcommands ("  gpuadmit policy validate FILE...") of a usage.
std::vector<Candidate> subcommands_of(const std::string& usage, std::string_view command) {
  return matches(usage, std::regex("^  gpuadmit " + std::string(command) + " ([a-z][a-z-]*)\\b *(.*)$"));
}

int answer(const std::vector<Candidate>& candidates, std::string_view prefix, int directive) {
  for (const Candidate& c : candidates) {
    if (c.word.starts_with(prefix))
      std::cout << c.word << (c.description.empty() ? "" : "\t" + c.description) << "\n";
  }
  std::cout << ":" << directive << "\n";
  return kExitOk;
}

std::string script_for(std::string_view shell);

}  // namespace

int complete_command(Args words, std::string_view top_usage) {
  const std::string_view current = words.empty() ? std::string_view() : words.back();
  if (words.size() <= 1) return answer(commands_of(top_usage), current, kNoFiles);
  const std::string_view command = words[0];
  if (command == "completion") return answer({{"bash", ""}, {"zsh", ""}, {"fish", ""}}, current, kNoFiles);
  const std::string usage = usage_of(command);
  if (current.starts_with("-")) return answer(flags_of(usage), current, kNoFiles);
  const std::string_view previous = words[words.size() - 2];
  if (previous == "-o" || previous == "--output") {
    std::vector<Candidate> formats;
    for (const char* format : {"text", "json", "yaml"}) {
      for (const Candidate& f : flags_of(usage)) {
        if (f.word == "--output" && f.description.find(format) != std::string::npos)
          formats.push_back({format, ""});
      }
    }
    return answer(formats, current, kNoFiles);
  }
  if (words.size() == 2) {
    const std::vector<Candidate> subcommands = subcommands_of(usage, command);
    if (!subcommands.empty()) return answer(subcommands, current, kNoFiles);
  }
  return answer({}, current, kFiles);  // a file or a name: the shell's own completion
}

int completion_command(Args args) {
  int exit_code = kExitOk;
  const auto flags = command_flags(args, {{"help", "h", false}}, kCompletion, exit_code);
  if (!flags) return exit_code;
  if (flags->positional.size() != 1) return usage_error(kCompletion, "give one shell: bash, zsh or fish");
  const std::string script = script_for(flags->positional[0]);
  if (script.empty())
    return usage_error(kCompletion, "unknown shell \"" + flags->positional[0] + "\": bash, zsh or fish");
  std::cout << script;
  return kExitOk;
}

namespace {

constexpr std::string_view kBash =
    R"sh(# bash completion for gpuadmit and kubectl-gpuadmit: source <(gpuadmit completion bash)
_gpuadmit_complete() {
  local out line
  out=$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
  COMPREPLY=()
  while IFS= read -r line; do
    [[ -z $line || $line == :* ]] && continue
    COMPREPLY+=("${line%%$'\t'*}")
  done <<<"$out"
}
complete -o default -F _gpuadmit_complete gpuadmit kubectl-gpuadmit
)sh";

constexpr std::string_view kZsh = R"sh(#compdef gpuadmit kubectl-gpuadmit
# zsh completion for gpuadmit and kubectl-gpuadmit: source <(gpuadmit completion zsh)
_gpuadmit() {
  local out directive line
  local -a candidates
  out=$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  for line in "${(@f)out}"; do
    if [[ $line == :* ]]; then directive=${line#:}; continue; fi
    [[ -z $line ]] && continue
    candidates+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}")
  done
  _describe 'gpuadmit' candidates
  (( ${directive:-0} & 4 )) || _files
}
compdef _gpuadmit gpuadmit kubectl-gpuadmit
)sh";

constexpr std::string_view kFish =
    R"sh(# fish completion for gpuadmit and kubectl-gpuadmit: gpuadmit completion fish | source
# Files only where the answer's directive (its last line, ":N") allows them (N without 4), as bash and zsh.
function __gpuadmit_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l directive 0
    for line in ($words[1] __complete $words[2..-1] 2>/dev/null)
        if string match -q -- ':*' $line
            set directive (string sub -s 2 -- $line)
        else
            echo $line
        end
    end
    if test (math "bitand($directive, 4)") -eq 0
        __fish_complete_path (commandline -ct)
    end
end
complete -c gpuadmit -f -a '(__gpuadmit_complete)'
complete -c kubectl-gpuadmit -f -a '(__gpuadmit_complete)'
)sh";

std::string script_for(std::string_view shell) {
  if (shell == "bash") return std::string(kBash);
  if (shell == "zsh") return std::string(kZsh);
  if (shell == "fish") return std::string(kFish);
  return {};
}

}  // namespace
}  // namespace gpuadmit::cli
