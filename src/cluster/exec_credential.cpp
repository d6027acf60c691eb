#include "gpuadmit/cluster/exec_credential.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <ctime>
#include <map>
#include <system_error>

#include <nlohmann/json.hpp>

// POSIX declares it in no header; the process environment a plugin inherits.
extern char**
    environ;  // NOLINT(readability-redundant-declaration,cppcoreguidelines-avoid-non-const-global-variables)

namespace gpuadmit::cluster {
namespace {

using nlohmann::json;
constexpr std::size_t kMaxOutputBytes = 1U << 20U;
// A credential this close to its expiry is fetched again rather than sent (clock skew, request time).
constexpr auto kExpirySkew = std::chrono::seconds(10);

std::string mode_name(InteractiveMode mode) {
  switch (mode) {
    case InteractiveMode::kNever:
      return "Never";
    case InteractiveMode::kIfAvailable:
      return "IfAvailable";
    case InteractiveMode::kAlways:
      return "Always";
  }
  return "IfAvailable";
}

// Digits of `text` at [at, at + n) as a number, or -1.
int digits(std::string_view text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return -1;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + n, value);
  return ec == std::errc() && end == text.data() + at + n ? value : -1;
}

// RFC 3339 (what metav1.Time marshals to): 2006-01-02T15:04:05[.frac](Z|±hh:mm).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') ||
      text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = digits(text, 0, 4) - 1900;
  tm.tm_mon = digits(text, 5, 2) - 1;
  tm.tm_mday = digits(text, 8, 2);
  tm.tm_hour = digits(text, 11, 2);
  tm.tm_min = digits(text, 14, 2);
  tm.tm_sec = digits(text, 17, 2);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
      tm.tm_sec > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
  }
  long offset = 0;
  const std::string_view zone = text.substr(at);
  if (zone == "Z" || zone == "z") {
    offset = 0;
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    const int hours = digits(zone, 1, 2);
    const int minutes = digits(zone, 4, 2);
    if (hours < 0 || minutes < 0) return std::nullopt;
    offset = (zone[0] == '+' ? 1 : -1) * (hours * 3600L + minutes * 60L);
  } else {
    return std::nullopt;
  }
  const std::time_t utc = timegm(&tm) - offset;
  // system_clock counts nanoseconds in 64 bits, up to 2262: a later expiry is "never" (year 9999 is legal).
  constexpr std::time_t kLatest = 7'000'000'000;  // 2191
  if (utc > kLatest) return std::chrono::system_clock::time_point::max();
  return std::chrono::system_clock::from_time_t(utc);
}

// This process's environment with the plugin's variables (they win) and KUBERNETES_EXEC_INFO.
std::vector<std::string> plugin_environment(const ExecPlugin& plugin, bool interactive) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq != std::string_view::npos)
      vars[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& [name, value] : plugin.env) vars[name] = value;
  vars["KUBERNETES_EXEC_INFO"] = exec_info_json(plugin, interactive);
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

// Reads `fd` to its end, or until the deadline or the size limit; false on timeout.
bool read_all(int fd, std::string& out, std::chrono::steady_clock::time_point deadline) {
  std::array<char, 16384> chunk{};
  while (out.size() <= kMaxOutputBytes) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? false : true;
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(chunk.data(), static_cast<std::size_t>(n));
  }
  return true;
}

// The spawned child: its output read, then reaped (killed first when it overran `timeout`).
struct Child {
  pid_t pid = -1;
  int out = -1;
};

