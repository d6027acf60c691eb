// gpuadmit cluster dump: a live cluster's Nodes, ResourceQuotas, StorageClasses, PersistentVolumeClaims,
// DRA objects and Karpenter NodePools, listed once and written as the List `gpuadmit check --cluster FILE`
// reads.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/cluster/dump.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "live_cluster.hpp"
#include "manifests.hpp"

namespace gpuadmit::cli {
namespace {

constexpr std::string_view kClusterUsage = R"(Usage:
  gpuadmit cluster dump [--kubeconfig FILE] [--context NAME] [--user NAME] [-o json|yaml] [--output-file FILE]
                        [--with-objects [-n NS] [--policy FILE]]

Lists the Nodes, ResourceQuotas, StorageClasses and PersistentVolumeClaims of a live cluster once, with
its DRA DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates (resource.k8s.io/v1, from
Kubernetes 1.34) and Karpenter's NodePools (karpenter.sh/v1): one of those the API server does not serve or
does not let you list is left out, with a warning. It writes them as one v1 List: the file 'gpuadmit check --cluster FILE' reads, in the shape
'kubectl get KINDS -A -o json' prints for those kinds.

With --with-objects, also the Pods, the Events and the objects of the policy's workload kinds that the API
serves (of one namespace with -n): a saved cluster for 'gpuadmit audit --cluster FILE' and 'gpuadmit why
--cluster FILE', to audit or diagnose later, elsewhere, or in a bug report.

Flags:
      --kubeconfig    kubeconfig file (default: the files $KUBECONFIG lists, merged as kubectl merges them,
                      else ~/.kube/config, else the in-cluster service account)
      --context       kubeconfig context (default: current-context)
      --user          kubeconfig user instead of the context's
  -o, --output        json (default) or yaml
      --output-file   write to this file (replaced atomically) instead of stdout
      --with-objects  also the pods, events and workloads
  -n, --namespace     with --with-objects: those of this namespace only (the view's kinds stay whole)
      --policy        with --with-objects: the policy whose spec.workloads kinds are listed (default: the
                      embedded policy)

Needs get/list on those kinds (docs/cluster.md), and with --with-objects on pods, events and the
workload kinds. Exit codes: 0 written, 2 usage, configuration or API errors.
)";

Result<bool> write_atomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return make_error("cannot write " + temporary.string());
    out << text;
    if (!out.flush()) return make_error("cannot write " + temporary.string());
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec)
    return make_error("cannot rename " + temporary.string() + " to " + path.string() + ": " + ec.message());
  return true;
}

constexpr Command kDump{"gpuadmit cluster dump", kClusterUsage};

struct DumpOptions {
  std::optional<std::string> kubeconfig;
  cluster::KubeconfigSelection selection;
  std::string output;
  std::string destination;  // "" for stdout
  bool with_objects = false;
  std::string namespace_;  // with_objects: "" for all
  std::optional<std::string> policy;
};

std::optional<DumpOptions> dump_options(Args args, int& exit_code) {
  const auto flags = command_flags(args,
                                   {{"kubeconfig", ""},
                                    {"context", ""},
                                    {"user", ""},
                                    {"output", "o"},
                                    {"output-file", ""},
                                    {"with-objects", "", false},
                                    {"namespace", "n"},
                                    {"policy", ""},
                                    {"help", "h", false}},
                                   kDump, exit_code);
  if (!flags) return std::nullopt;
  if (!flags->positional.empty()) {
    exit_code = usage_error(kDump, "unexpected argument \"" + flags->positional[0] + "\"");
    return std::nullopt;
  }
  DumpOptions options{flags->last("kubeconfig"),
                      {flags->last("context").value_or(""), "", flags->last("user").value_or("")},
                      flags->last("output").value_or("json"),
                      flags->last("output-file").value_or(""),
                      flags->has("with-objects"),
                      flags->last("namespace").value_or(""),
                      flags->last("policy")};
  if (!options.with_objects && (flags->last("namespace") || options.policy)) {
    exit_code = usage_error(kDump, "-n and --policy go with --with-objects");
    return std::nullopt;
  }
  if (options.output != "json" && options.output != "yaml") {
    exit_code = command_error(kDump, "--output must be json or yaml, not \"" + options.output + "\"");
    return std::nullopt;
  }
  return options;
}

struct Listed {
  cluster::Dump dump;
  std::string endpoint;  // the API server's, for the summary
  std::size_t pods = 0;
  std::size_t events = 0;
  std::size_t workloads = 0;
};

