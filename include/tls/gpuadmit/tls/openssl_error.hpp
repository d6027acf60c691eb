// OpenSSL reports why a call failed on a per-thread error queue; every failure path must drain it, or the
// next, unrelated failure on that thread reports a stale reason.
#pragma once

#include <string>
#include <string_view>

namespace gpuadmit::tls {

// `what`, then ": <reason>" for each entry on this thread's error queue, which is left empty.
std::string drain_openssl_errors(std::string_view what);

}  // namespace gpuadmit::tls
