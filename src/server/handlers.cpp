#include "gpuadmit/server/handlers.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpuadmit/server/allocator.hpp"

namespace gpuadmit::server {
namespace {

LogLine review_line(spdlog::level::level_enum level, admission::Endpoint endpoint,
                    const admission::Outcome& outcome, std::chrono::microseconds latency) {
  LogLine line(level, "review");
  line.add("uid", outcome.uid)
      .add("namespace", outcome.namespace_)
      .add("name", outcome.name)
      .add("kind", outcome.kind)
      .add("operation", outcome.operation)
      .add("user", outcome.user)
      .add("endpoint", admission::to_string(endpoint))
      .add("verdict", admission::to_string(outcome.verdict))
      .add("rules_fired", outcome.rules_fired)
      .add("patch_ops", static_cast<std::uint64_t>(outcome.patch_operations))
      .add("warnings", static_cast<std::uint64_t>(outcome.warnings));
  if (!outcome.audits.empty()) {
    LogFields audits = LogFields::array();
    for (const policy::Finding& finding : outcome.audits) {
      audits.push_back({{"rule", finding.rule}, {"summary", finding.summary}});
    }
    line.add_json("audits", audits);
  }
  if (!outcome.error.empty()) line.add("error", outcome.error);
  line.add("latency_us", static_cast<std::int64_t>(latency.count()));
  return line;
}

}  // namespace

std::optional<std::chrono::milliseconds> api_server_timeout(std::string_view target) {
  const std::size_t query = target.find('?');
  if (query == std::string_view::npos) return std::nullopt;
  std::string_view rest = target.substr(query + 1);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (!pair.starts_with("timeout=")) continue;
    std::string_view value = pair.substr(8);
    std::int64_t scale = 1000;
    if (value.ends_with("ms")) {
      scale = 1;
      value.remove_suffix(2);
    } else if (value.ends_with('s')) {
      value.remove_suffix(1);
    } else {
      return std::nullopt;
    }
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() || n <= 0 || n > 3600 * 1000)
      return std::nullopt;
    return std::chrono::milliseconds(n * scale);
  }
  return std::nullopt;
}

namespace {

// Started on an invalid policy file: not ready, so only a caller that bypasses the Service gets here. 500
// lets the API server's failurePolicy decide; an allow would be a silent one.
Response no_policy_response(admission::Endpoint endpoint, const ReviewDependencies& deps) {
  deps.metrics.record_review(endpoint, admission::Verdict::kError, 0);
  return text_response(500, "gpuadmit has no valid policy: " + deps.policy.unloaded_reason());
}

}  // namespace

