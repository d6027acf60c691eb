#include "gpuadmit/server/metrics.hpp"

#include "gpuadmit/policy/catalogue.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace gpuadmit::server {
namespace {

// Shortest round-trip text, in %g style ("0.0001", not "1e-04"), like the Go client's le labels.
std::string format_double(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::array<char, 32> buffer{};
  const auto [end, ec] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::general);
  return ec == std::errc{} ? std::string(buffer.data(), end) : std::string("NaN");
}

// Text format 0.0.4: label values escape backslash, double quote and newline.
void append_escaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void append_help_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

constexpr std::array<admission::Endpoint, 2> kAllEndpoints{admission::Endpoint::kMutate,
                                                           admission::Endpoint::kValidate};
constexpr std::array<admission::Verdict, 5> kAllVerdicts{
    admission::Verdict::kAllowed, admission::Verdict::kPatched, admission::Verdict::kDenied,
    admission::Verdict::kError, admission::Verdict::kMalformed};
// record_review indexes the tables by the enum values.
static_assert(static_cast<std::size_t>(admission::Verdict::kMalformed) == kAllVerdicts.size() - 1);
static_assert(static_cast<std::size_t>(admission::Endpoint::kValidate) == kAllEndpoints.size() - 1);

}  // namespace

Histogram::Histogram(std::span<const double> upper_bounds)
    : bounds_(upper_bounds.begin(), upper_bounds.end()),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::observe(double seconds) noexcept {
  std::size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  const double nanos = seconds > 0 ? seconds * 1e9 : 0.0;
  sum_nanos_.fetch_add(static_cast<std::uint64_t>(nanos), std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::cumulative_counts() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out[i] = running;
  }
  return out;
}

double Histogram::sum() const noexcept {
  return static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
}

// The labels the Prometheus Operator gives every target of a ServiceMonitor (and Prometheus' own job and
// instance): a series carrying one arrives renamed to exported_<label> (honorLabels false, the default), and
// queries on it match the target's value instead, so gpuadmit never uses them.
constexpr std::array<std::string_view, 7> kTargetLabels{"namespace", "service", "pod",     "container",
                                                        "endpoint",  "job",     "instance"};

FamilyBase::FamilyBase(std::string name, std::string help, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {
  for (const std::string& label : label_names_) {
    if (std::find(kTargetLabels.begin(), kTargetLabels.end(), label) != kTargetLabels.end()) {
      throw std::invalid_argument(name_ + ": label \"" + label +
                                  "\" is one Prometheus attaches to every Kubernetes target; name it "
                                  "for what it counts (resource_namespace, webhook)");
    }
  }
}

std::string FamilyBase::series(std::string_view suffix, const std::vector<std::string>& values,
                               std::string_view extra_label) const {
  std::string out = name_;
  out += suffix;
  if (values.empty() && extra_label.empty()) return out;
  out += '{';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += label_names_[i];
    out += "=\"";
    append_escaped(out, values[i]);
    out += '"';
  }
  if (!extra_label.empty()) {
    if (!values.empty()) out += ',';
    out += extra_label;
  }
  out += '}';
  return out;
}

void FamilyBase::header(std::string& out, std::string_view type) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  append_help_escaped(out, help_);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type;
  out += '\n';
}

template <typename Metric>
Metric& Family<Metric>::with(const std::vector<std::string>& label_values) {
  const std::lock_guard lock(mutex_);
  auto& child = children_[label_values];
  if (!child) {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      child = std::make_unique<Histogram>(buckets_);
    } else {
      child = std::make_unique<Metric>();
    }
  }
  return *child;
}

template <typename Metric>
void Family<Metric>::render(std::string& out) const {
  const std::lock_guard lock(mutex_);
  if constexpr (std::is_same_v<Metric, Counter>) {
    header(out, "counter");
    for (const auto& [labels, metric] : children_) {
      out += series("", labels) + ' ' + std::to_string(metric->value()) + '\n';
    }
  } else if constexpr (std::is_same_v<Metric, Gauge>) {
    header(out, "gauge");
    for (const auto& [labels, metric] : children_) {
      out += series("", labels) + ' ' + std::to_string(metric->value()) + '\n';
    }
  } else {
    header(out, "histogram");
    for (const auto& [labels, metric] : children_) {
      const std::vector<std::uint64_t> counts = metric->cumulative_counts();
      const std::span<const double> bounds = metric->upper_bounds();
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const std::string le = i < bounds.size() ? format_double(bounds[i]) : "+Inf";
        out += series("_bucket", labels, "le=\"" + le + "\"") + ' ' + std::to_string(counts[i]) + '\n';
      }
      out += series("_sum", labels) + ' ' + format_double(metric->sum()) + '\n';
      out += series("_count", labels) + ' ' + std::to_string(counts.back()) + '\n';
    }
  }
}

