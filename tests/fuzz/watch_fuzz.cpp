// The watch-stream decoder: a reflector reads any bytes as the lines of one watch of one kind (the first
// byte picks the kind), from a transport scripted to serve an empty LIST, that stream, and then stop. Any
// line must be applied, skipped or end the stream (to list again), never crash or throw; the view then
// builds from what was kept.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "gpuadmit/cluster/reflector.hpp"

namespace {

using namespace std::chrono_literals;
using gpuadmit::Result;
using gpuadmit::cluster::ApiResponse;
using gpuadmit::cluster::Kind;

class ScriptedTransport final : public gpuadmit::cluster::ApiTransport {
 public:
  ScriptedTransport(Kind kind, std::string_view stream, std::stop_source& stop)
      : kind_(kind), stream_(stream), stop_(stop) {}

  Result<ApiResponse> get(std::string_view /*target*/, std::stop_token /*stop*/) override {
    if (++calls_ > 1 && watched_) return done();
    const std::string list_kind = std::string(gpuadmit::cluster::info(kind_).kind) + "List";
    return ApiResponse{200,
                       R"({"kind":")" + list_kind + R"(","metadata":{"resourceVersion":"1"},"items":[]})"};
  }

  Result<ApiResponse> watch(std::string_view /*target*/, std::chrono::seconds /*deadline*/,
                            const gpuadmit::cluster::WatchCallbacks& callbacks,
                            std::stop_token /*stop*/) override {
    if (watched_) return done();
    watched_ = true;
    callbacks.opened();
    std::string_view rest = stream_;
    while (!rest.empty()) {
      const std::size_t end = rest.find('\n');
      if (!callbacks.line(rest.substr(0, end))) break;
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
    return ApiResponse{200, ""};
  }

  [[nodiscard]] std::string endpoint() const override { return "https://127.0.0.1:6443"; }

 private:
  Result<ApiResponse> done() {
    stop_.request_stop();
    return gpuadmit::make_error("fuzz: the script is over");
  }

  Kind kind_;
  std::string_view stream_;
  std::stop_source& stop_;
  int calls_ = 0;
  bool watched_ = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Kind kind = gpuadmit::cluster::kAllKinds.at(data[0] % gpuadmit::cluster::kKindCount);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  gpuadmit::cluster::SnapshotStore store;
  for (const Kind other : gpuadmit::cluster::kAllKinds) {
    if (other != kind) store.replace(other, {});
  }
  std::stop_source stop;
  ScriptedTransport transport(kind, stream, stop);
  gpuadmit::cluster::ReflectorOptions options;
  options.backoff = {1ms, 2ms};
  gpuadmit::cluster::Reflector reflector(kind, transport, store, options, gpuadmit::cluster::null_sink(), 1);
  reflector.run(stop.get_token());
  store.rebuild();
  gpuadmit::fuzz::require(store.snapshot() != nullptr, "the view builds from what the stream kept");
  return 0;
}
