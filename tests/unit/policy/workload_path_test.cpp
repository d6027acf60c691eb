#include <catch2/catch.hpp>

#include <string>

#include "gpuadmit/policy/workload_path.hpp"

using gpuadmit::policy::Factor;
using gpuadmit::policy::parse_factor;
using gpuadmit::policy::parse_workload_path;
using gpuadmit::policy::PathStep;
using gpuadmit::policy::WorkloadPath;
using Select = gpuadmit::policy::PathStep::Select;

TEST_CASE("a dotted path parses into member steps, a star globbing map keys", "[workload-path]") {
  WorkloadPath path;
  REQUIRE_FALSE(parse_workload_path("spec.*ReplicaSpecs.*.template", path));
  REQUIRE(path.steps.size() == 4);
  CHECK(path.steps[1].member == "*ReplicaSpecs");
  CHECK(path.steps[2].member == "*");
  for (const PathStep& step : path.steps) CHECK(step.select == Select::kNone);
  CHECK(path.text == "spec.*ReplicaSpecs.*.template");
}

TEST_CASE("a star, a keyed star, a key=value and an index selector each parse", "[workload-path]") {
  auto [text, select, key, value, index] =
      GENERATE(table<std::string, Select, std::string, std::string, int>({
          {"spec.groups[*].template", Select::kEach, "", "", 0},
          {"spec.groups[groupName=*].template", Select::kEach, "groupName", "", 0},
          {"spec.groups[name=workers].template", Select::kWhere, "name", "workers", 0},
          {"spec.groups[12].template", Select::kIndex, "", "", 12},
          // A dot inside brackets belongs to the value.
          {"spec.groups[name=a.b].template", Select::kWhere, "name", "a.b", 0},
      }));
  CAPTURE(text);
  WorkloadPath path;
  REQUIRE_FALSE(parse_workload_path(text, path));
  REQUIRE(path.steps.size() == 3);
  const PathStep& step = path.steps[1];
  CHECK(step.member == "groups");
  CHECK(step.select == select);
  CHECK(step.key == key);
  CHECK(step.value == value);
  CHECK(step.index == static_cast<std::size_t>(index));
  CHECK(path.steps[2].member == "template");
}

TEST_CASE("a malformed path is an error at the offset of its bad character", "[workload-path]") {
  auto [text, offset, what] = GENERATE(table<std::string, std::size_t, std::string>({
      {"", 0, "empty step"},
      {"spec..template", 5, "empty step"},
      {"spec.template.", 14, "empty step"},
      {".spec", 0, "empty step"},
      {"spec.groups[*.template", 11, "not closed"},
      {"spec.groups[[*]].template", 11, "not closed"},
      {"spec.groups[].template", 11, "empty []"},
      {"spec.groups[=x].template", 12, "member name before ="},
      {"spec.groups[name=].template", 17, "value or *"},
      {"spec.groups[na*me=*].template", 14, "key of []"},
      {"spec.groups[x].template", 12, "key=value"},
      {"spec.groups[*]template", 14, "separated by dots"},
      {"spec.groups[*][*]", 14, "separated by dots"},
      {"spec.temp late", 9, "separated by dots"},
      {"spec/template", 4, "separated by dots"},
      {std::string(600, 'a'), 512, "at most 512 bytes"},
  }));
  CAPTURE(text);
  WorkloadPath path;
  const auto error = parse_workload_path(text, path);
  REQUIRE(error);
  CHECK(error->offset == offset);
  CHECK_THAT(error->what, Catch::Contains(what));
}

TEST_CASE("a count is a number, a member path, a path from the root, or either minus a number",
          "[workload-path]") {
  Factor f;
  REQUIRE_FALSE(parse_factor("0", f));
  CHECK_FALSE(f.ref);
  CHECK(f.number == 0);
  REQUIRE_FALSE(parse_factor("template.spec.parallelism", f));
  REQUIRE(f.ref);
  CHECK_FALSE(f.ref->from_root);
  CHECK(f.ref->members == std::vector<std::string>{"template", "spec", "parallelism"});
  REQUIRE_FALSE(parse_factor("$.spec.leaderWorkerTemplate.size - 1", f));
  REQUIRE(f.ref);
  CHECK(f.ref->from_root);
  CHECK(f.ref->members == std::vector<std::string>{"spec", "leaderWorkerTemplate", "size"});
  CHECK(f.minus == 1);
  // A dash without spaces is part of a member name, as Kubernetes names allow.
  REQUIRE_FALSE(parse_factor("num-hosts", f));
  CHECK(f.ref->members == std::vector<std::string>{"num-hosts"});

  auto [text, offset] = GENERATE(table<std::string, std::size_t>(
      {{"size - x", 7}, {"a..b", 2}, {"$.", 2}, {"a * 2", 1}, {"a[0]", 1}, {"", 0}}));
  CAPTURE(text);
  const auto error = parse_factor(text, f);
  REQUIRE(error);
  CHECK(error->offset == offset);
}
