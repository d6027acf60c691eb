#include <catch2/catch.hpp>

#include "gpuadmit/cluster/backoff.hpp"

namespace gpuadmit::test {

using namespace std::chrono_literals;

TEST_CASE("backoff waits are drawn from [d/2, d] with d doubling from initial up to max", "[backoff]") {
  struct Case {
    const char* description;
    std::chrono::milliseconds initial;
    std::chrono::milliseconds max;
  };
  const std::vector<Case> cases{
      {"the defaults, 200 ms to 30 s", 200ms, 30s},
      {"a cap that is not a power-of-two multiple, 100 ms to 1.5 s", 100ms, 1500ms},
      {"initial equal to max, 1 s", 1s, 1s},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        cluster::Backoff backoff({c.initial, c.max}, seed);
        std::chrono::milliseconds d = c.initial;
        for (int i = 0; i < 64; ++i) {
          const auto wait = backoff.next();
          CHECK(wait >= d / 2);
          CHECK(wait <= d);
          CHECK(wait <= c.max);
          d = std::min(d * 2, c.max);
        }
      }
    }
  }
}

TEST_CASE("backoff reset starts again from the initial wait", "[backoff]") {
  cluster::Backoff backoff({200ms, 30s}, 7);
  for (int i = 0; i < 10; ++i) (void)backoff.next();
  CHECK(backoff.failures() == 10);
  backoff.reset();
  const auto wait = backoff.next();
  CHECK(wait >= 100ms);
  CHECK(wait <= 200ms);
}

TEST_CASE("backoff jitter differs between replicas (seeds)", "[backoff]") {
  cluster::Backoff a({200ms, 30s}, 1);
  cluster::Backoff b({200ms, 30s}, 2);
  bool differ = false;
  for (int i = 0; i < 8; ++i) differ = differ || a.next() != b.next();
  CHECK(differ);
}

TEST_CASE("backoff survives a nonsensical policy (zero or inverted bounds)", "[backoff]") {
  cluster::Backoff backoff({0ms, 0ms}, 3);
  for (int i = 0; i < 100; ++i) {
    const auto wait = backoff.next();
    CHECK(wait >= 0ms);
    CHECK(wait <= 1ms);
  }
}

}  // namespace gpuadmit::test
