// serve's background audit: while this replica holds the Lease, every interval, the pods, claims and
// workloads are judged as `gpuadmit audit` judges them (audit_cluster, the same code), against the cluster
// view the webhook uses and the policies in force; the results become PolicyReports and
// gpuadmit_audit_violations. Nothing is patched.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "gpuadmit/admission/policy_report.hpp"
#include "gpuadmit/cli/serve_cluster_view.hpp"
#include "gpuadmit/cluster/lease.hpp"
#include "gpuadmit/cluster/reflector.hpp"
#include "gpuadmit/common/duration.hpp"
#include "gpuadmit/server/metrics.hpp"
#include "live_cluster.hpp"

namespace gpuadmit::cli {
namespace {

constexpr std::chrono::seconds kMinAuditInterval{10};
constexpr int kNotFound = 404;
constexpr std::string_view kReports = "/apis/wgpolicyk8s.io/v1alpha2";

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "gpuadmit";
  return name.data();
}

// One family of the audit's metrics, rendered as the server renders its own (label escaping included).
void render_family(std::string& out, std::string name, std::string help, std::string_view type,
                   std::vector<std::string> labels, server::SampledFamily::Series series) {
  server::SampledFamily(std::move(name), std::move(help), type, std::move(labels), [&series] {
    return series;
  }).render(out);
}

class LeaseAudit final : public server::BackgroundAudit {
 public:
  LeaseAudit(std::shared_ptr<cluster::ApiTransport> transport, cluster::LeaseSettings lease,
             std::chrono::seconds interval, const server::ClusterViewProvider& view, server::JsonLog log)
      : transport_(std::move(transport)),
        election_(transport_, std::move(lease), cluster::steady_clock(), json_log_sink(log)),
        interval_(interval),
        view_(view),
        log_(std::move(log)) {}
  ~LeaseAudit() override { LeaseAudit::stop(); }
  LeaseAudit(const LeaseAudit&) = delete;
  LeaseAudit& operator=(const LeaseAudit&) = delete;
  LeaseAudit(LeaseAudit&&) = delete;
  LeaseAudit& operator=(LeaseAudit&&) = delete;

  void start(Policies policies) override {
    policies_ = std::move(policies);
    election_thread_ = std::jthread([this](std::stop_token stop) { election_.run(std::move(stop)); });
    audit_thread_ = std::jthread([this](std::stop_token stop) { loop(std::move(stop)); });
  }

  void stop() override {
    // The audit first, so that it is not mid-run when the Lease is given up.
    audit_thread_.request_stop();
    if (audit_thread_.joinable()) audit_thread_.join();
    election_thread_.request_stop();
    if (election_thread_.joinable()) election_thread_.join();
  }

  [[nodiscard]] std::string metrics_text() const override {
    const std::lock_guard lock(mutex_);
    server::SampledFamily::Series violations;
    for (const auto& [key, row] : last_.rows) {
      const auto& [ns, rule, verdict] = key;
      violations.push_back({{rule, ns, std::string(admission::to_string(verdict))}, row.count});
    }
    std::string out;
    render_family(out, "gpuadmit_audit_violations",
                  "Objects the last background audit found breaking a rule, by namespace, rule and what "
                  "admission would do now (deny, fix, warn, audit).",
                  "gauge", {"rule", "resource_namespace", "action"}, std::move(violations));
    render_family(out, "gpuadmit_audit_objects", "Objects the last background audit judged.", "gauge", {},
                  {{{}, last_.audited}});
    render_family(out, "gpuadmit_audit_runs_total", "Background audits run by this replica, by result.",
                  "counter", {"result"}, {{{"success"}, succeeded_}, {{"failure"}, failed_}});
    render_family(out, "gpuadmit_audit_last_success_timestamp_seconds",
                  "When this replica last finished an audit (0: never).", "gauge", {},
                  {{{}, static_cast<std::uint64_t>(std::max<std::int64_t>(last_success_, 0))}});
    render_family(out, "gpuadmit_audit_leader", "1 while this replica holds the audit Lease.", "gauge", {},
                  {{{}, election_.leading() ? 1U : 0U}});
    return out;
  }

