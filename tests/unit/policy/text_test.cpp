#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpuadmit/policy/text.hpp"

using gpuadmit::policy::one_line;
using gpuadmit::policy::rune_count;

TEST_CASE("one_line folds control characters and bounds the length in characters", "[text]") {
  auto [input, limit, expected] = GENERATE(table<std::string, std::size_t, std::string>({
      {"plain", 120, "plain"},
      {"two\nlines", 120, "two lines"},
      {"tab\tand\r\nmore", 120, "tab and more"},
      {"abcdefghij", 5, "abcd…"},
      {"ääääää", 4, "äää…"},
      {"trailing \n", 120, "trailing "},
  }));
  CAPTURE(input, limit);
  const std::string out = one_line(input, limit);
  CHECK(out == expected);
  CHECK(rune_count(out) <= limit);
}

TEST_CASE("split drops empty items and keeps the order", "[text]") {
  auto [input, expected] = GENERATE(table<std::string, std::vector<std::string>>({
      {"", {}},
      {"a", {"a"}},
      {"b,a", {"b", "a"}},
      {",a,,b,", {"a", "b"}},
      {"spec.*ReplicaSpecs.*.template", {"spec.*ReplicaSpecs.*.template"}},
  }));
  CAPTURE(input);
  CHECK(gpuadmit::policy::split(input, ',') == expected);
}
