// `gpuadmit test`'s suites: a gpuadmit-test.yaml names a policy, the resources, an optional cluster dump,
// and what gpuadmit must do with each resource (the verdict, the rules that denied, warned, audited and
// fixed, and optionally the patched resource). Running one checks each resource the way `gpuadmit check`
// does, on the same code path, and compares.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cli {

inline constexpr std::string_view kSuiteFileName = "gpuadmit-test.yaml";

struct Expectation {
  std::string kind;
  std::string namespace_;  // empty: the suite's namespace
  std::string name;
  std::string verdict;  // allowed, denied or not-checked
  // Rule ids; a list left out means none.
  std::vector<std::string> denied;
  std::vector<std::string> warned;
  std::vector<std::string> audited;
  std::vector<std::string> fixed;
  std::string patched_resource;  // as written, relative to the suite's folder; empty: not compared
  std::string location;          // where the entry is: "suite-file:line"
};

struct Suite {
  std::string file;                    // the gpuadmit-test.yaml
  std::string name;                    // metadata.name, else the folder's name
  std::optional<std::string> policy;   // a path (resolved); none: the embedded policy
  std::optional<std::string> cluster;  // a path (resolved); none: no cluster view
  std::string namespace_ = "default";
  std::vector<std::string> resources;  // paths (resolved)
  std::vector<Expectation> expectations;
};

// The suite in `file`; every problem with it at its file:line:column.
Result<Suite> read_suite(const std::string& file);

// One resource of a suite and how it went.
struct CaseResult {
  std::string resource;               // "Pod ml/trainer"
  std::string source;                 // where the object is: "file:line"
  std::vector<std::string> failures;  // empty: it passed; each a line, or lines for a diff
  Expectation actual;                 // what gpuadmit did, written as an expectation (for --update)
  nlohmann::json fixed;               // the object as it would be stored
  const Expectation* expected = nullptr;
};

struct SuiteResult {
  std::string error;  // the suite could not run (its policy, cluster or a resource failed to load)
  std::vector<CaseResult> cases;
  [[nodiscard]] bool passed() const;
};

SuiteResult run_suite(const Suite& suite);

// A path as a suite names it, relative to the suite's folder unless absolute.
std::string suite_path(const std::string& suite_file, const std::string& path);

}  // namespace gpuadmit::cli
