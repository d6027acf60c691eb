#include "gpuadmit/server/serve_renewal.hpp"

#include "gpuadmit/common/duration.hpp"

namespace gpuadmit::server {
namespace {

void record_step(const RenewalStep& step, Webhook& webhook, const std::string& secret, const JsonLog& log) {
  Family<Counter>& renewals = webhook.metrics().certificate_renewals;
  const std::string next_look = format_duration(step.next_look);
  switch (step.outcome) {
    case RenewalOutcome::kNotDue:
      log.debug("serving certificate not due for renewal", {{"secret", secret}, {"next_look", next_look}});
      return;
    case RenewalOutcome::kConflict:
      renewals.with({"conflict"}).inc();
      log.info("serving certificate renewed by another replica first; this one follows its mounted Secret",
               {{"secret", secret}});
      return;
    case RenewalOutcome::kFailed:
      renewals.with({"failure"}).inc();
      log.error("serving certificate renewal failed; the current certificate stays in use",
                {{"secret", secret}, {"error", step.error}, {"next_look", next_look}});
      return;
    case RenewalOutcome::kRenewed:
      break;
  }
  const ReloadReport installed = webhook.install_serving_certificate(step.renewal->serving);
  if (installed.status != ReloadStatus::kReloaded) {
    renewals.with({"failure"}).inc();
    log.error("renewed serving certificate written to the Secret but not served; the mounted Secret follows",
              {{"secret", secret}, {"error", installed.error}});
    return;
  }
  renewals.with({"renewed"}).inc();
  log.info("serving certificate renewed", {{"secret", secret}, {"in_use", installed.detail}});
}

}  // namespace

Result<std::unique_ptr<RenewalLoop>> start_renewal(const RenewalSetup& setup, Webhook& webhook,
                                                   const JsonLog& log) {
  if (!setup.make) return std::unique_ptr<RenewalLoop>();
  auto secret = setup.make(log);
  if (!secret) return secret.error();
  for (const char* result : {"renewed", "conflict", "failure"})
    webhook.metrics().certificate_renewals.with({result});  // at zero before the first event, for rate()
  const std::string name = (*secret)->name();
  log.info("serving certificate renewal on",
           {{"secret", name}, {"renew_before", format_duration(setup.policy.renew_before)}});
  return std::make_unique<RenewalLoop>(
      std::move(*secret), setup.policy,
      [&webhook, name, log](const RenewalStep& step) { record_step(step, webhook, name, log); }, setup.now);
}

}  // namespace gpuadmit::server
