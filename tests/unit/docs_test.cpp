#include <catch2/catch.hpp>

#include "gpuadmit/policy/catalogue.hpp"
#include "support/fixtures.hpp"

namespace {

std::string source_file(const std::string& path) {
  return gpuadmit::test::read_text(std::string(GPUADMIT_SOURCE_DIR) + "/" + path);
}

// "`gpu-type`, `cuda-driver`, ...": the catalogue's cluster-aware rules as the docs write them.
std::string quoted_cluster_aware_rules() {
  std::string out;
  for (const auto& rule : gpuadmit::policy::rule_catalogue()) {
    if (rule.cluster_aware) out += (out.empty() ? "`" : ", `") + std::string(rule.id) + "`";
  }
  return out;
}

}  // namespace

// docs/policy.md is the reference platform teams read; a rule missing from it is a release blocker.
TEST_CASE("docs/policy.md has the section each catalogue entry's doc anchor points at", "[docs]") {
  const std::string docs = source_file("docs/policy.md");
  for (const auto& rule : gpuadmit::policy::rule_catalogue()) {
    INFO(rule.id);
    // GitHub's anchor of "### `gpu-type`" is #gpu-type.
    CHECK(rule.doc_anchor == rule.id);
    CHECK(docs.find("### `" + std::string(rule.doc_anchor) + "`") != std::string::npos);
  }
}

TEST_CASE("the docs name exactly the catalogue's cluster-aware rules", "[docs]") {
  const std::string list = quoted_cluster_aware_rules();
  CHECK(
      source_file("docs/cluster.md").find("The cluster-aware rules (" + list + ", skipped without a view)") !=
      std::string::npos);
  CHECK(source_file("README.md").find("The cluster-aware rules (" + list + ")") != std::string::npos);
}
