// The webhook's HTTP handlers, as plain functions of a Request (see router.hpp), and the router that wires
// them. The review handler is the adapter boundary: it bounds the input (media type), takes the policy
// snapshot for the request, calls the admission layer, and records the review's log line and metrics.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

#include "gpuadmit/admission/review.hpp"
#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/metrics.hpp"
#include "gpuadmit/server/policy_store.hpp"
#include "gpuadmit/server/readiness.hpp"
#include "gpuadmit/server/router.hpp"

namespace gpuadmit::server {

// admission::review in production (the webhook passes it). The handler's tests substitute fakes: one that
// records what it was given, and one that throws, which admission::review never does, to reach the handler's
// "could not decide" answer.
using ReviewFunction = std::function<admission::Outcome(
    std::string_view body, admission::Endpoint, const policy::PolicySet&, const policy::ClusterView*,
    const admission::PolicyObjectCheck&, policy::ReviewBudget&)>;

// The cluster view a review should use, taken once per request (like the policy snapshot); nullopt when
// there is none yet, and the cluster-aware rules are skipped.
using ClusterViewSource = std::function<std::optional<policy::ClusterView>()>;

// A review is answered in under a millisecond; one second is for claims with many selectors on thousands
// of nodes, and leaves two of the chart's three seconds (webhooks.*.timeoutSeconds) to spare.
inline constexpr std::chrono::milliseconds kReviewDeadline{1000};

struct ReviewDependencies {
  const PolicyStore& policy;
  Metrics& metrics;
  JsonLog log;
  ReviewFunction review;
  ClusterViewSource cluster_view{};  // empty: no cluster view
  // How long a review may evaluate device selectors (policy/review_budget.hpp), at most half the timeout
  // the API server puts on the call (?timeout=3s): past it the review answers with what it has, and says
  // what it did not evaluate, long before the API server gives up on it.
  std::chrono::milliseconds review_deadline{kReviewDeadline};
};

// The API server's timeout for this call, from the ?timeout= it adds to the webhook's URL ("3s"); nullopt
// when the target says none, or one that is not a whole number of seconds or milliseconds.
std::optional<std::chrono::milliseconds> api_server_timeout(std::string_view target);

Handler review_handler(admission::Endpoint endpoint, ReviewDependencies deps);
Handler health_handler();
Handler ready_handler(const Readiness& readiness);
// Metrics' series, then the log's dropped lines (counted by the LogWriter, which exists before Metrics),
// then `extra`, when set (series owned by another layer).
Handler metrics_handler(const Metrics& metrics, JsonLog log, std::function<std::string()> extra = {});

struct RouterOptions {
  std::function<std::string()> extra_metrics{};  // appended to GET /metrics
  // --client-ca-file: /mutate and /validate answer 401 to a caller without a verified client certificate.
  bool require_client_certificate = false;
  // --metrics-listen: /metrics is served on its own port (make_metrics_router), not here.
  bool metrics = true;
};

// POST /mutate, POST /validate, GET /healthz, GET /readyz, GET /metrics.
Router make_router(const ReviewDependencies& deps, const Readiness& readiness,
                   const RouterOptions& options = {});
// The --metrics-listen port's: GET /metrics, /healthz and /readyz.
Router make_metrics_router(const ReviewDependencies& deps, const Readiness& readiness,
                           std::function<std::string()> extra_metrics);

// `handler`, answering 401 to a request without a verified client certificate.
Handler client_certificate_required(Handler handler);

inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace gpuadmit::server
