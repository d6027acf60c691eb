// The registry's text format: what Prometheus scrapes must parse.
#include <catch2/catch.hpp>

#include "gpuadmit/server/metrics.hpp"

namespace gpuadmit::server {
namespace {

TEST_CASE("counters render with HELP, TYPE and escaped label values") {
  Family<Counter> family("test_total", "A test.\nSecond line.", {"path"});
  family.with({"a\"b\\c\nd"}).inc(3);
  std::string out;
  family.render(out);
  CHECK(out ==
        "# HELP test_total A test.\\nSecond line.\n"
        "# TYPE test_total counter\n"
        "test_total{path=\"a\\\"b\\\\c\\nd\"} 3\n");
}

TEST_CASE("histograms render cumulative buckets, +Inf, sum and count") {
  constexpr std::array<double, 3> kBuckets{0.001, 0.01, 0.1};
  Family<Histogram> family("latency_seconds", "Latency.", {"webhook"}, kBuckets);
  Histogram& histogram = family.with({"mutate"});
  for (const double seconds : {0.0005, 0.001, 0.005, 0.5}) histogram.observe(seconds);
  std::string out;
  family.render(out);
  CHECK(out ==
        "# HELP latency_seconds Latency.\n"
        "# TYPE latency_seconds histogram\n"
        "latency_seconds_bucket{webhook=\"mutate\",le=\"0.001\"} 2\n"
        "latency_seconds_bucket{webhook=\"mutate\",le=\"0.01\"} 3\n"
        "latency_seconds_bucket{webhook=\"mutate\",le=\"0.1\"} 3\n"
        "latency_seconds_bucket{webhook=\"mutate\",le=\"+Inf\"} 4\n"
        "latency_seconds_sum{webhook=\"mutate\"} 0.5065\n"
        "latency_seconds_count{webhook=\"mutate\"} 4\n");
}

TEST_CASE("a label that Prometheus attaches to every Kubernetes target is refused, so no series is renamed") {
  // The Prometheus Operator's ServiceMonitor gives each target namespace, service, pod, container, endpoint,
  // job and instance; a series with one of them arrives as exported_<label>, and queries on it match the
  // target's value instead.
  const std::string label =
      GENERATE("namespace", "service", "pod", "container", "endpoint", "job", "instance");
  CAPTURE(label);
  CHECK_THROWS_WITH(Family<Counter>("test_total", "A test.", {"rule", label}),
                    Catch::Contains("test_total") && Catch::Contains("label \"" + label + "\""));
  CHECK_THROWS(
      SampledFamily("test_objects", "A test.", "gauge", {label}, [] { return SampledFamily::Series{}; }));
  CHECK_NOTHROW(Family<Counter>("test_total", "A test.", {"rule", "resource_namespace", "webhook"}));
}

TEST_CASE("a sampled counter renders the value its function returns at each scrape") {
  std::uint64_t value = 0;
  const SampledFamily counter("lines_dropped_total", "Lines dropped.", "counter", {}, [&value] {
    return SampledFamily::Series{{{}, value}};
  });
  std::string first;
  counter.render(first);
  value = 42;
  std::string second;
  counter.render(second);
  CHECK(first ==
        "# HELP lines_dropped_total Lines dropped.\n"
        "# TYPE lines_dropped_total counter\n"
        "lines_dropped_total 0\n");
  CHECK_THAT(second, Catch::EndsWith("\nlines_dropped_total 42\n"));
}

TEST_CASE("sampled gauges render every series their function returns at each scrape") {
  std::uint64_t free = 5;
  const SampledFamily gauges("heap_bytes", "Heap by state.", "gauge", {"allocator", "state"}, [&free] {
    return SampledFamily::Series{{{"tcmalloc", "in_use"}, 7}, {{"tcmalloc", "free"}, free}};
  });
  std::string first;
  gauges.render(first);
  free = 0;
  std::string second;
  gauges.render(second);
  CHECK(first ==
        "# HELP heap_bytes Heap by state.\n"
        "# TYPE heap_bytes gauge\n"
        "heap_bytes{allocator=\"tcmalloc\",state=\"in_use\"} 7\n"
        "heap_bytes{allocator=\"tcmalloc\",state=\"free\"} 5\n");
  CHECK_THAT(second, Catch::EndsWith("\nheap_bytes{allocator=\"tcmalloc\",state=\"free\"} 0\n"));
}

TEST_CASE("the webhook's metrics start at zero for every known series") {
  const Metrics metrics("1.2.3");
  const std::string text = metrics.render();
  for (const char* line : {
           R"(gpuadmit_admission_reviews_total{webhook="mutate",verdict="allowed"} 0)",
           R"(gpuadmit_admission_reviews_total{webhook="validate",verdict="error"} 0)",
           R"(gpuadmit_admission_errors_total{webhook="validate"} 0)",
           R"(gpuadmit_admission_review_duration_seconds_bucket{webhook="mutate",le="0.0001"} 0)",
           R"(gpuadmit_tls_certificate_reloads_total{result="failure"} 0)",
           R"(gpuadmit_policy_reloads_total{result="success"} 0)",
           "gpuadmit_http_requests_in_flight 0",
           "gpuadmit_tls_handshake_failures_total 0",
           R"(gpuadmit_build_info{version="1.2.3"} 1)",
       }) {
    CHECK_THAT(text, Catch::Contains(std::string(line) + "\n"));
  }
}

}  // namespace
}  // namespace gpuadmit::server
