// serve's half of --policy-objects: the source registered for /readyz before the webhook exists, and each
// list of the objects turned into the policies in force and the statuses written back.
#pragma once

#include <memory>
#include <string>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/policy_object_source.hpp"
#include "gpuadmit/server/serve.hpp"
#include "gpuadmit/server/webhook.hpp"

namespace gpuadmit::server {

// The policy objects' source, made and registered for /readyz before the webhook exists; null when
// --policy-objects is off.
Result<std::unique_ptr<PolicyObjectSource>> policy_objects(const ServeOptions& options, const JsonLog& log,
                                                           WebhookConfig& config);

// Each list of the policy objects: the policies they make swapped in, and their statuses written.
PolicyObjectSource::OnChange on_policy_objects(Webhook& webhook, PolicyObjectSource& source,
                                               std::string cluster_policy_name, const JsonLog& log);

}  // namespace gpuadmit::server
