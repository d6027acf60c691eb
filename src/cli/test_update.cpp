#include "test_update.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "gpuadmit/config/yaml_documents.hpp"

namespace gpuadmit::cli {
namespace {

// A name as YAML can take it plain (Kubernetes names are), else quoted.
std::string scalar(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '/';
  });
  return plain ? text : nlohmann::json(text).dump();
}

void rule_list(std::ostringstream& out, const char* key, const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  out << "    " << key << ": [";
  for (std::size_t i = 0; i < ids.size(); ++i) out << (i > 0 ? ", " : "") << ids[i];
  out << "]\n";
}

Result<bool> write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return make_error(path + ": cannot write");
  file << text;
  if (!file) return make_error(path + ": cannot write");
  return true;
}

bool top_level_key(std::string_view line) {
  return !line.empty() && line.front() != ' ' && line.front() != '#' && line.front() != '-';
}

}  // namespace

std::string results_yaml(const std::vector<CaseResult>& cases) {
  std::ostringstream out;
  out << "results:\n";
  for (const CaseResult& c : cases) {
    const Expectation& e = c.actual;
    if (e.kind.empty()) continue;  // an expectation whose resource is gone
    out << "  - kind: " << scalar(e.kind) << "\n";
    if (!e.namespace_.empty()) out << "    namespace: " << scalar(e.namespace_) << "\n";
    out << "    name: " << scalar(e.name) << "\n"
        << "    verdict: " << e.verdict << "\n";
    rule_list(out, "denied", e.denied);
    rule_list(out, "warned", e.warned);
    rule_list(out, "audited", e.audited);
    rule_list(out, "fixed", e.fixed);
    if (!e.patched_resource.empty()) out << "    patchedResource: " << scalar(e.patched_resource) << "\n";
  }
  return out.str();
}

std::string replace_results(std::string_view suite_text, std::string_view results) {
  std::string before;
  std::string after;
  bool in_results = false;
  bool seen = false;
  while (!suite_text.empty()) {
    const std::size_t end = suite_text.find('\n');
    const std::string_view line =
        suite_text.substr(0, end == std::string_view::npos ? suite_text.size() : end + 1);
    suite_text.remove_prefix(line.size());
    if (!seen && line.starts_with("results:")) {
      in_results = seen = true;
      continue;
    }
    if (in_results && top_level_key(line)) in_results = false;
    if (in_results) continue;
    (seen ? after : before) += line;
  }
  if (!before.empty() && !before.ends_with('\n')) before += '\n';
  return before + std::string(results) + after;
}

Result<std::size_t> update_suite(const Suite& suite, const SuiteResult& result) {
  std::ifstream in(suite.file, std::ios::binary);
  if (!in) return make_error(suite.file + ": cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  std::size_t written = 0;
  for (const CaseResult& c : result.cases) {
    if (c.actual.kind.empty()) continue;
    ++written;
    if (c.actual.patched_resource.empty()) continue;
    const std::string path = suite_path(suite.file, c.actual.patched_resource);
    if (auto w = write_file(path, config::to_yaml(c.fixed)); !w) return w.error();
  }
  if (auto w = write_file(suite.file, replace_results(text, results_yaml(result.cases))); !w)
    return w.error();
  return written;
}

}  // namespace gpuadmit::cli
