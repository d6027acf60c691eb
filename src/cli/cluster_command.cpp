// gpuadmit cluster dump: a live cluster's Nodes, ResourceQuotas, StorageClasses and PersistentVolumeClaims,
// listed once and written as the List `gpuadmit check --cluster FILE` reads.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/dump.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace gpuadmit::cli {
namespace {

constexpr std::string_view kClusterUsage = R"(Usage:
  gpuadmit cluster dump [--kubeconfig FILE] [--context NAME] [-o json|yaml] [--output-file FILE]

Lists the Nodes, ResourceQuotas, StorageClasses and PersistentVolumeClaims of a live cluster once and
writes them as one v1 List: the file 'gpuadmit check --cluster FILE' reads, in the shape of
'kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims -A -o json'.

Flags:
      --kubeconfig    kubeconfig file (default: $KUBECONFIG, else the in-cluster service account)
      --context       kubeconfig context (default: the file's current-context)
  -o, --output        json (default) or yaml
      --output-file   write to this file (replaced atomically) instead of stdout

Needs get/list on those four kinds (docs/cluster.md). Exit codes: 0 written, 2 usage, configuration or
API errors.
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

int dump_command(Args args) {
  auto flags = parse_flags(
      args,
      {{"kubeconfig", ""}, {"context", ""}, {"output", "o"}, {"output-file", ""}, {"help", "h", false}});
  if (!flags) {
    std::fprintf(stderr, "gpuadmit cluster dump: %s\n\n%s", flags.error().message.c_str(),
                 kClusterUsage.data());
    return kExitUsage;
  }
  if (flags->has("help")) {
    std::fputs(kClusterUsage.data(), stdout);
    return kExitOk;
  }
  if (!flags->positional.empty()) {
    std::fprintf(stderr, "gpuadmit cluster dump: unexpected argument \"%s\"\n\n%s",
                 flags->positional[0].c_str(), kClusterUsage.data());
    return kExitUsage;
  }
  const std::string output = flags->last("output").value_or("json");
  if (output != "json" && output != "yaml") {
    std::fprintf(stderr, "gpuadmit cluster dump: --output must be json or yaml, not \"%s\"\n",
                 output.c_str());
    return kExitUsage;
  }

  auto config = cluster::resolve_api_config(flags->last("kubeconfig"), flags->last("context").value_or(""));
  if (!config) {
    std::fprintf(stderr, "gpuadmit cluster dump: %s\n", config.error().message.c_str());
    return kExitUsage;
  }
  auto transport = cluster::make_https_transport(std::move(*config));
  if (!transport) {
    std::fprintf(stderr, "gpuadmit cluster dump: %s\n", transport.error().message.c_str());
    return kExitUsage;
  }
  auto dump = cluster::dump_cluster(**transport);
  if (!dump) {
    std::fprintf(stderr, "gpuadmit cluster dump: %s\n", dump.error().message.c_str());
    return kExitUsage;
  }
  // The API server validated every object, so this only fails if our parsers and the API disagree; the
  // file is still written (it is the cluster's truth), with a warning.
  if (auto snapshot = policy::snapshot_from_list(dump->list); !snapshot) {
    std::fprintf(stderr,
                 "gpuadmit cluster dump: warning: 'gpuadmit check --cluster' will refuse this dump: %s\n",
                 snapshot.error().message.c_str());
  }

  const std::string text = output == "yaml" ? config::to_yaml(dump->list) : dump->list.dump(2) + "\n";
  const std::string destination = flags->last("output-file").value_or("");
  if (destination.empty()) {
    std::cout << text << std::flush;
  } else if (auto written = write_atomically(destination, text); !written) {
    std::fprintf(stderr, "gpuadmit cluster dump: %s\n", written.error().message.c_str());
    return kExitUsage;
  }
  std::string summary;
  for (const cluster::Kind kind : cluster::kAllKinds) {
    if (!summary.empty()) summary += ", ";
    summary +=
        std::to_string(dump->counts[cluster::index(kind)]) + " " + std::string(cluster::info(kind).resource);
  }
  std::fprintf(stderr, "gpuadmit cluster dump: %s from %s%s\n", summary.c_str(),
               (*transport)->endpoint().c_str(),
               destination.empty() ? "" : (" written to " + destination).c_str());
  return kExitOk;
}

}  // namespace

int cluster_command(Args args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kClusterUsage.data(), args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "dump") return dump_command(args.subspan(1));
  std::fprintf(stderr, "gpuadmit cluster: unknown subcommand \"%s\"\n\n%s", std::string(args[0]).c_str(),
               kClusterUsage.data());
  return kExitUsage;
}

}  // namespace gpuadmit::cli
