// FlatMap against std::map: the same operations give the same entries, in the same order.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuadmit/k8s/flat_map.hpp"

using gpuadmit::k8s::FlatMap;

namespace {

using Oracle = std::map<std::string, int, std::less<>>;

std::vector<std::pair<std::string, int>> entries_of(const FlatMap<int>& map) {
  return {map.begin(), map.end()};
}
std::vector<std::pair<std::string, int>> entries_of(const Oracle& map) {
  return {map.begin(), map.end()};
}

}  // namespace

TEST_CASE("a flat map keeps what std::map keeps, in std::string order, over random operations",
          "[flat_map]") {
  const auto seed = GENERATE(1U, 2U, 3U, 4U, 5U, 6U, 7U, 8U);
  CAPTURE(seed);
  std::mt19937 random(seed);
  // Keys that share prefixes and differ only in length or in a byte above 0x7f, where orders could differ.
  const std::vector<std::string> keys = {
      "",     "a",        "ab",           "b", "cpu",   "memory", "nvidia.com/gpu",
      "pods", "\xc3\xa9", "requests.cpu", "A", "a\x01", "aa"};
  FlatMap<int> map;
  Oracle oracle;
  for (int step = 0; step < 400; ++step) {
    const std::string& key = keys[random() % keys.size()];
    const int value = static_cast<int>(random() % 100);
    switch (random() % 5) {
      case 0:
        map[key] = value;
        oracle[key] = value;
        break;
      case 1: {
        const auto [it, inserted] = map.try_emplace(key, value);
        const auto [oracle_it, oracle_inserted] = oracle.try_emplace(key, value);
        CHECK(inserted == oracle_inserted);
        CHECK(it->second == oracle_it->second);
        break;
      }
      case 2:
        map.append(key, value);
        oracle.insert_or_assign(key, value);
        break;
      case 3:
        CHECK(map.contains(key) == oracle.contains(key));
        CHECK((map.find(key) == map.end()) == (oracle.find(key) == oracle.end()));
        if (oracle.contains(key)) {
          CHECK(map.at(key) == oracle.at(key));
        }
        break;
      default:
        erase_if(map, [&](const auto& entry) { return entry.second == value; });
        std::erase_if(oracle, [&](const auto& entry) { return entry.second == value; });
    }
    REQUIRE(entries_of(map) == entries_of(oracle));
  }
}

TEST_CASE("a flat map's lookups, defaults and errors", "[flat_map]") {
  FlatMap<int> map{{"memory", 2}, {"cpu", 1}};
  CHECK(entries_of(map) == std::vector<std::pair<std::string, int>>{{"cpu", 1}, {"memory", 2}});
  CHECK(map.at("cpu") == 1);
  CHECK_THROWS_AS(map.at("nvidia.com/gpu"), std::out_of_range);
  CHECK(map["nvidia.com/gpu"] == 0);  // operator[] inserts a default, as std::map does
  CHECK(map.size() == 3);
  CHECK_FALSE(map.try_emplace("cpu", 9).second);  // try_emplace never overwrites
  CHECK(map.at("cpu") == 1);
  map.append("zz", 5);  // after every key: appended
  map.append("aa", 6);  // out of order: inserted in place
  map.append("zz", 7);  // a repeated key keeps the last value
  CHECK(entries_of(map) == std::vector<std::pair<std::string, int>>{
                               {"aa", 6}, {"cpu", 1}, {"memory", 2}, {"nvidia.com/gpu", 0}, {"zz", 7}});
  FlatMap<int> same{{"zz", 7}, {"nvidia.com/gpu", 0}, {"memory", 2}, {"cpu", 1}, {"aa", 6}};
  CHECK(map == same);
  CHECK(erase_if(map, [](const auto& entry) { return entry.second > 5; }) == 2);
  CHECK_FALSE(map == same);
  CHECK(map.size() == 3);
}

TEST_CASE("a flat map built from a list keeps a repeated key's first value, as std::map does", "[flat_map]") {
  const FlatMap<int> map{{"cpu", 1}, {"memory", 2}, {"cpu", 3}};
  const Oracle oracle{{"cpu", 1}, {"memory", 2}, {"cpu", 3}};
  CHECK(entries_of(map) == entries_of(oracle));
  CHECK(map.at("cpu") == 1);
}
