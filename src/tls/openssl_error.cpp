#include "gpuadmit/tls/openssl_error.hpp"

#include <array>

#include <openssl/err.h>

namespace gpuadmit::tls {

std::string drain_openssl_errors(std::string_view what) {
  std::string out(what);
  while (const unsigned long code = ERR_get_error()) {  // NOLINT(google-runtime-int): OpenSSL's type
    std::array<char, 256> reason{};
    ERR_error_string_n(code, reason.data(), reason.size());
    out += ": ";
    out += reason.data();
  }
  return out;
}

}  // namespace gpuadmit::tls
