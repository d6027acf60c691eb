// The webhook's HTTP handlers, as plain functions of a Request (see router.hpp), and the router that wires
// them. The review handler is the adapter boundary: it bounds the input (media type), takes the policy
// snapshot for the request, calls the admission layer, and records the review's log line and metrics.
#pragma once

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
using ReviewFunction =
    std::function<admission::Outcome(std::string_view body, admission::Endpoint, const policy::PolicySet&,
                                     const policy::ClusterView*, const admission::PolicyObjectCheck&)>;

// The cluster view a review should use, taken once per request (like the policy snapshot); nullopt when
// there is none yet, and the cluster-aware rules are skipped.
using ClusterViewSource = std::function<std::optional<policy::ClusterView>()>;

struct ReviewDependencies {
  const PolicyStore& policy;
  Metrics& metrics;
  JsonLog log;
  ReviewFunction review;
  ClusterViewSource cluster_view{};  // empty: no cluster view
};

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
