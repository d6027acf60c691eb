// gpuadmit audit: what admission would say of the pods, claims and workloads that already exist, in a live
// cluster or a saved one, judged by the code `gpuadmit check` and the webhook run. Patches nothing.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/admission/audit.hpp"
#include "gpuadmit/cluster/discovery.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "live_cluster.hpp"
#include "manifests.hpp"

namespace gpuadmit::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kAuditUsage = R"(Usage:
  gpuadmit audit [--kubeconfig FILE] [--context NAME] [--user NAME] [--policy FILE] [-n NS|-A] [-o text|json|yaml]
  gpuadmit audit --cluster FILE [--policy FILE] [-n NS|-A] [-o text|json|yaml]

Judges the Pods, PersistentVolumeClaims and workloads (the policy's spec.workloads kinds) that already
exist, as admission would judge them if they were created now, and patches nothing: objects made before
gpuadmit was installed or before the policy changed. Reports, per namespace and rule, how many objects
admission would deny, fix, warn about or record (audit), with the objects. A pod whose controller is
audited is left to it: the controller's template was judged.

Live (the default): lists the cluster through the kubeconfig, page by page, with the API's discovery
finding which workload kinds it serves. Offline (--cluster FILE): a saved List holding the objects and the
cluster's nodes, quotas, storage classes and claims, such as
'kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims,pods,deployments,jobs -A -o yaml'.

Flags:
      --kubeconfig    kubeconfig file (default: the files $KUBECONFIG lists, merged as kubectl merges them,
                      else ~/.kube/config, else the in-cluster service account)
      --context       kubeconfig context (default: current-context)
      --user          kubeconfig user instead of the context's
      --cluster       a saved cluster instead of a live one
      --policy        a policy file, or a ClusterGPUPolicy (default: the embedded policy)
  -n, --namespace     audit this namespace only
  -A, --all-namespaces
                      every namespace (the default; as kubectl users type it)
  -o, --output        text (default), json or yaml

Needs get/list on pods, the workload kinds and what 'gpuadmit cluster dump' lists (docs/cluster.md).
Exit codes: 0 nothing would be denied, 1 some object would be denied, 2 usage, configuration or API errors.
)";

constexpr Command kAuditCommand{"gpuadmit audit", kAuditUsage};

struct AuditOptions {
  std::optional<std::string> kubeconfig;
  cluster::KubeconfigSelection selection;
  std::optional<std::string> cluster_file;
  std::optional<std::string> policy;
  std::string namespace_;
  std::string output;
};

// A saved cluster: its objects are audited, its nodes, quotas, classes and claims are the view.
Result<admission::Audit> audit_file(const AuditOptions& options, const policy::PolicySet& policies,
                                    const policy::RuleSet& rules) {
  auto objects = read_objects({*options.cluster_file});
  if (!objects) return objects.error();
  const nlohmann::json all(*objects);
  const auto view = view_of(all, *options.cluster_file);
  if (!view) return view.error();
  std::vector<json> held;
  std::vector<json> pods;
  for (json& item : *objects) {
    if (!item.is_object()) continue;
    const std::string kind = item.value("kind", std::string());
    if (!admission::audited_kind(rules, item.value("apiVersion", std::string()), kind)) continue;
    (kind == "Pod" ? pods : held).push_back(std::move(item));
  }
  admission::Auditor auditor(policies, &*view, options.namespace_);
  if (auto done = auditor.audit_held(held); !done) return done.error();
  for (const json& pod : pods) {
    if (auto done = auditor.audit_pod(pod); !done) return done.error();
  }
  return auditor.audit();
}

// A live cluster: the dump's four kinds are the view; claims and workloads (of the kinds the API serves) are
// held, pods judged page by page.
Result<admission::Audit> audit_live(const AuditOptions& options, const policy::PolicySet& policies) {
  auto transport = connect(options.kubeconfig, options.selection);
  if (!transport) return transport.error();
  auto live = live_view(**transport);
  if (!live) return live.error();
  return audit_cluster(**transport, policies, live->view, AuditScope{options.namespace_, {}, {}});
}

