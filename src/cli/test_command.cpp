// gpuadmit test: policy test suites (gpuadmit-test.yaml), run in CI like `kyverno test` and `gator verify`.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "flags.hpp"
#include "test_report.hpp"
#include "test_suite.hpp"
#include "test_update.hpp"

namespace gpuadmit::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTestUsage = R"(Usage:
  gpuadmit test DIR|FILE... [-o text|junit] [--update]

Runs policy test suites: every gpuadmit-test.yaml under each DIR (or the suite FILE). A suite names a
policy, the resources to check, an optional cluster dump, and what gpuadmit must do with each resource:

  apiVersion: gpuadmit.io/v1alpha1
  kind: Test
  metadata: {name: strict}
  policy: ../../strict.yaml     # default: the embedded policy; paths are relative to the suite's folder
  cluster: cluster.yaml         # optional: as for check --cluster
  namespace: ml                 # for resources that name none (default: default)
  resources: [pods.yaml, jobs/] # files or folders, as for check -f
  results:
    - kind: Pod
      name: trainer             # and namespace, when it is not the suite's
      verdict: denied           # allowed, denied or not-checked
      denied: [node-fit]        # the rules that denied, warned, audited and fixed; a list left out is none
      warned: [gpu-intent]
      fixed: [guaranteed-qos]
      patchedResource: patched/trainer.yaml   # optional: the object as it would be stored

Each resource is checked as 'gpuadmit check' checks it (mutation, then validation of the fixed object).

Flags:
  -o, --output   text (default: a table, then each failure with its diff) or junit (JUnit XML, for CI)
      --update   rewrite each suite's results (and the patched resources they name) from what gpuadmit now
                 does, for review in a diff; comments inside the results are not kept

Exit codes: 0 every result as expected, 1 any not, 2 usage errors or a suite that cannot be read or run.
Limits: a suite file is at most 1 MiB; resources as for check (8 MiB per input).
)";

constexpr Command kTest{"gpuadmit test", kTestUsage};

// The suite files under each path, sorted within it.
Result<std::vector<std::string>> find_suites(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      if (!fs::exists(path, ec)) return make_error(path + ": no such file or directory");
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
      if (entry.is_regular_file() && entry.path().filename() == kSuiteFileName)
        found.push_back(entry.path().string());
    }
    if (ec) return make_error(path + ": " + ec.message());
    if (found.empty()) return make_error(path + ": no " + std::string(kSuiteFileName) + " under it");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

SuiteRun run_file(const std::string& file) {
  SuiteRun run;
  auto suite = read_suite(file);
  if (!suite) {
    run.suite.file = file;
    run.suite.name = fs::path(file).parent_path().filename().string();
    run.result.error = suite.error().message;
    return run;
  }
  run.suite = std::move(*suite);
  run.result = run_suite(run.suite);
  return run;
}

}  // namespace

int test_command(Args args) {
  int exit_code = kExitOk;
  const auto flags =
      command_flags(args, {{"output", "o"}, {"update", "", false}, {"help", "h", false}}, kTest, exit_code);
  if (!flags) return exit_code;
  const std::string output = flags->last("output").value_or("text");
  if (output != "text" && output != "junit")
    return command_error(kTest, "--output must be text or junit, not \"" + output + "\"");
  if (flags->positional.empty()) return usage_error(kTest, "give at least one DIR or suite FILE");
  const auto files = find_suites(flags->positional);
  if (!files) return command_error(kTest, files.error().message);

  std::vector<SuiteRun> runs;
  for (const std::string& file : *files) runs.push_back(run_file(file));
  const bool any_error =
      std::any_of(runs.begin(), runs.end(), [](const SuiteRun& r) { return !r.result.error.empty(); });
  if (flags->has("update")) {
    for (const SuiteRun& run : runs) {
      if (!run.result.error.empty()) {
        std::cerr << run.suite.file << ": not updated:\n" << run.result.error << "\n";
        continue;
      }
      auto written = update_suite(run.suite, run.result);
      if (!written) return command_error(kTest, written.error().message);
      std::cout << run.suite.file << ": " << *written << (*written == 1 ? " result\n" : " results\n");
    }
    return any_error ? kExitUsage : kExitOk;
  }
  if (output == "junit") {
    print_test_junit(runs, std::cout);
  } else {
    print_test_table(runs, std::cout);
  }
  if (any_error) return kExitUsage;
  const bool all_passed =
      std::all_of(runs.begin(), runs.end(), [](const SuiteRun& r) { return r.result.passed(); });
  return all_passed ? kExitOk : kExitDenied;
}

}  // namespace gpuadmit::cli
