// A small Prometheus registry of our own (text format 0.0.4), sized for what the webhook counts.
// Counters, gauges and histogram buckets are atomics; a family's children are created once under a mutex
// and never move, so hot paths resolve them up front and then only touch atomics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadmit/admission/review.hpp"

namespace gpuadmit::server {

class Counter {
 public:
  void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void add(std::int64_t n) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  void set(std::int64_t n) noexcept { value_.store(n, std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

// Observations in seconds; the sum is kept in nanoseconds so it can be an integer atomic.
class Histogram {
 public:
  explicit Histogram(std::span<const double> upper_bounds);
  void observe(double seconds) noexcept;

  [[nodiscard]] std::span<const double> upper_bounds() const noexcept { return bounds_; }
  [[nodiscard]] std::vector<std::uint64_t> cumulative_counts() const;  // one per bound, then +Inf
  [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  [[nodiscard]] double sum() const noexcept;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // non-cumulative; the last is +Inf
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_nanos_{0};
};

// Sub-millisecond reviews are the norm; the apiserver's own buckets start at 5 ms and would hide them.
inline constexpr std::array<double, 13> kReviewDurationBuckets{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::vector<std::string> label_names);
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;
  FamilyBase(FamilyBase&&) = delete;
  FamilyBase& operator=(FamilyBase&&) = delete;
  virtual ~FamilyBase() = default;

  virtual void render(std::string& out) const = 0;

 protected:
  [[nodiscard]] std::string series(std::string_view suffix, const std::vector<std::string>& values,
                                   std::string_view extra_label = {}) const;
  void header(std::string& out, std::string_view type) const;

  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
};

// One metric name with labels. `with` returns a child that lives as long as the family.
template <typename Metric>
class Family final : public FamilyBase {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::span<const double> buckets = {})
      : FamilyBase(std::move(name), std::move(help), std::move(label_names)), buckets_(buckets) {}

  Metric& with(const std::vector<std::string>& label_values);
  void render(std::string& out) const override;

 private:
  std::span<const double> buckets_;  // histograms only; points at static storage
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;
};

// Series read at scrape time from something Metrics does not own: the LogWriter's dropped lines (the writer
// exists before Metrics does, to log start-up errors), the allocator's figures. Each read gives every
// series, as label values and a value; `type` is the Prometheus type ("counter", "gauge").
class SampledFamily final : public FamilyBase {
 public:
  using Series = std::vector<std::pair<std::vector<std::string>, std::uint64_t>>;
  SampledFamily(std::string name, std::string help, std::string_view type,
                std::vector<std::string> label_names, std::function<Series()> read)
      : FamilyBase(std::move(name), std::move(help), std::move(label_names)),
        type_(type),
        read_(std::move(read)) {}

  void render(std::string& out) const override;

 private:
  std::string_view type_;
  std::function<Series()> read_;
};

// Everything the webhook reports on /metrics.
class Metrics {
 public:
  explicit Metrics(std::string_view version);

  // The hot path of a review: pre-resolved children, atomics only.
  void record_review(admission::Endpoint endpoint, admission::Verdict verdict, double seconds) noexcept;
  void record_finding(std::string_view rule, policy::Action action);
  // Per response: the codes the server sends are pre-resolved; anything else goes through the family.
  void record_response(int status);

  Family<Counter> reviews{"gpuadmit_admission_reviews_total",
                          "AdmissionReviews answered, by webhook (mutate, validate) and verdict.",
                          {"webhook", "verdict"}};
  Family<Counter> rule_findings{
      "gpuadmit_admission_rule_findings_total",
      "Rules that reported or fixed something in a review, by rule and configured action.",
      {"rule", "action"}};
  Family<Histogram> review_duration{
      "gpuadmit_admission_review_duration_seconds",
      "Time to decide one AdmissionReview, from body received to response built.",
      {"webhook"},
      kReviewDurationBuckets};
  Family<Counter> review_errors{"gpuadmit_admission_errors_total",
                                "Reviews gpuadmit could not decide (denied with code 500), by webhook.",
                                {"webhook"}};
  Family<Counter> reviews_over_budget{
      "gpuadmit_admission_reviews_over_budget_total",
      "Reviews that spent their device-selector budget or passed their deadline before every selector of "
      "the pod's DRA claims was evaluated (answered with a dra-claims warning, or a denial under overBudget: "
      "enforce), by webhook.",
      {"webhook"}};
  Family<Gauge> requests_in_flight{
      "gpuadmit_http_requests_in_flight", "HTTP requests read and not yet answered.", {}};
  Family<Counter> http_responses{
      "gpuadmit_http_responses_total", "HTTP responses sent, by status code.", {"code"}};
  Family<Gauge> connections_open{"gpuadmit_http_connections_open", "Client connections currently open.", {}};
  Family<Counter> connections_accepted{
      "gpuadmit_http_connections_accepted_total", "Connections accepted and served.", {}};
  Family<Counter> connections_rejected{
      "gpuadmit_http_connections_rejected_total",
      "New connections closed at once: the connection cap was reached and every open one was being answered.",
      {}};
  Family<Counter> connections_evicted{
      "gpuadmit_http_connections_evicted_total",
      "Connections closed at the connection cap to make room for a new one, of the client holding the most: "
      "its oldest never answered, else its least recently active.",
      {}};
  Family<Counter> tls_handshake_failures{
      "gpuadmit_tls_handshake_failures_total", "TLS handshakes that failed or timed out.", {}};
  Family<Counter> tls_reloads{"gpuadmit_tls_certificate_reloads_total",
                              "Serving certificate reloads after the files changed, by result.",
                              {"result"}};
  Family<Counter> policy_reloads{
      "gpuadmit_policy_reloads_total",
      "Policy reloads, by result: the policy file after it changed, and with --policy-objects each "
      "new version of a ClusterGPUPolicy or GPUPolicy (failure: it does not load; the last valid one stays).",
      {"result"}};
  Family<Gauge> policy_file_rejected{"gpuadmit_policy_file_rejected",
                                     "1 while the policy file holds a version that does not load (the last "
                                     "valid one stays in force), else 0.",
                                     {}};
  Family<Counter> certificate_renewals{
      "gpuadmit_certificate_renewals_total",
      "With --renew-secret, serving certificate renewals, by result: renewed (written to the Secret and "
      "served), conflict (another replica renewed first), failure (see the log).",
      {"result"}};
  Family<Gauge> build_info{"gpuadmit_build_info", "Always 1; the version is in the label.", {"version"}};

  // Unlabelled series, resolved once.
  Gauge& in_flight;
  Gauge& open_connections;
  Counter& accepted;
  Counter& rejected;
  Counter& evicted;
  Counter& handshake_failures;

  [[nodiscard]] std::string render() const;

 private:
  static constexpr std::size_t kEndpoints = 2;
  static constexpr std::size_t kVerdicts = 5;
  static constexpr std::size_t kActions = 4;
  // [rule in catalogue order][action]; rules outside the catalogue go through the family.
  std::vector<std::array<Counter*, kActions>> finding_counters_;
  std::array<std::array<Counter*, kVerdicts>, kEndpoints> review_counters_{};
  std::array<Histogram*, kEndpoints> review_histograms_{};
  std::array<Counter*, kEndpoints> error_counters_{};
  // Every status the server itself sends.
  static constexpr std::array<int, 9> kKnownStatuses{200, 400, 404, 405, 413, 415, 431, 500, 503};
  std::array<Counter*, kKnownStatuses.size()> response_counters_{};
  std::vector<const FamilyBase*> families_;
};

// "success" / "failure": the result label of the reload counters.
inline constexpr std::string_view kReloadSuccess = "success";
inline constexpr std::string_view kReloadFailure = "failure";

}  // namespace gpuadmit::server
