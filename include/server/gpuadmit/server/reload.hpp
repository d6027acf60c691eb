// What one check of a watched file (serving certificate, policy) found.
#pragma once

#include <cstdint>
#include <string>

namespace gpuadmit::server {

enum class ReloadStatus : std::uint8_t {
  kUnchanged,  // same content as the last attempt (including a failed one: it is not retried until it
               // changes)
  kReloaded,   // new content, valid, swapped in
  kFailed,     // new content, invalid or unreadable: the previous version stays in use
};

struct ReloadReport {
  ReloadStatus status = ReloadStatus::kUnchanged;
  std::string error;   // kFailed: why (the policy loader's file:line:column text, the OpenSSL reason)
  std::string detail;  // kReloaded: what is now in use (certificate serial and expiry, policy source)
};

}  // namespace gpuadmit::server
