// gpuadmit why: why a GPU pod is stuck or was killed, or why a workload has no pods, from a live cluster or a
// saved one, explained by admission::diagnose with the cluster's own words quoted.
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/admission/why.hpp"
#include "gpuadmit/cluster/discovery.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/json_input.hpp"
#include "live_cluster.hpp"
#include "manifests.hpp"

namespace gpuadmit::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kWhyUsage = R"(Usage:
  gpuadmit why NAME|KIND/NAME [-n NS] [--kubeconfig FILE] [--context NAME] [--user NAME] [--policy FILE]
                             [-o text|json|yaml]
  gpuadmit why NAME|KIND/NAME [-n NS] --cluster FILE [--policy FILE] [-o text|json|yaml]

Explains a stuck or killed GPU pod, or a workload without pods, in the order of the usual diagnosis: why it
is not scheduled (the scheduler's message, then what node-fit, gpu-tolerations, gpu-type and the quota
find on this cluster), why it was killed (OOMKilled, evicted), why a workload has no pods (FailedCreate
events of it and of the ReplicaSets and Jobs it controls, quoted: a webhook's or the quota's refusal), and
CUDA against the nodes' drivers. Each cause quotes Kubernetes, gives the fix and names the rule that would
have caught it at admission. NAME alone is a pod; KIND is pod or a workload kind of the policy
(deployment/trainer, pytorchjob/bert, job/x).

Live (the default): reads the object, the events of its namespace and what it controls through the
kubeconfig. Offline (--cluster FILE): a saved List holding them and the cluster's nodes and quotas, such as
'kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims,pods,replicasets,jobs,deployments,
events -A -o yaml'.

Flags:
  -n, --namespace     the object's namespace (default: the kubeconfig context's, else default)
      --kubeconfig    kubeconfig file (default: the files $KUBECONFIG lists, merged as kubectl merges them,
                      else ~/.kube/config, else the in-cluster service account)
      --context       kubeconfig context (default: current-context)
      --user          kubeconfig user instead of the context's
      --cluster       a saved cluster instead of a live one
      --policy        a policy file, or a ClusterGPUPolicy (default: the embedded policy)
  -o, --output        text (default), json or yaml

Installed as kubectl-gpuadmit on the PATH, it is also 'kubectl gpuadmit why ...'.
Exit codes: 0 explained (causes or none found), 2 usage, configuration or API errors, or no such object.
)";

constexpr Command kWhy{"gpuadmit why", kWhyUsage};

struct Target {
  std::string kind;  // as written: "pod", "deployment", "pytorchjobs"
  std::string name;
  std::string namespace_;
};

