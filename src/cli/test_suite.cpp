#include "test_suite.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string_view>

#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/policy/catalogue.hpp"

namespace gpuadmit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxSuiteBytes = std::size_t{1024} * 1024;

// Reads one suite document, collecting every problem at its place in the file.
class SuiteReader {
 public:
  SuiteReader(std::string file, const config::Document& doc) : file_(std::move(file)), doc_(doc) {}

  void error(const std::string& pointer, const std::string& what) {
    const config::Mark mark = config::mark_of(doc_, pointer);
    errors_ += (errors_.empty() ? "" : "\n") + file_ + ":" + std::to_string(mark.line) + ":" +
               std::to_string(mark.column) + ": " + field_of(pointer) + ": " + what;
  }

  // Reports the members of the mapping at `pointer` that are not `allowed`.
  bool mapping(const json& value, const std::string& pointer,
               std::initializer_list<std::string_view> allowed) {
    if (!value.is_object()) {
      error(pointer, "expected a mapping");
      return false;
    }
    for (const auto& [key, member] : value.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string names;
      for (const std::string_view name : allowed) names.append(names.empty() ? "" : ", ").append(name);
      error(pointer + "/" + key, "unknown key \"" + key + "\" (expected one of " + names + ")");
    }
    return true;
  }

  std::string string(const json& parent, const std::string& pointer, const char* key) {
    const auto it = parent.find(key);
    if (it == parent.end()) return {};
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      error(pointer + "/" + key, "expected a non-empty string");
      return {};
    }
    return it->get<std::string>();
  }

  std::vector<std::string> strings(const json& parent, const std::string& pointer, const char* key) {
    std::vector<std::string> out;
    const auto it = parent.find(key);
    if (it == parent.end()) return out;
    if (!it->is_array()) {
      error(pointer + "/" + key, "expected a list of strings");
      return out;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      if ((*it)[i].is_string()) {
        out.push_back((*it)[i].get<std::string>());
      } else {
        error(pointer + "/" + key + "/" + std::to_string(i), "expected a string");
      }
    }
    return out;
  }

  std::vector<std::string> rules(const json& parent, const std::string& pointer, const char* key) {
    std::vector<std::string> ids = strings(parent, pointer, key);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (policy::find_rule(ids[i]) == nullptr) {
        error(pointer + "/" + key + "/" + std::to_string(i),
              "unknown rule \"" + ids[i] + "\" (known rules: " + policy::rule_id_list() + ")");
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }

  [[nodiscard]] int line_of(const std::string& pointer) const { return config::mark_of(doc_, pointer).line; }
  [[nodiscard]] const std::string& errors() const { return errors_; }

 private:
  // "/results/2/verdict" → "results[2].verdict"
  static std::string field_of(std::string_view pointer) {
    std::string out;
    while (!pointer.empty()) {
      pointer.remove_prefix(1);
      const std::string_view token = pointer.substr(0, pointer.find('/'));
      pointer.remove_prefix(token.size());
      const bool index = !token.empty() &&
                         std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
      out += index ? "[" + std::string(token) + "]" : (out.empty() ? "" : ".") + std::string(token);
    }
    return out.empty() ? "suite" : out;
  }

  std::string file_;
  const config::Document& doc_;
  std::string errors_;
};

Expectation read_expectation(SuiteReader& r, const json& entry, const std::string& pointer,
                             const std::string& file) {
  Expectation e;
  if (!r.mapping(entry, pointer,
                 {"kind", "namespace", "name", "verdict", "denied", "warned", "audited", "fixed",
                  "patchedResource"})) {
    return e;
  }
  e.kind = r.string(entry, pointer, "kind");
  e.namespace_ = r.string(entry, pointer, "namespace");
  e.name = r.string(entry, pointer, "name");
  e.verdict = r.string(entry, pointer, "verdict");
  if (e.kind.empty() || e.name.empty()) r.error(pointer, "a result names its resource's kind and name");
  if (e.verdict != "allowed" && e.verdict != "denied" && e.verdict != "not-checked") {
    r.error(pointer + (entry.contains("verdict") ? "/verdict" : ""),
            "expected verdict: allowed, denied or not-checked" +
                (e.verdict.empty() ? std::string() : ", got \"" + e.verdict + "\""));
  }
  e.denied = r.rules(entry, pointer, "denied");
  e.warned = r.rules(entry, pointer, "warned");
  e.audited = r.rules(entry, pointer, "audited");
  e.fixed = r.rules(entry, pointer, "fixed");
  e.patched_resource = r.string(entry, pointer, "patchedResource");
  e.location = file + ":" + std::to_string(r.line_of(pointer));
  return e;
}

void read_body(SuiteReader& r, const json& root, const std::string& file, Suite& suite) {
  if (!r.mapping(
          root, "",
          {"apiVersion", "kind", "metadata", "policy", "cluster", "namespace", "resources", "results"})) {
    return;
  }
  if (root.value("apiVersion", std::string()) != "gpuadmit.io/v1alpha1")
    r.error(root.contains("apiVersion") ? "/apiVersion" : "", "expected apiVersion: gpuadmit.io/v1alpha1");
  if (root.value("kind", std::string()) != "Test")
    r.error(root.contains("kind") ? "/kind" : "", "expected kind: Test");
  if (const auto meta = root.find("metadata");
      meta != root.end() && r.mapping(*meta, "/metadata", {"name"})) {
    if (const std::string name = r.string(*meta, "/metadata", "name"); !name.empty()) suite.name = name;
  }
  if (const std::string policy = r.string(root, "", "policy"); !policy.empty())
    suite.policy = suite_path(file, policy);
  if (const std::string cluster = r.string(root, "", "cluster"); !cluster.empty())
    suite.cluster = suite_path(file, cluster);
  if (const std::string ns = r.string(root, "", "namespace"); !ns.empty()) suite.namespace_ = ns;
  for (const std::string& resource : r.strings(root, "", "resources"))
    suite.resources.push_back(suite_path(file, resource));
  if (suite.resources.empty()) r.error("/resources", "expected resources: a list of files or folders");
  const auto results = root.find("results");
  if (results == root.end() || results->is_null()) return;  // none yet: --update writes them
  if (!results->is_array()) return r.error("/results", "expected a list of results");
  for (std::size_t i = 0; i < results->size(); ++i) {
    suite.expectations.push_back(read_expectation(r, (*results)[i], "/results/" + std::to_string(i), file));
  }
}

}  // namespace

std::string suite_path(const std::string& suite_file, const std::string& path) {
  if (fs::path(path).is_absolute()) return path;
  return (fs::path(suite_file).parent_path() / path).lexically_normal().string();
}

Result<Suite> read_suite(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(file + ": cannot open");
  std::string text(kMaxSuiteBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxSuiteBytes)
    return make_error(file + ": a suite is at most " + std::to_string(kMaxSuiteBytes) + " bytes");
  auto documents = config::read_documents(text, file);
  if (!documents) return documents.error();
  if (documents->size() != 1) {
    return make_error(file + ": expected exactly one YAML document, found " +
                      std::to_string(documents->size()));
  }
  Suite suite;
  suite.file = file;
  suite.name = fs::path(file).parent_path().filename().string();
  SuiteReader reader(file, documents->front());
  read_body(reader, documents->front().object, file, suite);
  if (!reader.errors().empty()) return make_error(reader.errors());
  return suite;
}

}  // namespace gpuadmit::cli
