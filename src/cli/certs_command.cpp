// gpuadmit certs generate: a CA and a serving certificate, written as ca.crt, tls.crt and tls.key.
#include <charconv>
#include <cstdio>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/server/certs.hpp"

namespace gpuadmit::cli {
namespace {

constexpr std::string_view kCertsUsage = R"(Usage:
  gpuadmit certs generate --dns NAME [--dns NAME ...] [--ip ADDRESS ...] --out DIR [--days N]

Generates a CA and a serving certificate it signs (ECDSA P-256, SHA-256; the names in subjectAltName,
extendedKeyUsage serverAuth) and writes DIR/ca.crt, DIR/tls.crt and DIR/tls.key (mode 0600). Prints the
caBundle value (base64 of ca.crt) for the webhook configurations.

For a webhook behind a Service, the apiserver connects to <service>.<namespace>.svc: give that name.

Flags:
  --dns    a DNS name for the certificate (repeatable)
  --ip     an IP address for the certificate (repeatable)
  --out    output directory (created if missing)
  --days   validity of the serving certificate in days (default 365; the CA gets ten times that, at most
           36500)
)";

constexpr Command kCerts{"gpuadmit certs", kCertsUsage};

}  // namespace

int certs_command(Args args) {
  int exit_code = kExitOk;
  const auto flags = command_flags(
      args, {{"dns", ""}, {"ip", ""}, {"out", "o"}, {"days", ""}, {"help", "h", false}}, kCerts, exit_code);
  if (!flags) return exit_code;
  if (flags->positional.size() != 1 || flags->positional.front() != "generate") {
    return usage_error(kCerts, flags->positional.empty()
                                   ? "missing subcommand (generate)"
                                   : "unknown subcommand \"" + flags->positional.front() + "\"");
  }
  const auto out = flags->last("out");
  if (!out || out->empty()) return usage_error(kCerts, "--out DIR is required");
  server::ServingSpec spec{flags->all("dns"), flags->all("ip"), 365, {}};
  if (spec.dns_names.empty() && spec.ip_addresses.empty())
    return usage_error(kCerts, "give at least one --dns or --ip");
  if (const auto days = flags->last("days")) {
    const auto [end, ec] = std::from_chars(days->data(), days->data() + days->size(), spec.days);
    if (ec != std::errc{} || end != days->data() + days->size() || spec.days < 1 || spec.days > 36500) {
      return usage_error(kCerts, "--days must be a whole number from 1 to 36500, not \"" + *days + "\"");
    }
  }
  auto ca = server::generate_ca({"gpuadmit-ca", std::min(spec.days * 10, 36500)});
  if (!ca) return usage_error(kCerts, ca.error().message);
  auto serving = server::generate_serving_certificate(*ca, spec);
  if (!serving) return usage_error(kCerts, serving.error().message);
  auto files = server::write_certificate_files(*out, ca->certificate, *serving);
  if (!files) return command_error(kCerts, files.error().message);
  std::printf("wrote %s, %s, %s (serial %s, %d days)\ncaBundle: %s\n", files->ca.c_str(),
              files->certificate.c_str(), files->private_key.c_str(),
              server::certificate_serial(serving->certificate).c_str(), spec.days,
              server::ca_bundle(ca->certificate).c_str());
  return kExitOk;
}

}  // namespace gpuadmit::cli
