// serve's half of --renew-secret: the renewal loop started on the running webhook, its steps logged and
// counted, a renewed pair served at once.
#pragma once

#include <memory>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/certificate_renewer.hpp"
#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/webhook.hpp"

namespace gpuadmit::server {

// Null when --renew-secret is off. The loop must be destroyed before `webhook`.
Result<std::unique_ptr<RenewalLoop>> start_renewal(const RenewalSetup& setup, Webhook& webhook,
                                                   const JsonLog& log);

}  // namespace gpuadmit::server