void SampledFamily::render(std::string& out) const {
  header(out, type_);
  for (const auto& [labels, value] : read_()) out += series("", labels) + ' ' + std::to_string(value) + '\n';
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Metrics::Metrics(std::string_view version)
    : in_flight(requests_in_flight.with({})),
      open_connections(connections_open.with({})),
      accepted(connections_accepted.with({})),
      rejected(connections_rejected.with({})),
      evicted(connections_evicted.with({})),
      handshake_failures(tls_handshake_failures.with({})) {
  // Every known series starts at zero so dashboards and rate() see it before the first event.
  for (std::size_t e = 0; e < kEndpoints; ++e) {
    const std::string endpoint(admission::to_string(kAllEndpoints[e]));
    for (std::size_t v = 0; v < kVerdicts; ++v) {
      review_counters_[e][v] = &reviews.with({endpoint, std::string(admission::to_string(kAllVerdicts[v]))});
    }
    review_histograms_[e] = &review_duration.with({endpoint});
    error_counters_[e] = &review_errors.with({endpoint});
    reviews_over_budget.with({endpoint});
  }
  policy_file_rejected.with({});
  for (const std::string_view result : {kReloadSuccess, kReloadFailure}) {
    tls_reloads.with({std::string(result)});
    policy_reloads.with({std::string(result)});
  }
  // Only the actions a rule can fire with: an "off" rule reports nothing.
  constexpr std::array<policy::Action, 3> kFiringActions{policy::Action::kAudit, policy::Action::kWarn,
                                                         policy::Action::kEnforce};
  const auto catalogue = policy::rule_catalogue();
  finding_counters_.resize(catalogue.size());
  for (std::size_t r = 0; r < catalogue.size(); ++r) {
    for (std::size_t a = 0; a < kActions; ++a) {
      const auto action = static_cast<policy::Action>(a);
      const bool fires =
          std::find(kFiringActions.begin(), kFiringActions.end(), action) != kFiringActions.end();
      // "off" never fires; its slot goes through the family so it does not show up as a zero series.
      finding_counters_[r][a] =
          fires ? &rule_findings.with({std::string(catalogue[r].id), std::string(policy::to_string(action))})
                : nullptr;
    }
  }
  for (std::size_t i = 0; i < kKnownStatuses.size(); ++i) {
    response_counters_[i] = &http_responses.with({std::to_string(kKnownStatuses[i])});
  }
  build_info.with({std::string(version)}).set(1);
  families_ = {&reviews,
               &rule_findings,
               &review_duration,
               &review_errors,
               &reviews_over_budget,
               &requests_in_flight,
               &http_responses,
               &connections_open,
               &connections_accepted,
               &connections_rejected,
               &connections_evicted,
               &tls_handshake_failures,
               &tls_reloads,
               &policy_reloads,
               &policy_file_rejected,
               &certificate_renewals,
               &build_info};
}

void Metrics::record_review(admission::Endpoint endpoint, admission::Verdict verdict,
                            double seconds) noexcept {
  const auto e = static_cast<std::size_t>(endpoint);
  const auto v = static_cast<std::size_t>(verdict);
  if (e >= kEndpoints) return;
  if (v < kVerdicts) review_counters_[e][v]->inc();
  review_histograms_[e]->observe(seconds);
  if (verdict == admission::Verdict::kError) error_counters_[e]->inc();
}

void Metrics::record_finding(std::string_view rule, policy::Action action) {
  const auto a = static_cast<std::size_t>(action);
  const auto catalogue = policy::rule_catalogue();
  for (std::size_t r = 0; r < catalogue.size(); ++r) {
    if (catalogue[r].id == rule && a < kActions && finding_counters_[r][a] != nullptr) {
      return finding_counters_[r][a]->inc();
    }
  }
  rule_findings.with({std::string(rule), std::string(policy::to_string(action))}).inc();
}

void Metrics::record_response(int status) {
  for (std::size_t i = 0; i < kKnownStatuses.size(); ++i) {
    if (kKnownStatuses[i] == status) return response_counters_[i]->inc();
  }
  http_responses.with({std::to_string(status)}).inc();
}

std::string Metrics::render() const {
  std::string out;
  out.reserve(8192);
  for (const FamilyBase* family : families_) family->render(out);
  return out;
}

}  // namespace gpuadmit::server
