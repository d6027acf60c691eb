#include <catch2/catch.hpp>

#include "gpuadmit/policy/rule_set.hpp"
#include "support/fixtures.hpp"

// docs/policy.md is the reference platform teams read; a rule missing from it is a release blocker.
TEST_CASE("docs/policy.md documents every rule id in the catalogue", "[docs]") {
  const std::string docs = gpuadmit::test::read_text(std::string(GPUADMIT_SOURCE_DIR) + "/docs/policy.md");
  for (std::string_view id : gpuadmit::policy::kRuleIds) {
    INFO(id);
    CHECK(docs.find("### `" + std::string(id) + "`") != std::string::npos);
  }
}