// --with-objects: the pods, events and workloads appended to the dump's items, as kubectl prints them.
Result<bool> add_objects(cluster::ApiTransport& transport, const DumpOptions& options, Listed& listed) {
  auto rules = load_rules(options.policy);
  if (!rules) return rules.error();
  std::vector<cluster::ServedKind> kinds{{"v1", "Pod", "pods", true}, {"v1", "Event", "events", true}};
  for (const policy::WorkloadKind& workload : rules->workloads) {
    auto served = cluster::discover_kinds(transport, workload.api_group, workload.kinds);
    if (!served) return served.error();
    kinds.insert(kinds.end(), served->begin(), served->end());
  }
  nlohmann::json& items = listed.dump.list["items"];
  for (const cluster::ServedKind& kind : kinds) {
    if (!options.namespace_.empty() && !kind.namespaced) continue;
    const std::string path = options.namespace_.empty() ? kind.path() : kind.path_in(options.namespace_);
    std::size_t& count = kind.kind == "Pod"     ? listed.pods
                         : kind.kind == "Event" ? listed.events
                                                : listed.workloads;
    auto done = list_items(transport, kind, path, [&](nlohmann::json&& item) -> Result<bool> {
      if (auto meta = item.find("metadata"); meta != item.end() && meta->is_object())
        meta->erase("managedFields");
      items.push_back(std::move(item));
      ++count;
      return true;
    });
    if (!done) return done.error();
  }
  return true;
}

Result<Listed> list_cluster(const DumpOptions& options) {
  auto transport = connect(options.kubeconfig, options.selection);
  if (!transport) return transport.error();
  auto dump = cluster::dump_cluster(**transport);
  if (!dump) return dump.error();
  Listed listed{std::move(*dump), (*transport)->endpoint()};
  if (options.with_objects) {
    if (auto added = add_objects(**transport, options, listed); !added) return added.error();
  }
  return listed;
}

// "3 nodes, 0 resourcequotas, ..." (and "12 pods, 40 events, 3 workloads" with --with-objects).
std::string summary_of(const Listed& listed, bool with_objects) {
  std::string summary;
  for (const cluster::Kind kind : cluster::kAllKinds) {
    if (!summary.empty()) summary += ", ";
    summary += std::to_string(listed.dump.counts[cluster::index(kind)]) + " " +
               std::string(cluster::info(kind).resource);
  }
  if (with_objects) {
    summary += ", " + std::to_string(listed.pods) + " pods, " + std::to_string(listed.events) + " events, " +
               std::to_string(listed.workloads) + " workloads";
  }
  return summary;
}

int dump_command(Args args) {
  int exit_code = kExitOk;
  const auto options = dump_options(args, exit_code);
  if (!options) return exit_code;
  const auto listed = list_cluster(*options);
  if (!listed) return command_error(kDump, listed.error().message);
  const cluster::Dump& dump = listed->dump;
  for (const cluster::UnavailableKind& missing : dump.unavailable) {
    // A cluster without Karpenter serves no NodePools: nothing is missing from the dump.
    if (missing.kind == cluster::Kind::kNodePool && missing.status == 404) continue;
    std::fprintf(stderr, "gpuadmit cluster dump: warning: no %s in the dump: %s\n",
                 std::string(cluster::info(missing.kind).resource).c_str(), missing.error.c_str());
  }
  // The API server validated every object, so this only fails if our parsers and the API disagree; the
  // file is still written (it is the cluster's truth), with a warning.
  if (auto snapshot = policy::snapshot_from_list(dump.list); !snapshot) {
    std::fprintf(stderr,
                 "gpuadmit cluster dump: warning: 'gpuadmit check --cluster' will refuse this dump: %s\n",
                 snapshot.error().message.c_str());
  }
  const std::string text = options->output == "yaml" ? config::to_yaml(dump.list) : dump.list.dump(2) + "\n";
  const std::string& destination = options->destination;
  if (destination.empty()) {
    std::cout << text << std::flush;
  } else if (auto written = write_atomically(destination, text); !written) {
    return command_error(kDump, written.error().message);
  }
  std::fprintf(stderr, "gpuadmit cluster dump: %s from %s%s\n",
               summary_of(*listed, options->with_objects).c_str(), listed->endpoint.c_str(),
               destination.empty() ? "" : (" written to " + destination).c_str());
  return kExitOk;
}

}  // namespace

int cluster_command(Args args) {
  if (const auto answered = answer_bare_or_help(args, kClusterUsage)) return *answered;
  if (args[0] == "dump") return dump_command(args.subspan(1));
  return usage_error({"gpuadmit cluster", kClusterUsage},
                     "unknown subcommand \"" + std::string(args[0]) + "\"");
}

}  // namespace gpuadmit::cli