 private:
  // Audits on becoming the holder, then every interval while it holds the Lease; the view must be synced.
  void loop(const std::stop_token& stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::optional<cluster::Instant> last;
    while (!stop.stop_requested()) {
      if (!election_.leading() && last) {
        // Only the holder exports violations: a replica that lost the Lease would export stale ones.
        last.reset();
        const std::lock_guard lock(mutex_);
        last_ = {};
      }
      const auto now = cluster::steady_clock().now();
      if (election_.leading() && view_.synced() && (!last || now - *last >= interval_)) {
        last = now;
        run_once(stop);
      }
      std::unique_lock lock(mutex);
      wake.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    }
  }

  void run_once(const std::stop_token& stop) {
    const auto started = std::chrono::steady_clock::now();
    const auto policies = policies_();
    if (policies == nullptr) return;  // started on an invalid policy file: nothing to judge by yet
    const policy::ClusterView view = view_.view();
    AuditScope scope;
    scope.on_forbidden = [this](const cluster::ServedKind& kind, const std::string& why) {
      log_.warn("background audit: a workload kind is not listed (RBAC)",
                {{"kind", kind.api_version + "/" + kind.kind}, {"error", why}});
    };
    scope.keep_going = [this] { return election_.leading(); };
    auto audit = audit_cluster(*transport_, *policies, view, scope, stop);
    if (!audit) {
      if (stop.stop_requested()) return;
      const std::lock_guard lock(mutex_);
      ++failed_;
      log_.warn("background audit failed; retried after the interval", {{"error", audit.error().message}});
      return;
    }
    const std::int64_t now_seconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const std::size_t written = write_reports(*audit, now_seconds, stop);
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    log_.info("background audit done", {{"objects", audit->audited},
                                        {"would_deny", audit->denied},
                                        {"with_findings", audit->with_findings},
                                        {"namespaces", audit->namespaces.size()},
                                        {"policy_reports", written},
                                        {"seconds", seconds}});
    const std::lock_guard lock(mutex_);
    ++succeeded_;
    last_success_ = now_seconds;
    last_ = std::move(*audit);
  }

  // One PolicyReport per audited namespace (server-side apply), and the reports of namespaces that have
  // none now deleted. Returns how many were written. Without the CRD, says so once and writes none.
  std::size_t write_reports(const admission::Audit& audit, std::int64_t now_seconds,
                            const std::stop_token& stop) {
    std::size_t written = 0;
    const std::vector<std::string> namespaces = admission::report_namespaces(audit);
    for (const std::string& ns : namespaces) {
      const std::string target = std::string(kReports) + "/namespaces/" + ns + "/policyreports/" +
                                 std::string(admission::kPolicyReportName) +
                                 "?fieldManager=gpuadmit&force=true";
      auto response = transport_->write(cluster::WriteVerb::kApply, target,
                                        admission::policy_report(audit, ns, now_seconds).dump(), stop);
      if (response && response->status == kNotFound && !reports_missing_logged_) {
        reports_missing_logged_ = true;
        log_.warn(
            "background audit: PolicyReports not written, the API server does not serve "
            "wgpolicyk8s.io/v1alpha2 (install its CRD: the chart's crds/); gpuadmit_audit_violations is",
            {{"namespace", ns}});
        return 0;
      }
      if (!response || (response->status != 200 && response->status != 201)) {
        log_.warn("background audit: PolicyReport not written",
                  {{"namespace", ns},
                   {"error", response ? "HTTP " + std::to_string(response->status) + ": " +
                                            response->body.substr(0, 300)
                                      : response.error().message}});
        continue;
      }
      reports_missing_logged_ = false;
      ++written;
    }
    delete_stale_reports({namespaces.begin(), namespaces.end()}, stop);
    return written;
  }