Handler review_handler(admission::Endpoint endpoint, ReviewDependencies deps) {
  return [endpoint, deps = std::move(deps)](const Request& request) {
    if (!is_json_media_type(request.content_type)) {
      return text_response(415, "unsupported media type \"" + request.content_type.substr(0, 100) +
                                    "\"; send Content-Type: application/json");
    }
    // The request keeps this snapshot to the end, whatever reloads happen meanwhile.
    const std::shared_ptr<const policy::PolicySet> policies = deps.policy.policies();
    if (policies == nullptr) return no_policy_response(endpoint, deps);
    const std::optional<policy::ClusterView> cluster = deps.cluster_view ? deps.cluster_view() : std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    std::chrono::milliseconds deadline = deps.review_deadline;
    if (const auto timeout = api_server_timeout(request.target)) deadline = std::min(deadline, *timeout / 2);
    const auto end = start + deadline;
    policy::ReviewBudget budget(
        policy::kReviewStepBudget, [end] { return std::chrono::steady_clock::now() >= end; },
        std::to_string(deadline.count()) + " ms");
    admission::Outcome outcome;
    try {
      outcome = deps.review(
          request.body, endpoint, *policies, cluster ? &*cluster : nullptr,
          [&store = deps.policy](const nlohmann::json& object) { return store.object_problems(object); },
          budget);
    } catch (const std::exception& e) {
      // admission::review promises not to throw; if it does anyway, this is "could not decide", counted and
      // answered with a 500 so the apiserver's failurePolicy applies, never an allow.
      const auto elapsed = std::chrono::steady_clock::now() - start;
      deps.metrics.record_review(endpoint, admission::Verdict::kError,
                                 std::chrono::duration<double>(elapsed).count());
      deps.log.error("review failed", {{"endpoint", admission::to_string(endpoint)}, {"error", e.what()}});
      return text_response(500, "gpuadmit could not decide: internal error");
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    deps.metrics.record_review(endpoint, outcome.verdict, std::chrono::duration<double>(elapsed).count());
    if (!budget.exhausted().empty())
      deps.metrics.reviews_over_budget.with({std::string(admission::to_string(endpoint))}).inc();
    const policy::RuleSet& rules = policies->for_namespace(outcome.namespace_);
    for (const std::string& rule : outcome.rules_fired)
      deps.metrics.record_finding(rule, rules.action_of(rule));
    const auto level =
        outcome.verdict == admission::Verdict::kError ? spdlog::level::err : spdlog::level::info;
    if (deps.log.enabled(level)) {
      deps.log.write(review_line(level, endpoint, outcome,
                                 std::chrono::duration_cast<std::chrono::microseconds>(elapsed)));
    }
    if (deps.log.enabled(spdlog::level::debug)) {
      // Objects can carry secrets in env values: only at debug, on request.
      deps.log.debug("review body",
                     {{"uid", outcome.uid}, {"request", request.body}, {"response", outcome.body}});
    }
    Response response;
    response.status = outcome.http_status;
    response.content_type = outcome.http_status == 200 ? "application/json" : "text/plain; charset=utf-8";
    response.body = std::move(outcome.body);
    return response;
  };
}

Handler health_handler() {
  return [](const Request&) { return text_response(200, "ok"); };
}

Handler ready_handler(const Readiness& readiness) {
  return [&readiness](const Request&) {
    const std::vector<std::string> unmet = readiness.unmet();
    if (unmet.empty()) return text_response(200, "ok");
    std::string body;
    for (const std::string& reason : unmet) body += reason + "\n";
    return text_response(503, std::move(body));
  };
}

Handler metrics_handler(const Metrics& metrics, JsonLog log, std::function<std::string()> extra) {
  auto dropped = std::make_shared<const SampledFamily>(
      "gpuadmit_log_lines_dropped_total",
      "Log lines dropped because stdout was not read fast enough (reviews never wait for the log).",
      "counter", std::vector<std::string>{}, [log = std::move(log)] {
        return SampledFamily::Series{{{}, log.dropped_lines()}};
      });
  auto allocator = std::make_shared<const SampledFamily>(
      "gpuadmit_allocator_bytes",
      "Heap memory by state: in_use by gpuadmit, free (held by the allocator, given back to the system when "
      "more than 16 MiB), released (already given back).",
      "gauge", std::vector<std::string>{"allocator", "state"}, [] {
        const AllocatorStats stats = allocator_stats();
        const std::string name(stats.allocator);
        return SampledFamily::Series{{{name, "in_use"}, stats.in_use},
                                     {{name, "free"}, stats.free},
                                     {{name, "released"}, stats.released}};
      });
  return [&metrics, dropped = std::move(dropped), allocator = std::move(allocator),
          extra = std::move(extra)](const Request&) {
    std::string body = metrics.render();
    dropped->render(body);
    allocator->render(body);
    if (extra) body += extra();
    return Response{200, std::string(kPrometheusContentType), std::move(body), {}};
  };
}

Handler client_certificate_required(Handler handler) {
  return [handler = std::move(handler)](const Request& request) {
    if (!request.client_certificate) {
      return text_response(401,
                           "gpuadmit answers reviews only to callers with a client certificate from its "
                           "--client-ca-file; configure the API server's admission kubeconfig (see "
                           "docs/cluster.md)");
    }
    return handler(request);
  };
}

Router make_router(const ReviewDependencies& deps, const Readiness& readiness, const RouterOptions& options) {
  Router router;
  Handler mutate = review_handler(admission::Endpoint::kMutate, deps);
  Handler validate = review_handler(admission::Endpoint::kValidate, deps);
  if (options.require_client_certificate) {
    mutate = client_certificate_required(std::move(mutate));
    validate = client_certificate_required(std::move(validate));
  }
  router.add("POST", "/mutate", std::move(mutate), Placement::kWorker);
  router.add("POST", "/validate", std::move(validate), Placement::kWorker);
  router.add("GET", "/healthz", health_handler());
  router.add("GET", "/readyz", ready_handler(readiness));
  if (options.metrics)
    router.add("GET", "/metrics", metrics_handler(deps.metrics, deps.log, options.extra_metrics));
  return router;
}

Router make_metrics_router(const ReviewDependencies& deps, const Readiness& readiness,
                           std::function<std::string()> extra_metrics) {
  Router router;
  router.add("GET", "/healthz", health_handler());
  router.add("GET", "/readyz", ready_handler(readiness));
  router.add("GET", "/metrics", metrics_handler(deps.metrics, deps.log, std::move(extra_metrics)));
  return router;
}

}  // namespace gpuadmit::server