std::string lower_word(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "deployment", "deployments", "Deployment" name the kind Deployment.
bool names_kind(const std::string& word, std::string_view kind, std::string_view resource = {}) {
  const std::string k = lower_word(std::string(kind));
  return word == k || word == k + "s" || (!resource.empty() && word == resource);
}

std::string meta_text(const json& o, const char* key) {
  const auto meta = o.find("metadata");
  if (meta == o.end() || !meta->is_object()) return {};
  const auto v = meta->find(key);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : std::string();
}

// The saved List's object, the events and the objects of its namespace.
admission::WhyInput pick(std::vector<json>& objects, const Target& target, bool& found) {
  admission::WhyInput input;
  for (json& item : objects) {
    if (!item.is_object() || meta_text(item, "namespace") != target.namespace_) continue;
    const std::string kind = item.value("kind", std::string());
    if (kind == "Event") {
      input.events.push_back(std::move(item));
    } else if (!found && names_kind(target.kind, kind) && meta_text(item, "name") == target.name) {
      input.object = std::move(item);
      found = true;
    } else {
      input.owned.push_back(std::move(item));
    }
  }
  return input;
}

// The kind `word` names, among pods and the policy's workload kinds the API serves.
Result<cluster::ServedKind> served_kind(cluster::ApiTransport& transport, const policy::RuleSet& rules,
                                        const std::string& word) {
  if (names_kind(word, "Pod")) return cluster::ServedKind{"v1", "Pod", "pods", true};
  for (const policy::WorkloadKind& workload : rules.workloads) {
    auto served = cluster::discover_kinds(transport, workload.api_group, workload.kinds);
    if (!served) return served.error();
    for (const cluster::ServedKind& k : *served) {
      if (names_kind(word, k.kind, k.resource)) return k;
    }
  }
  return make_error("\"" + word +
                    "\" is not a pod or a workload kind of the policy that this API server serves");
}

struct Live {
  admission::WhyInput input;
  policy::ClusterView view;
};

// `target`'s namespace, when -n gave none, is the kubeconfig context's (else default), as kubectl's.
Result<Live> read_live(const std::optional<std::string>& kubeconfig,
                       const cluster::KubeconfigSelection& selection, const policy::RuleSet& rules,
                       Target& target, bool namespace_given) {
  auto config = api_config(kubeconfig, selection);
  if (!config) return config.error();
  if (!namespace_given && !config->namespace_.empty()) target.namespace_ = config->namespace_;
  auto transport = connect(std::move(*config));
  if (!transport) return transport.error();
  cluster::ApiTransport& api = **transport;
  auto kind = served_kind(api, rules, target.kind);
  if (!kind) return kind.error();
  auto response = api.get(kind->path_in(target.namespace_) + "/" + target.name, {});
  if (!response) return response.error();
  if (response->status == 404) {
    return make_error(kind->resource + " \"" + target.name + "\" not found in namespace " +
                      target.namespace_);
  }
  if (response->status != 200)
    return make_error("GET " + kind->resource + ": HTTP " + std::to_string(response->status));
  auto object = k8s::parse_json(response->body, {8U << 20U, 64});
  if (!object || !object->is_object()) return make_error("GET " + kind->resource + ": not a JSON object");
  Live live;
  live.input.object = std::move(*object);
  live.input.object["kind"] = kind->kind;
  live.input.object["apiVersion"] = kind->api_version;
  for (const cluster::ServedKind& k : {cluster::ServedKind{"v1", "Event", "events", true},
                                       cluster::ServedKind{"apps/v1", "ReplicaSet", "replicasets", true},
                                       cluster::ServedKind{"batch/v1", "Job", "jobs", true},
                                       cluster::ServedKind{"v1", "Pod", "pods", true}}) {
    if (k.kind == "Pod" && kind->kind == "Pod") continue;
    std::vector<json>& into = k.kind == "Event" ? live.input.events : live.input.owned;
    auto listed = list_items(api, k, k.path_in(target.namespace_), [&](json&& item) -> Result<bool> {
      into.push_back(std::move(item));
      return true;
    });
    if (!listed) return listed.error();
  }
  auto view = live_view(api);
  if (!view) return view.error();
  live.view = std::move(view->view);
  return live;
}

Result<Target> target_of(const ParsedFlags& flags) {
  if (flags.positional.size() != 1) return make_error("give one NAME or KIND/NAME");
  const std::string& word = flags.positional[0];
  Target t{"pod", word, flags.last("namespace").value_or("default")};
  if (const auto slash = word.find('/'); slash != std::string::npos) {
    t.kind = lower_word(word.substr(0, slash));
    t.name = word.substr(slash + 1);
  }
  if (t.name.empty() || t.kind.empty() || t.name.find('/') != std::string::npos) {
    return make_error("\"" + word + "\" is not NAME or KIND/NAME");
  }
  return t;
}

}  // namespace

int why_command(Args args) {
  int exit_code = kExitOk;
  const auto flags = command_flags(args,
                                   {{"namespace", "n"},
                                    {"kubeconfig", ""},
                                    {"context", ""},
                                    {"user", ""},
                                    {"cluster", ""},
                                    {"policy", ""},
                                    {"output", "o"},
                                    {"help", "h", false}},
                                   kWhy, exit_code);
  if (!flags) return exit_code;
  auto target = target_of(*flags);
  if (!target) return usage_error(kWhy, target.error().message);
  const std::string output = flags->last("output").value_or("text");
  if (output != "text" && output != "json" && output != "yaml") {
    return command_error(kWhy, "--output must be text, json or yaml, not \"" + output + "\"");
  }
  auto rules = load_rules(flags->last("policy"));
  if (!rules) return command_error(kWhy, rules.error().message);
  const policy::PolicySet policies = policy::PolicySet::of(*rules);
  Result<admission::Diagnosis> diagnosis = make_error("");
  if (const auto saved = flags->last("cluster")) {
    auto objects = read_objects({*saved});
    if (!objects) return command_error(kWhy, objects.error().message);
    const auto view = view_of(json(*objects), *saved);
    if (!view) return command_error(kWhy, view.error().message);
    bool found = false;
    const admission::WhyInput input = pick(*objects, *target, found);
    if (!found) {
      return command_error(
          kWhy, target->kind + "/" + target->name + " not found in namespace " + target->namespace_);
    }
    diagnosis = admission::diagnose(input, policies, &*view);
  } else {
    const cluster::KubeconfigSelection selection{flags->last("context").value_or(""), "",
                                                 flags->last("user").value_or("")};
    auto live = read_live(flags->last("kubeconfig"), selection, *rules, *target, flags->has("namespace"));
    if (!live) return command_error(kWhy, live.error().message);
    diagnosis = admission::diagnose(live->input, policies, &live->view);
  }
  if (!diagnosis) return command_error(kWhy, diagnosis.error().message);
  if (output == "text") {
    std::cout << admission::to_text(*diagnosis);
  } else {
    const json document = admission::to_json(*diagnosis);
    std::cout << (output == "yaml" ? config::to_yaml(document) : document.dump(2) + "\n");
  }
  return kExitOk;
}

}  // namespace gpuadmit::cli