  void delete_stale_reports(const std::set<std::string>& current, const std::stop_token& stop) {
    std::vector<std::string> stale;
    const std::string path =
        std::string(kReports) + "/policyreports?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dgpuadmit";
    auto listed =
        cluster::list_pages_at(*transport_, path, "policyreports", 500, stop, [&](nlohmann::json&& r) {
          const auto meta = r.value("metadata", nlohmann::json::object());
          const std::string ns = meta.value("namespace", std::string());
          if (meta.value("name", std::string()) == admission::kPolicyReportName && !current.contains(ns))
            stale.push_back(ns);
        });
    if (!listed) return;  // no CRD, or no list permission: nothing to clean
    for (const std::string& ns : stale) {
      auto deleted = transport_->write(cluster::WriteVerb::kDelete,
                                       std::string(kReports) + "/namespaces/" + ns + "/policyreports/" +
                                           std::string(admission::kPolicyReportName),
                                       {}, stop);
      if (!deleted || (deleted->status != 200 && deleted->status != kNotFound))
        log_.warn("background audit: stale PolicyReport not deleted", {{"namespace", ns}});
    }
  }

  std::shared_ptr<cluster::ApiTransport> transport_;
  cluster::LeaderElection election_;
  std::chrono::seconds interval_;
  const server::ClusterViewProvider& view_;
  server::JsonLog log_;
  Policies policies_;
  bool reports_missing_logged_ = false;  // the audit thread's
  mutable std::mutex mutex_;
  admission::Audit last_;          // guarded by mutex_
  std::uint64_t succeeded_ = 0;    // guarded by mutex_
  std::uint64_t failed_ = 0;       // guarded by mutex_
  std::int64_t last_success_ = 0;  // guarded by mutex_
  std::jthread election_thread_;
  std::jthread audit_thread_;
};

}  // namespace

Result<server::BackgroundAuditSetup> audit_setup(const std::optional<std::string>& interval,
                                                 const std::optional<std::string>& lease,
                                                 const ClusterViewFlags& flags,
                                                 const std::map<std::string, std::string>* env,
                                                 const cluster::InClusterPaths& paths) {
  server::BackgroundAuditSetup setup;
  if (!interval) {
    if (lease) return make_error("--audit-lease needs --audit-interval");
    return setup;
  }
  auto every = parse_duration(*interval);
  if (!every) return make_error("--audit-interval: " + every.error().message);
  if (*every < kMinAuditInterval)
    return make_error("--audit-interval: at least " + format_duration(kMinAuditInterval) + ", not " +
                      *interval);
  if (flags.mode == "off" || (!flags.kubeconfig && !in_cluster(env)))
    return make_error(
        "--audit-interval needs the cluster view: --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)");
  cluster::LeaseSettings settings;
  if (lease) {
    const auto slash = lease->find('/');
    settings.namespace_ = slash == std::string::npos ? std::string() : lease->substr(0, slash);
    settings.name = slash == std::string::npos ? std::string() : lease->substr(slash + 1);
    if (!object_name(settings.namespace_) || !object_name(settings.name))
      return make_error(
          "--audit-lease wants NAMESPACE/NAME of a Lease (e.g. gpuadmit/gpuadmit-audit), not \"" + *lease +
          "\"");
  } else {
    settings.namespace_ = environment_value(env, "POD_NAMESPACE").value_or("");
    settings.name = "gpuadmit-audit";
    if (!object_name(settings.namespace_))
      return make_error("--audit-interval: give --audit-lease NAMESPACE/NAME (POD_NAMESPACE is not set)");
  }
  settings.identity = environment_value(env, "POD_NAME").value_or(host_name());
  setup.interval = *every;
  setup.lease = settings.namespace_ + "/" + settings.name;
  setup.make =
      [connect = api_transport_factory(flags, env, paths, "background audit"), settings, every = *every](
          const server::JsonLog& log,
          const server::ClusterViewProvider& view) -> Result<std::unique_ptr<server::BackgroundAudit>> {
    auto transport = connect();
    if (!transport) return transport.error();
    return std::unique_ptr<server::BackgroundAudit>(
        std::make_unique<LeaseAudit>(std::move(*transport), settings, every, view, log));
  };
  return setup;
}

}  // namespace gpuadmit::cli
