// gpuadmit test's pure pieces: the line diff of its failures and the rewrite of a suite's results.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../../../src/cli/line_diff.hpp"
#include "../../../src/cli/test_update.hpp"

namespace gpuadmit::cli {
namespace {

struct DiffCase {
  const char* name;
  const char* expected;
  const char* actual;
  const char* diff;
};

const std::vector<DiffCase> kDiffCases = {
    {"equal texts have no changed line", "a\nb\n", "a\nb\n", "  ...\n"},
    {"an added line is marked +", "a\nb\n", "a\nx\nb\n", "  a\n+ x\n  b\n"},
    {"a removed line is marked -", "a\nb\nc\n", "a\nc\n", "  a\n- b\n  c\n"},
    {"a changed line is removed then added", "a\nb\n", "a\nc\n", "  a\n- b\n+ c\n"},
    {"lines far from a change are elided", "1\n2\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\n5\n6\nx\n",
     "  ...\n  5\n  6\n- 7\n+ x\n"},
    {"an empty expected text is all additions", "", "a\n", "+ a\n"},
};

TEST_CASE("the line diff marks what was expected and what was got", "[cli][test]") {
  for (const DiffCase& c : kDiffCases) {
    SECTION(c.name) {
      CHECK(line_diff(c.expected, c.actual) == c.diff);
    }
  }
}

TEST_CASE("texts too long to diff line by line say so", "[cli][test]") {
  std::string big;
  for (int i = 0; i < 2001; ++i) big += std::to_string(i) + "\n";
  CHECK(line_diff(big, "x\n").find("not compared line by line") != std::string::npos);
}

struct ReplaceCase {
  const char* name;
  const char* suite;
  const char* replaced;
};

const std::vector<ReplaceCase> kReplaceCases = {
    {"results at the end are replaced", "kind: Test\nresults:\n  - kind: Pod\n", "kind: Test\nNEW\n"},
    {"a key after the results is kept", "kind: Test\nresults:\n  - kind: Pod\nnamespace: ml\n",
     "kind: Test\nNEW\nnamespace: ml\n"},
    {"a list at column 0 belongs to the results", "results:\n- kind: Pod\n- kind: Job\nnamespace: ml\n",
     "NEW\nnamespace: ml\n"},
    {"a suite without results gets them at the end", "kind: Test\nresources: [a.yaml]",
     "kind: Test\nresources: [a.yaml]\nNEW\n"},
    {"a comment before the results is kept", "# head\nresults: []\n", "# head\nNEW\n"},
};

TEST_CASE("an update replaces the results block and keeps the rest of the suite", "[cli][test]") {
  for (const ReplaceCase& c : kReplaceCases) {
    SECTION(c.name) {
      CHECK(replace_results(c.suite, "NEW\n") == c.replaced);
    }
  }
}

TEST_CASE("the results written for a case list only the rules that fired", "[cli][test]") {
  CaseResult c;
  c.actual.kind = "Pod";
  c.actual.name = "train";
  c.actual.namespace_ = "research";
  c.actual.verdict = "denied";
  c.actual.denied = {"node-fit"};
  c.actual.fixed = {"gpu-tolerations", "shm-size"};
  CaseResult gone;  // an expectation whose resource is gone: not written
  CHECK(results_yaml({c, gone}) ==
        "results:\n  - kind: Pod\n    namespace: research\n    name: train\n    verdict: denied\n"
        "    denied: [node-fit]\n    fixed: [gpu-tolerations, shm-size]\n");
}

}  // namespace
}  // namespace gpuadmit::cli
