// What dra-claims tells people when a pod's claims fit no node (dra_fit.hpp describe_unfit).
#include <string>

#include "dra_fit.hpp"

namespace gpuadmit::policy {
namespace {

std::string in_quotes(const std::string& s) {
  return "\"" + s + "\"";
}

std::string how_many(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "productName is one of: NVIDIA A100-SXM4-80GB (16 devices on 2 nodes), Tesla T4 (3 on 3)".
std::string values_text(const RequestSurvey& s) {
  std::string out;
  for (const auto& [name, values] : s.values) {
    std::string line = name + (values.size() == 1 ? " is " : " is one of: ");
    std::size_t shown = 0;
    bool first = true;
    for (const auto& [value, counts] : values) {
      if (++shown > 6) {
        line += ", …";
        break;
      }
      line += (shown == 1 ? "" : ", ") + value + " (" +
              (first ? how_many(counts.first, "device", "devices") + " on " +
                           how_many(static_cast<std::int64_t>(counts.second), "node", "nodes")
                     : std::to_string(counts.first) + " on " + std::to_string(counts.second)) +
              ")";
      first = false;
    }
    out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

std::string names_text(const std::set<std::string>& names) {
  std::string out;
  std::size_t n = 0;
  for (const std::string& name : names) {
    if (++n > 12) return out + ", …";
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

}  // namespace

std::string describe_unfit(const PodFit& fit, const std::vector<PodClaim>& claims, std::string& summary) {
  if (fit.usable_nodes == 0) return "";
  const std::string nodes = " on the " +
                            how_many(static_cast<std::int64_t>(fit.usable_nodes), "node", "nodes") +
                            " this pod can use";
  for (const RequestSurvey& s : fit.requests) {
    const PodClaim& claim = claims[s.claim];
    const k8s::DeviceRequest& request = claim.spec->requests[s.request];
    const k8s::DeviceSubRequest& way = request.alternatives.front();
    const std::string who =
        "request " + in_quotes(request.name) + " of " +
        (claim.ref->claim_name.empty() ? "ResourceClaimTemplate " + in_quotes(claim.ref->template_name)
                                       : "ResourceClaim " + in_quotes(claim.ref->claim_name));
    const std::string cls = "class " + in_quotes(way.device_class);
    if (s.matching == 0 && !s.error.empty()) {
      summary = who + ": selector fails: " + s.error;
      return who + ": the selector `" + s.error_expression + "` fails on the devices of " + cls + ": " +
             s.error +
             ". The scheduler stops on this CEL error and the pod stays Pending.\nThe devices have: " +
             names_text(s.attribute_names) + ".\nFix: select on one of those attributes.";
    }
    if (s.matching == 0) {
      summary = who + " matches no device" + nodes;
      if (s.class_devices == 0)
        return who + " matches no device" + nodes + ": none of them has a device of " + cls +
               ". The scheduler leaves the pod Pending (\"cannot allocate all claims\").\nFix: use a device "
               "class these nodes have, or let the pod reach the nodes that have " +
               way.device_class + " devices.";
      std::string text = who + " matches no device" + nodes + ": " +
                         how_many(s.class_devices, "device", "devices") + " of " + cls + " there, and ";
      text += s.tainted > 0 ? how_many(s.tainted, "matching device is", "matching devices are") +
                                  " tainted, which the request does not tolerate. "
                            : "its selectors match none of them. ";
      return text + values_text(s) +
             ".\nThe scheduler leaves the pod Pending (\"cannot allocate all claims\").\nFix: " +
             (s.tainted > 0 ? "add the device tolerations the request needs, or " : "") +
             "select by a value the devices have.";
    }
    if (s.most_on_a_node < s.need) {
      summary = who + " needs " + std::to_string(s.need) + " devices on one node; no node has more than " +
                std::to_string(s.most_on_a_node);
      return who + " asks for " + how_many(s.need, "device", "devices") + " of " + cls +
             " on one node, but no node has more than " + std::to_string(s.most_on_a_node) + " (" +
             s.most_node + "; " + how_many(s.matching, "device matches", "devices match") + " over " +
             how_many(static_cast<std::int64_t>(s.matching_nodes), "node", "nodes") +
             "). The scheduler leaves the pod Pending (\"cannot allocate all claims\").\nFix: ask for at "
             "most " +
             std::to_string(s.most_on_a_node) + ", or split the work over several pods.";
    }
  }
  summary = "no node has devices for all of the pod's claims together";
  return "no node this pod can use has devices for all of its claims together: each request fits some node, "
         "but "
         "not on one node, or not with the claims' matchAttribute constraints (for example MIG slices of one "
         "GPU). The scheduler leaves the pod Pending (\"cannot allocate all claims\").\nFix: ask for fewer "
         "devices per pod, or relax the constraints.";
}

}  // namespace gpuadmit::policy
