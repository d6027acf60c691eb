// Temporary stand-ins while the server layer is built; removed when src/server lands.
#include <cstdio>

#include "commands.hpp"

namespace gpuadmit::cli {

int serve_command(Args /*args*/) {
  std::fputs("gpuadmit serve: this build has no server layer\n", stderr);
  return kExitUsage;
}

int certs_command(Args /*args*/) {
  std::fputs("gpuadmit certs: this build has no server layer\n", stderr);
  return kExitUsage;
}

}  // namespace gpuadmit::cli
