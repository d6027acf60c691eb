// `gpuadmit test`'s reports: a table for people, JUnit XML for CI.
#pragma once

#include <ostream>
#include <vector>

#include "test_suite.hpp"

namespace gpuadmit::cli {

struct SuiteRun {
  Suite suite;  // for a suite that could not be read, only `file` and `name`
  SuiteResult result;
};

// One row per resource (suite, resource, pass or FAIL), then each failure with its details, then the counts.
void print_test_table(const std::vector<SuiteRun>& runs, std::ostream& out);
// <testsuites> with a <testsuite> per suite and a <testcase> per resource; a suite that could not run is
// one <testcase> with an <error>.
void print_test_junit(const std::vector<SuiteRun>& runs, std::ostream& out);

}  // namespace gpuadmit::cli
