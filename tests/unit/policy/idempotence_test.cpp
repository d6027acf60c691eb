#include <catch2/catch.hpp>

#include <filesystem>

#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;

// The API server may reinvoke a mutating webhook on its own output: mutate(mutate(x)) == mutate(x).
TEST_CASE("mutation is idempotent for every pod fixture", "[idempotence]") {
  const gpuadmit::policy::RuleSet rules;
  std::size_t checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUADMIT_FIXTURES_DIR) + "/pods")) {
    INFO(entry.path().string());
    const nlohmann::json original = gpuadmit::test::yaml(gpuadmit::test::read_text(entry.path().string()));
    auto once = gpuadmit::test::evaluate(original, "ml-team", Mode::kMutate, rules);
    REQUIRE(once.ok());
    const nlohmann::json fixed = original.patch(once->patch);
    auto twice = gpuadmit::test::evaluate(fixed, "ml-team", Mode::kMutate, rules);
    REQUIRE(twice.ok());
    CHECK(twice->fixes.empty());
    CHECK(twice->patch.empty());
    ++checked;
  }
  CHECK(checked >= 8);
}
