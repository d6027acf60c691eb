// Renewing the serving certificate from the CA kept beside it (#22 item 1; serve --renew-secret).
// The Secret the chart generates holds ca.crt, ca.key, tls.crt and tls.key (base64, as the API server
// returns `data`). When tls.crt expires within `renew_before`, a new serving certificate for the same names
// and lifetime is signed by that CA, and the result is the merge patch that writes it, carrying the Secret's
// resourceVersion: of several replicas renewing at once, one patch wins and the others get 409 and find the
// renewed certificate on their next look. The CA and so the webhooks' caBundle stay as they are.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/certs.hpp"

namespace gpuadmit::server {

struct RenewalPolicy {
  std::chrono::seconds renew_before{std::chrono::hours(24 * 30)};
};

struct Renewal {
  nlohmann::json patch;  // the merge patch for the Secret
  PemPair serving;       // the new pair, to serve at once
  std::int64_t not_after = 0;
};

// nullopt: nothing to do yet. An error: the Secret cannot be renewed from (no ca.key, a CA that did not
// sign tls.crt, unreadable PEM, a renew_before as long as the certificate lives, which would renew at every
// check), said so that an admin knows what to fix.
// When the certificate in `secret` becomes due (notAfter - renew_before), for the renewer's next look.
Result<std::int64_t> renewal_due_at(const nlohmann::json& secret, const RenewalPolicy& policy = {});

Result<std::optional<Renewal>> renewal_of(const nlohmann::json& secret, std::int64_t now_seconds,
                                          const RenewalPolicy& policy = {});

}  // namespace gpuadmit::server
