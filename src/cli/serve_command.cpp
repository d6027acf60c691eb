// gpuadmit serve: flags → ServeOptions → server::run_serve.
#include <charconv>
#include <cstdio>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/cli/serve_cluster_view.hpp"
#include "gpuadmit/server/serve.hpp"

namespace gpuadmit::cli {
namespace {

constexpr std::string_view kServeUsage = R"(Usage:
  gpuadmit serve (--cert-dir DIR | --tls-cert-file FILE --tls-private-key-file FILE | --dev-self-signed)
                 [--listen HOST:PORT] [--policy FILE] [--threads N] [--drain-seconds N]
                 [--max-connections N] [--log-level LEVEL]
                 [--kubeconfig FILE [--context NAME]] [--cluster-view auto|on|off]
                 [--policy-objects [--cluster-policy-name NAME]]
                 [--client-ca-file FILE] [--metrics-listen HOST:PORT]
                 [--renew-secret NAMESPACE/NAME [--renew-before DURATION]]
                 [--audit-interval DURATION [--audit-lease NAMESPACE/NAME]]

Runs the admission webhook over HTTPS: POST /mutate and /validate (AdmissionReview v1), GET /healthz,
/readyz and /metrics. Logs are JSON lines on stdout.

Flags:
  --listen                 address to listen on (default 0.0.0.0:8443; [::]:8443 for IPv6)
  --cert-dir               directory with tls.crt and tls.key (a mounted kubernetes.io/tls Secret)
  --tls-cert-file          serving certificate chain, PEM (instead of --cert-dir)
  --tls-private-key-file   its private key, PEM
  --dev-self-signed        generate a CA and a certificate for localhost at start; prints the caBundle and a
                           curl line (for trying it out, not for clusters)
  --policy                 policy file (default: the embedded policy, see 'gpuadmit policy default')
  --threads                I/O threads (default: one per CPU the container may use: its cgroup quota);
                           reviews run on as many threads again (at least 2), so a slow one never holds
                           the probes or the other connections of its I/O thread
  --drain-seconds          after SIGTERM, keep answering with Connection: close this long (default 5)
  --max-connections        at this many, a new connection replaces one of the client holding the most (its
                           oldest never answered, else its least recently active); or, when all are being
                           answered, is closed (default 512)
  --log-level              trace, debug, info, warn or error (default info; debug logs request bodies)
  --kubeconfig             watch the cluster of this kubeconfig (development, the e2e suite); in a pod the
                           service account is used without it (KUBERNETES_SERVICE_HOST is set)
  --context                kubeconfig context (default: the file's current-context)
  --cluster-view           auto (default: --kubeconfig, else in-cluster, else off), on (like auto, but
                           no configuration is an error) or off. Off, the cluster-aware rules
                           ({cluster-aware rules}) are skipped
  --policy-objects         also take the policy from the cluster: the ClusterGPUPolicy named by
                           --cluster-policy-name replaces --policy while it exists, and a namespace's
                           GPUPolicy tightens it there (docs/policy.md, "Policy objects"). Needs
                           --kubeconfig or a pod; /readyz waits for their first list
  --cluster-policy-name    the ClusterGPUPolicy in force (default "default")
  --client-ca-file         only callers presenting a certificate from these CAs (PEM) get a review; others
                           get 401 on /mutate and /validate (the API server presents one through its
                           admission kubeconfig, docs/cluster.md). /healthz and /readyz stay open for probes
  --metrics-listen         serve /metrics (and /healthz, /readyz) on this address instead of --listen, over
                           TLS with the same certificate and no client certificate, so a NetworkPolicy can
                           tell Prometheus apart from the API server
  --renew-secret           renew the serving certificate from the CA in this kubernetes.io/tls Secret
                           (ca.crt, ca.key, tls.crt, tls.key; the chart's): when it is due, sign one for
                           the same names and lifetime, write it to the Secret and serve it at once
                           (docs/cluster.md, "Certificates"). Needs --kubeconfig or a pod (RBAC: get and
                           patch on that Secret)
  --renew-before           renew this long before expiry (default 720h; 23h59m, 90s also work); shorter
                           than the certificate's lifetime
  --audit-interval         audit what already runs this often (at least 10s; off by default): the pods,
                           claims and workloads judged as 'gpuadmit audit' judges them, into one
                           PolicyReport (wgpolicyk8s.io/v1alpha2) per namespace and the metric
                           gpuadmit_audit_violations. One replica audits at a time: the holder of the
                           Lease (docs/cluster.md, "Background audit"). Needs the cluster view
  --audit-lease            that Lease (default $POD_NAMESPACE/gpuadmit-audit); the replica's identity in it
                           is $POD_NAME, else the host name

With the cluster view on, /readyz waits for the first full LIST of nodes, resourcequotas, storageclasses
and persistentvolumeclaims (RBAC: get/list/watch on those, docs/cluster.md).
The certificate, key and policy files are re-read when their content changes (every 2 s) and on SIGHUP;
an invalid new version is logged and the old one stays in use. A policy file that is invalid at start leaves
the server live but not ready (/readyz names the error) until a valid version is written; it never starts on
another policy. SIGTERM drains and exits 0.
)";

Result<unsigned long> parse_number(std::string_view flag, const std::string& text,
                                   unsigned long min,    // NOLINT
                                   unsigned long max) {  // NOLINT
  unsigned long value = 0;  // NOLINT(google-runtime-int): from_chars into the widest we accept
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
    return make_error("--" + std::string(flag) + " must be a whole number from " + std::to_string(min) +
                      " to " + std::to_string(max) + ", not \"" + text + "\"");
  }
  return value;
}

// The flags of the API server connection: the cluster view and the policy objects.
Result<bool> read_api_flags(const ParsedFlags& flags, server::ServeOptions& options) {
  ClusterViewFlags cluster;
  cluster.mode = flags.last("cluster-view").value_or("auto");
  cluster.kubeconfig = flags.last("kubeconfig");
  cluster.context = flags.last("context").value_or("");
  auto setup = cluster_view_setup(cluster);
  if (!setup) return setup.error();
  options.cluster_view = std::move(*setup);
  auto objects = policy_objects_setup(flags.has("policy-objects"),
                                      flags.last("cluster-policy-name").value_or("default"), cluster);
  if (!objects) return objects.error();
  if (!objects->make && flags.last("cluster-policy-name")) {
    return make_error("--cluster-policy-name needs --policy-objects");
  }
  options.policy_objects = std::move(*objects);
  auto renewal = renewal_setup(flags.last("renew-secret"), flags.last("renew-before"), cluster);
  if (!renewal) return renewal.error();
  options.renewal = std::move(*renewal);
  auto audit = audit_setup(flags.last("audit-interval"), flags.last("audit-lease"), cluster);
  if (!audit) return audit.error();
  options.audit = std::move(*audit);
  return true;
}

Result<server::ServeOptions> serve_options(const ParsedFlags& flags) {
  if (!flags.positional.empty())
    return make_error("unexpected argument \"" + flags.positional.front() + "\"");
  server::ServeOptions options;
  options.listen = flags.last("listen").value_or(options.listen);
  if (auto listen = server::parse_listen_address(options.listen); !listen) return listen.error();
  options.cert_dir = flags.last("cert-dir").value_or("");
  options.tls_cert_file = flags.last("tls-cert-file").value_or("");
  options.tls_private_key_file = flags.last("tls-private-key-file").value_or("");
  options.dev_self_signed = flags.has("dev-self-signed");
  const int sources = (options.cert_dir.empty() ? 0 : 1) +
                      (options.tls_cert_file.empty() && options.tls_private_key_file.empty() ? 0 : 1) +
                      (options.dev_self_signed ? 1 : 0);
  if (sources != 1) {
    return make_error(
        "give exactly one of --cert-dir, --tls-cert-file with --tls-private-key-file, "
        "or --dev-self-signed");
  }
  if (options.tls_cert_file.empty() != options.tls_private_key_file.empty()) {
    return make_error("--tls-cert-file and --tls-private-key-file go together");
  }
  options.policy_file = flags.last("policy").value_or("");
  options.client_ca_file = flags.last("client-ca-file").value_or("");
  options.metrics_listen = flags.last("metrics-listen").value_or("");
  if (!options.metrics_listen.empty()) {
    if (auto address = server::parse_listen_address(options.metrics_listen); !address)
      return make_error("--metrics-listen: " + address.error().message);
  }
  if (const auto text = flags.last("threads")) {
    auto n = parse_number("threads", *text, 0, 256);
    if (!n) return n.error();
    options.threads = static_cast<unsigned>(*n);
  }
  if (const auto text = flags.last("drain-seconds")) {
    auto n = parse_number("drain-seconds", *text, 0, 3600);
    if (!n) return n.error();
    options.drain = std::chrono::seconds(*n);
  }
  if (const auto text = flags.last("max-connections")) {
    auto n = parse_number("max-connections", *text, 1, 1'000'000);
    if (!n) return n.error();
    options.max_connections = *n;
  }
  if (const auto text = flags.last("log-level")) {
    const auto level = spdlog::level::from_str(*text);
    // from_str answers "off" for anything it does not know; only an explicit "off" means off.
    if (level == spdlog::level::off && *text != "off") {
      return make_error("--log-level must be trace, debug, info, warn, error or off, not \"" + *text + "\"");
    }
    options.log_level = level;
  }
  if (auto api = read_api_flags(flags, options); !api) return api.error();
  return options;
}

constexpr Command kServe{"gpuadmit serve", kServeUsage};

}  // namespace

int serve_command(Args args) {
  int exit_code = kExitOk;
  const auto flags = command_flags(args,
                                   {{"listen", ""},
                                    {"cert-dir", ""},
                                    {"tls-cert-file", ""},
                                    {"tls-private-key-file", ""},
                                    {"dev-self-signed", "", false},
                                    {"policy", ""},
                                    {"threads", ""},
                                    {"drain-seconds", ""},
                                    {"max-connections", ""},
                                    {"log-level", ""},
                                    {"kubeconfig", ""},
                                    {"context", ""},
                                    {"cluster-view", ""},
                                    {"policy-objects", "", false},
                                    {"client-ca-file", ""},
                                    {"metrics-listen", ""},
                                    {"cluster-policy-name", ""},
                                    {"renew-secret", ""},
                                    {"renew-before", ""},
                                    {"audit-interval", ""},
                                    {"audit-lease", ""},
                                    {"help", "h", false}},
                                   kServe, exit_code);
  if (!flags) return exit_code;
  auto options = serve_options(*flags);
  if (!options) return usage_error(kServe, options.error().message);
  return server::run_serve(*options);
}

}  // namespace gpuadmit::cli
