// Certificates generated through OpenSSL's API: what the apiserver's Go client requires of them.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "gpuadmit/server/certs.hpp"
#include "gpuadmit/server/tls_context.hpp"
#include "support/fixtures.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::server {
namespace {

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
using X509Handle = std::unique_ptr<X509, X509Free>;

X509Handle parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509Handle certificate(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  REQUIRE(certificate);
  return certificate;
}

TEST_CASE("the serving certificate has the SANs, serverAuth, no CA rights, and chains to the CA") {
  auto ca = generate_ca({"test-ca", 10});
  REQUIRE(ca);
  auto serving = generate_serving_certificate(
      *ca, {{"gpuadmit.gpuadmit-system.svc", "localhost"}, {"127.0.0.1", "::1"}, 5, {}});
  REQUIRE(serving);
  const X509Handle leaf = parse(serving->certificate);
  const X509Handle root = parse(ca->certificate);

  CHECK(X509_check_host(leaf.get(), "gpuadmit.gpuadmit-system.svc", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(leaf.get(), "localhost", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(leaf.get(), "gpuadmit", 0, 0, nullptr) == 0);
  CHECK(X509_check_ip_asc(leaf.get(), "127.0.0.1", 0) == 1);
  CHECK(X509_check_ip_asc(leaf.get(), "::1", 0) == 1);
  CHECK(X509_check_ca(leaf.get()) == 0);
  CHECK(X509_check_ca(root.get()) >= 1);
  CHECK((X509_get_extended_key_usage(leaf.get()) & XKU_SSL_SERVER) != 0);
  CHECK(X509_get_signature_nid(leaf.get()) == NID_ecdsa_with_SHA256);
  CHECK(X509_check_issued(root.get(), leaf.get()) == X509_V_OK);
  CHECK(make_server_context(serving->certificate, serving->private_key));
  CHECK_FALSE(make_server_context(serving->certificate, ca->private_key));
}

TEST_CASE("invalid names and validity are refused") {
  auto ca = generate_ca({"test-ca", 10});
  REQUIRE(ca);
  auto [description, spec] = GENERATE(table<std::string, ServingSpec>({
      {"no names", {{}, {}, 5, {}}},
      {"a DNS name with a comma", {{"a,b"}, {}, 5, {}}},
      {"an IP that is not one", {{}, {"300.1.1.1"}, 5, {}}},
      {"zero days", {{"localhost"}, {}, 0, {}}},
  }));
  INFO(description);
  CHECK_FALSE(generate_serving_certificate(*ca, spec));
}

TEST_CASE("the files are written with the private key readable by the owner only") {
  test::TempDir dir;
  auto ca = generate_ca({"test-ca", 10});
  REQUIRE(ca);
  auto serving = generate_serving_certificate(*ca, {{"localhost"}, {}, 5, {}});
  REQUIRE(serving);
  auto files = write_certificate_files(dir.path() / "out", ca->certificate, *serving);
  REQUIRE(files);
  struct stat key_stat {};
  REQUIRE(::stat(files->private_key.c_str(), &key_stat) == 0);
  CHECK((key_stat.st_mode & 0777U) == 0600U);
  CHECK(certificate_serial(serving->certificate) ==
        certificate_serial(test::read_text(files->certificate.string())));
  CHECK(ca_bundle("abc") == "YWJj");
}

}  // namespace
}  // namespace gpuadmit::server
