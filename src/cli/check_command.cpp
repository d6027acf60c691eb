// gpuadmit check: the API server's view of a manifest, offline. Mutation, then validation of the result.
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "manifests.hpp"

namespace gpuadmit::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kCheckUsage = R"(Usage:
  gpuadmit check -f FILE|DIR|- [-f ...] [--policy FILE] [--namespace-policy FILE ...] [--cluster FILE]
                 [-o text|json|yaml] [--namespace NS]

Reads Pods, PersistentVolumeClaims and workloads (Deployments, Jobs, CronJobs, Kubeflow training jobs and
Notebooks, Ray, LeaderWorkerSet, JobSet, Volcano Jobs, KServe: the policy's spec.workloads) from YAML (multi-document, or a List) or JSON files and reports what the API
server with gpuadmit installed would do: the fixes the mutating webhook makes, then the verdict on the
fixed object. Objects of other kinds are reported as not checked. The input is one apply, as kubectl apply
-f makes it: with --cluster, an object of a kind the view holds (a ResourceClaimTemplate, a PVC) is added to
it for the objects after it.

Flags:
  -f, --filename    a file, a directory (its .yaml, .yml and .json files, recursively) or - for stdin
      --policy      a policy file, or a ClusterGPUPolicy (default: the embedded policy, see 'gpuadmit
                    policy default')
      --namespace-policy
                    a GPUPolicy: it tightens --policy for the objects of its namespace (metadata.namespace,
                    else --namespace), as gpuadmit serve --policy-objects does; repeat for more namespaces.
                    The text output starts with each one in force
      --cluster     the cluster to judge against: the output of 'kubectl get nodes,resourcequotas,
                    storageclasses,persistentvolumeclaims -A -o yaml' or of 'gpuadmit cluster dump';
                    without it the cluster-aware rules ({cluster-aware rules}) are skipped
  -o, --output      text (default, for people), json (stable, for scripts) or yaml (the fixed manifests)
  -n, --namespace   namespace for objects that name none (default: default)

Exit codes: 0 every object allowed, 1 any object denied, 2 usage, input or policy errors.
Limits: 8 MiB per input, nesting 64 deep, 1,000,000 YAML nodes after alias expansion.
)";

std::string indent_continuation(const std::string& text, std::string_view pad) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string verdict_text(const admission::CheckResult& r) {
  if (!r.checked) return "not checked: " + r.skipped_reason;
  if (!r.allowed) {
    return "DENIED (" + std::to_string(r.violations.size()) +
           (r.violations.size() == 1 ? " problem)" : " problems)");
  }
  if (!r.fixes.empty()) {
    return "allowed with " + std::to_string(r.fixes.size()) + (r.fixes.size() == 1 ? " fix" : " fixes");
  }
  return "allowed";
}

void print_text(const std::vector<Located>& results, std::ostream& out) {
  std::vector<std::string> skipped;
  std::size_t allowed = 0;
  std::size_t fixed = 0;
  std::size_t denied = 0;
  std::size_t not_checked = 0;
  for (const Located& item : results) {
    const admission::CheckResult& r = item.result;
    std::string kind = r.kind.empty() ? "object" : r.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    out << kind << " " << (r.namespace_.empty() ? "" : r.namespace_ + "/") << r.name << " (" << item.source
        << "): " << verdict_text(r) << "\n";
    for (const policy::Fix& f : r.fixes) out << "  fixed    [" << f.rule << "] " << f.description << "\n";
    for (const std::string& w : r.warnings) out << "  warning  " << w << "\n";
    for (const policy::Finding& a : r.audits) out << "  audit    " << a.summary << "\n";
    if (!r.controller.empty())
      out << "  note     warnings are left to its controller " << r.controller << "\n";
    for (const policy::Finding& v : r.violations) {
      out << "  denied   [" << v.rule << "] " << v.field << "\n           "
          << indent_continuation(v.message, "           ") << "\n";
    }
    for (const std::string& rule : r.skipped_rules) {
      if (std::find(skipped.begin(), skipped.end(), rule) == skipped.end()) skipped.push_back(rule);
    }
    if (!r.checked) {
      ++not_checked;
    } else if (!r.allowed) {
      ++denied;
    } else if (!r.fixes.empty()) {
      ++fixed;
    } else {
      ++allowed;
    }
  }
  out << "\n"
      << results.size() << (results.size() == 1 ? " object: " : " objects: ") << allowed << " allowed, "
      << fixed << " allowed with fixes, " << denied << " denied, " << not_checked << " not checked\n";
  if (!skipped.empty()) {
    out << "cluster-aware rules skipped (no --cluster given):";
    for (const std::string& rule : skipped) out << " " << rule;
    out << "\n";
  }
}

json to_json(const std::vector<Located>& results) {
  json list = json::array();
  for (const Located& item : results) {
    const admission::CheckResult& r = item.result;
    json violations = json::array();
    for (const policy::Finding& v : r.violations) {
      violations.push_back({{"rule", v.rule}, {"field", v.field}, {"message", v.message}});
    }
    // The warnings as kubectl shows them (one line each, cut to its limit), and each in full.
    json details = json::array();
    for (const policy::Finding& w : r.warn_findings) {
      details.push_back({{"rule", w.rule}, {"field", w.field}, {"message", w.message}});
    }
    json fixes = json::array();
    for (const policy::Fix& f : r.fixes)
      fixes.push_back({{"rule", f.rule}, {"field", f.field}, {"description", f.description}});
    list.push_back({{"kind", r.kind},
                    {"namespace", r.namespace_},
                    {"name", r.name},
                    {"source", item.source},
                    {"checked", r.checked},
                    {"allowed", r.allowed},
                    {"violations", violations},
                    {"warnings", r.warnings},
                    {"warningDetails", details},
                    {"fixes", fixes},
                    {"patch", r.patch}});
    if (!r.checked) list.back()["skippedReason"] = r.skipped_reason;
    if (!r.skipped_rules.empty()) list.back()["skippedRules"] = r.skipped_rules;
    if (!r.controller.empty()) list.back()["controller"] = r.controller;
  }
  return {{"results", list}};
}

constexpr Command kCheck{"gpuadmit check", kCheckUsage};

struct CheckOptions {
  std::vector<std::string> files;
  std::string output;
  std::string default_namespace;
  std::optional<std::string> policy_path;
  std::optional<std::string> cluster_path;
  std::vector<std::string> namespace_policies;
};

std::optional<CheckOptions> check_options(Args args, int& exit_code) {
  const auto flags = command_flags(args,
                                   {{"filename", "f"},
                                    {"policy", ""},
                                    {"namespace-policy", ""},
                                    {"cluster", ""},
                                    {"output", "o"},
                                    {"namespace", "n"},
                                    {"help", "h", false}},
                                   kCheck, exit_code);
  if (!flags) return std::nullopt;
  CheckOptions options{flags->all("filename"),
                       flags->last("output").value_or("text"),
                       flags->last("namespace").value_or("default"),
                       flags->last("policy"),
                       flags->last("cluster"),
                       flags->all("namespace-policy")};
  if (options.files.empty() || !flags->positional.empty()) {
    exit_code = usage_error(kCheck, options.files.empty() ? "give at least one -f FILE|DIR|-"
                                                          : "unexpected argument (use -f FILE)");
    return std::nullopt;
  }
  if (options.output != "text" && options.output != "json" && options.output != "yaml") {
    exit_code = command_error(kCheck, "--output must be text, json or yaml, not \"" + options.output + "\"");
    return std::nullopt;
  }
  return options;
}

void print_results(const std::vector<Located>& results, std::string_view output) {
  if (output == "json") {
    std::cout << to_json(results).dump(2) << "\n";
  } else if (output == "yaml") {
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::cout << (i > 0 ? "---\n" : "") << config::to_yaml(results[i].result.fixed);
    }
  } else {
    print_text(results, std::cout);
  }
}

}  // namespace

