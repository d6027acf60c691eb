// `gpuadmit test --update`: a suite's expected results rewritten from what gpuadmit now does, for review in
// a diff. The suite file keeps everything before its top-level `results:` and after the results; the patched
// resources the results name are rewritten too.
#pragma once

#include "gpuadmit/common/result.hpp"
#include "test_suite.hpp"

namespace gpuadmit::cli {

// The `results:` block for `cases` (each case's actual result).
std::string results_yaml(const std::vector<CaseResult>& cases);
// `suite_text` with its results block replaced by `results`.
std::string replace_results(std::string_view suite_text, std::string_view results);
// Writes the suite's file and the patched resources its results name. Returns how many results it wrote.
Result<std::size_t> update_suite(const Suite& suite, const SuiteResult& result);

}  // namespace gpuadmit::cli