Result<Child> spawn(const ExecPlugin& plugin, bool interactive) {
  std::array<int, 2> pipe_fds{};
  if (::pipe2(pipe_fds.data(), O_CLOEXEC) != 0)
    return make_error("pipe: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!interactive) posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  std::vector<std::string> argv_text{plugin.command};
  argv_text.insert(argv_text.end(), plugin.args.begin(), plugin.args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = plugin_environment(plugin, interactive);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const bool has_path = plugin.command.find('/') != std::string::npos;
  const int rc =
      has_path ? posix_spawn(&pid, plugin.command.c_str(), &actions, nullptr, argv.data(), envp.data())
               : posix_spawnp(&pid, plugin.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    std::string message = plugin.where + ": cannot run \"" + plugin.command + "\": " + std::strerror(rc);
    if (rc == ENOENT) {
      message +=
          plugin.install_hint.empty() ? " (install it, or put it on the PATH)" : ". " + plugin.install_hint;
    }
    return make_error(message);
  }
  return Child{pid, pipe_fds[0]};
}

}  // namespace

std::string exec_info_json(const ExecPlugin& plugin, bool interactive) {
  json spec = {{"interactive", interactive}};
  if (!plugin.cluster_info_json.empty())
    spec["cluster"] = json::parse(plugin.cluster_info_json, nullptr, false);
  return json{{"apiVersion", plugin.api_version}, {"kind", "ExecCredential"}, {"spec", spec}}.dump();
}

Result<ExecCredential> parse_exec_credential(std::string_view output, const ExecPlugin& plugin) {
  const std::string what = plugin.where + ": the output of \"" + plugin.command + "\"";
  const json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return make_error(what + " is not a JSON object");
  if (doc.value("kind", "") != "ExecCredential") return make_error(what + " is not kind ExecCredential");
  if (doc.value("apiVersion", "") != plugin.api_version) {
    return make_error(what + " has apiVersion \"" + doc.value("apiVersion", "") +
                      "\", not the kubeconfig's \"" + plugin.api_version + "\"");
  }
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) return make_error(what + " has no status");
  ExecCredential credential;
  const auto text = [&](const char* field, std::string& into) -> Result<bool> {
    const auto it = status->find(field);
    if (it == status->end() || it->is_null()) return true;
    if (!it->is_string()) return make_error(what + ": status." + field + " is not a string");
    into = it->get<std::string>();
    return true;
  };
  if (auto read = text("token", credential.token); !read) return read.error();
  if (auto read = text("clientCertificateData", credential.client_certificate_pem); !read)
    return read.error();
  if (auto read = text("clientKeyData", credential.client_key_pem); !read) return read.error();
  if (credential.client_certificate_pem.empty() != credential.client_key_pem.empty()) {
    return make_error(what + " has status." +
                      (credential.client_key_pem.empty() ? "clientCertificateData without clientKeyData"
                                                         : "clientKeyData without clientCertificateData") +
                      ": a client certificate needs both");
  }
  if (credential.token.empty() && credential.client_certificate_pem.empty()) {
    return make_error(what + " has no status.token and no status.clientCertificateData");
  }
  if (const auto expiry = status->find("expirationTimestamp");
      expiry != status->end() && !expiry->is_null()) {
    const auto when = expiry->is_string() ? parse_rfc3339(expiry->get<std::string>()) : std::nullopt;
    if (!when) return make_error(what + ": status.expirationTimestamp is not an RFC 3339 time");
    credential.expires = when;
  }
  return credential;
}

Result<ExecCredential> run_exec_plugin(const ExecPlugin& plugin, std::chrono::seconds timeout) {
  const bool terminal = ::isatty(STDIN_FILENO) == 1;
  if (plugin.interactive_mode == InteractiveMode::kAlways && !terminal) {
    return make_error(plugin.where +
                      ": interactiveMode is Always, but standard input is not a terminal: run it "
                      "in a terminal, or log in first so the plugin needs no prompt");
  }
  const bool interactive = plugin.interactive_mode != InteractiveMode::kNever && terminal;
  auto child = spawn(plugin, interactive);
  if (!child) return child.error();
  std::string output;
  const bool finished = read_all(child->out, output, std::chrono::steady_clock::now() + timeout);
  ::close(child->out);
  if (!finished || output.size() > kMaxOutputBytes) ::kill(child->pid, SIGKILL);
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished) {
    return make_error(plugin.where + ": \"" + plugin.command + "\" gave no credential within " +
                      std::to_string(timeout.count()) + " s (interactiveMode " +
                      mode_name(plugin.interactive_mode) + ")");
  }
  if (output.size() > kMaxOutputBytes)
    return make_error(plugin.where + ": \"" + plugin.command + "\" printed more than 1 MiB");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return make_error(plugin.where + ": \"" + plugin.command + "\" failed (" +
                      (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                         : "killed by signal " + std::to_string(WTERMSIG(status))) +
                      "); its messages are above");
  }
  return parse_exec_credential(output, plugin);
}

Result<ExecCredential> ExecCredentialCache::credential() {
  const std::lock_guard lock(mutex_);
  const auto now = std::chrono::system_clock::now();
  if (cached_ && (!cached_->expires || *cached_->expires - kExpirySkew > now)) return *cached_;
  cached_.reset();
  ++runs_;
  auto fresh = run_exec_plugin(plugin_, timeout_);
  if (!fresh) return fresh.error();
  cached_ = std::move(*fresh);
  return *cached_;
}

void ExecCredentialCache::refused(const ExecCredential& sent) {
  const std::lock_guard lock(mutex_);
  if (cached_ && *cached_ == sent) cached_.reset();
}

int ExecCredentialCache::runs() const {
  const std::lock_guard lock(mutex_);
  return runs_;
}

}  // namespace gpuadmit::cluster