std::string headline(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void print_text(const admission::Audit& audit, std::ostream& out) {
  if (!audit.rows.empty()) {
    out << std::left << std::setw(20) << "NAMESPACE" << std::setw(24) << "RULE" << std::setw(8) << "VERDICT"
        << std::setw(8) << "COUNT"
        << "OBJECTS\n";
  }
  for (const auto& [key, row] : audit.rows) {
    const auto& [ns, rule, verdict] = key;
    std::string objects;
    for (const std::string& o : row.objects) objects += (objects.empty() ? "" : ", ") + o;
    if (row.count > row.objects.size()) objects += ", …";
    out << std::left << std::setw(20) << ns << std::setw(24) << rule << std::setw(8)
        << admission::to_string(verdict) << std::setw(8) << row.count << objects << "\n";
    out << "    " << headline(row.example) << "\n";
  }
  out << (audit.rows.empty() ? "" : "\n") << audit.audited << (audit.audited == 1 ? " object" : " objects")
      << " audited in " << audit.namespaces.size()
      << (audit.namespaces.size() == 1 ? " namespace" : " namespaces") << ": " << audit.denied
      << " would be denied, " << audit.with_findings << " with findings; " << audit.left_to_controllers
      << " left to their controllers, " << audit.not_checked << " not checked\n";
}

std::optional<AuditOptions> audit_options(Args args, int& exit_code) {
  const auto flags = command_flags(args,
                                   {{"kubeconfig", ""},
                                    {"context", ""},
                                    {"user", ""},
                                    {"cluster", ""},
                                    {"policy", ""},
                                    {"namespace", "n"},
                                    {"all-namespaces", "A", false},
                                    {"output", "o"},
                                    {"help", "h", false}},
                                   kAuditCommand, exit_code);
  if (!flags) return std::nullopt;
  AuditOptions options{flags->last("kubeconfig"),
                       {flags->last("context").value_or(""), "", flags->last("user").value_or("")},
                       flags->last("cluster"),
                       flags->last("policy"),
                       flags->last("namespace").value_or(""),
                       flags->last("output").value_or("text")};
  if (!flags->positional.empty()) {
    exit_code = usage_error(kAuditCommand, "unexpected argument \"" + flags->positional[0] + "\"");
    return std::nullopt;
  }
  if (flags->has("all-namespaces") && flags->has("namespace")) {
    exit_code = usage_error(kAuditCommand, "-n and -A (--all-namespaces) exclude each other");
    return std::nullopt;
  }
  if (options.output != "text" && options.output != "json" && options.output != "yaml") {
    exit_code =
        command_error(kAuditCommand, "--output must be text, json or yaml, not \"" + options.output + "\"");
    return std::nullopt;
  }
  if (options.cluster_file &&
      (options.kubeconfig || !options.selection.context.empty() || !options.selection.user.empty())) {
    exit_code = usage_error(kAuditCommand,
                            "--cluster reads a saved cluster; it takes no --kubeconfig, --context or --user");
    return std::nullopt;
  }
  return options;
}

}  // namespace

int audit_command(Args args) {
  int exit_code = kExitOk;
  const auto options = audit_options(args, exit_code);
  if (!options) return exit_code;
  auto rules = load_rules(options->policy);
  if (!rules) return command_error(kAuditCommand, rules.error().message);
  const policy::PolicySet policies = policy::PolicySet::of(*rules);
  auto audit =
      options->cluster_file ? audit_file(*options, policies, *rules) : audit_live(*options, policies);
  if (!audit) return command_error(kAuditCommand, audit.error().message);
  if (options->output == "json") {
    std::cout << admission::to_json(*audit).dump(2) << "\n";
  } else if (options->output == "yaml") {
    std::cout << config::to_yaml(admission::to_json(*audit));
  } else {
    print_text(*audit, std::cout);
  }
  return audit->denied > 0 ? kExitDenied : kExitOk;
}

}  // namespace gpuadmit::cli