int check_command(Args args) {
  int exit_code = kExitOk;
  const auto options = check_options(args, exit_code);
  if (!options) return exit_code;
  auto rules = load_rules(options->policy_path);
  if (!rules) return command_error(kCheck, rules.error().message);
  std::vector<NamespacePolicy> applied;
  const auto policies =
      load_policy_set(std::move(*rules), options->namespace_policies, options->default_namespace, &applied);
  if (!policies) return command_error(kCheck, policies.error().message);
  auto cluster = load_cluster_input(options->cluster_path);
  if (!cluster) return command_error(kCheck, cluster.error().message);
  const auto sources = read_sources(options->files);
  if (!sources) return command_error(kCheck, sources.error().message);
  const auto results = check_sources(*sources, *policies, options->default_namespace,
                                     cluster->has_value() ? &**cluster : nullptr);
  if (!results) return command_error(kCheck, results.error().message);
  if (options->output == "text") {
    for (const NamespacePolicy& p : applied) {
      std::cout << "namespace " << p.namespace_ << ": the policy tightened by GPUPolicy " << p.name << " "
                << p.rules << "\n";
    }
    if (!applied.empty()) std::cout << "\n";
  }
  print_results(*results, options->output);
  const bool any_denied =
      std::any_of(results->begin(), results->end(), [](const Located& l) { return !l.result.allowed; });
  return any_denied ? kExitDenied : kExitOk;
}

}  // namespace gpuadmit::cli
