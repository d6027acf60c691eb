// Running a suite: each resource checked as `gpuadmit check` checks it, then compared with its expectation.
#include <algorithm>
#include <fstream>

#include "gpuadmit/config/yaml_documents.hpp"
#include "line_diff.hpp"
#include "manifests.hpp"
#include "test_suite.hpp"

namespace gpuadmit::cli {
namespace {

std::string list_text(const std::vector<std::string>& ids) {
  std::string out = "[";
  for (const std::string& id : ids) out.append(out.size() > 1 ? ", " : "").append(id);
  return out + "]";
}

std::vector<std::string> sorted_rules(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

template <class Items>
std::vector<std::string> rules_of(const Items& items) {
  std::vector<std::string> ids;
  for (const auto& item : items) ids.push_back(item.rule);
  return sorted_rules(std::move(ids));
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// What gpuadmit did with the object, written as the expectation that would pass.
Expectation actual_of(const admission::CheckResult& r, const Suite& suite) {
  Expectation e;
  e.kind = r.kind;
  e.namespace_ = r.namespace_ == suite.namespace_ ? std::string() : r.namespace_;
  e.name = r.name;
  e.verdict = !r.checked ? "not-checked" : (r.allowed ? "allowed" : "denied");
  e.denied = rules_of(r.violations);
  e.warned = sorted_rules(r.warned_rules);
  e.audited = rules_of(r.audits);
  e.fixed = rules_of(r.fixes);
  return e;
}

// The patched resource the expectation names against the object as it would be stored.
void compare_patched(const Suite& suite, const Expectation& expected, const nlohmann::json& fixed,
                     std::vector<std::string>& failures) {
  const std::string path = suite_path(suite.file, expected.patched_resource);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    failures.push_back("patchedResource " + path + ": cannot open (gpuadmit test --update writes it)");
    return;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto documents = config::read_documents(text, path);
  if (!documents || documents->size() != 1) {
    failures.push_back("patchedResource " + path + ": " +
                       (documents ? "expected exactly one YAML document" : documents.error().message));
    return;
  }
  if (documents->front().object == fixed) return;
  failures.push_back("patchedResource " + path + " differs (- expected, + got):\n" +
                     line_diff(config::to_yaml(documents->front().object), config::to_yaml(fixed)));
}

void compare(const Suite& suite, const Expectation& expected, const Located& located, CaseResult& c) {
  const admission::CheckResult& r = located.result;
  const Expectation& actual = c.actual;
  if (expected.verdict != actual.verdict) {
    c.failures.push_back("verdict: expected " + expected.verdict + ", got " + actual.verdict +
                         (r.checked ? "" : " (" + r.skipped_reason + ")"));
  }
  const auto list = [&](const char* what, const std::vector<std::string>& want,
                        const std::vector<std::string>& got) {
    if (want != got)
      c.failures.push_back(std::string(what) + ": expected " + list_text(want) + ", got " + list_text(got));
    return want == got;
  };
  if (!list("denied", expected.denied, actual.denied)) {
    for (const policy::Finding& v : r.violations)
      c.failures.push_back("  denied by " + v.rule + " at " + v.field + ": " + first_line(v.message));
  }
  if (!list("warned", expected.warned, actual.warned)) {
    for (const std::string& w : r.warnings) c.failures.push_back("  warning: " + w);
  }
  list("audited", expected.audited, actual.audited);
  if (!list("fixed", expected.fixed, actual.fixed)) {
    for (const policy::Fix& f : r.fixes) c.failures.push_back("  fixed by " + f.rule + ": " + f.description);
  }
  if (!expected.patched_resource.empty()) compare_patched(suite, expected, r.fixed, c.failures);
}

bool matches(const Expectation& e, const admission::CheckResult& r, const Suite& suite) {
  const std::string& ns = e.namespace_.empty() ? suite.namespace_ : e.namespace_;
  return e.kind == r.kind && e.name == r.name && ns == r.namespace_;
}

}  // namespace

bool SuiteResult::passed() const {
  return error.empty() &&
         std::all_of(cases.begin(), cases.end(), [](const CaseResult& c) { return c.failures.empty(); });
}

SuiteResult run_suite(const Suite& suite) {
  SuiteResult out;
  const auto rules = load_rules(suite.policy);
  if (!rules) return {rules.error().message, {}};
  auto cluster = load_cluster_input(suite.cluster);
  if (!cluster) return {cluster.error().message, {}};
  const auto sources = read_sources(suite.resources);
  if (!sources) return {sources.error().message, {}};
  const auto results = check_sources(*sources, policy::PolicySet::of(*rules), suite.namespace_,
                                     cluster->has_value() ? &**cluster : nullptr);
  if (!results) return {results.error().message, {}};

  std::vector<bool> used(suite.expectations.size(), false);
  for (const Located& located : *results) {
    const admission::CheckResult& r = located.result;
    CaseResult c{
        r.kind + " " + r.namespace_ + "/" + r.name, located.source, {}, actual_of(r, suite), r.fixed};
    const auto it = std::find_if(suite.expectations.begin(), suite.expectations.end(),
                                 [&](const Expectation& e) { return matches(e, r, suite); });
    if (it == suite.expectations.end()) {
      c.failures.push_back("no expected result for it in " + suite.file +
                           " (gpuadmit test --update writes one)");
    } else {
      used[static_cast<std::size_t>(it - suite.expectations.begin())] = true;
      c.expected = &*it;
      c.actual.patched_resource = it->patched_resource;
      compare(suite, *it, located, c);
    }
    out.cases.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < suite.expectations.size(); ++i) {
    if (used[i]) continue;
    const Expectation& e = suite.expectations[i];
    CaseResult c;
    c.resource = e.kind + " " + (e.namespace_.empty() ? suite.namespace_ : e.namespace_) + "/" + e.name;
    c.source = e.location;
    c.expected = &e;
    c.failures.push_back("expected at " + e.location + ", but no resource of the suite has this kind, " +
                         "namespace and name");
    out.cases.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpuadmit::cli
