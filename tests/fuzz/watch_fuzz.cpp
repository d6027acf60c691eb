// The watch-stream decoder: a reflector reads any bytes as the lines of one watch of one kind (the first
// byte picks the kind), from the tests' scripted transport serving an empty LIST and then that stream. Any
// line must be applied, skipped or end the stream (to list again), never crash or throw; once the
// reflector waits for more, the view builds from what was kept.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fuzz_check.hpp"
#include "gpuadmit/cluster/reflector.hpp"
#include "support/fake_transport.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace std::chrono_literals;
  using gpuadmit::cluster::Kind;
  if (size == 0) return 0;
  const Kind kind = gpuadmit::cluster::kAllKinds.at(data[0] % gpuadmit::cluster::kKindCount);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> lines;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    lines.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  const std::string path(gpuadmit::cluster::info(kind).path);
  gpuadmit::test::FakeTransport transport;
  transport.push(path, gpuadmit::test::list_response("[]", "1"));
  transport.push(path, gpuadmit::test::watch_stream(std::move(lines)));

  gpuadmit::cluster::SnapshotStore store;
  for (const Kind other : gpuadmit::cluster::kAllKinds) {
    if (other != kind) store.replace(other, {});
  }
  gpuadmit::cluster::ReflectorOptions options;
  options.backoff = {1ms, 2ms};
  gpuadmit::cluster::Reflector reflector(kind, transport, store, options, gpuadmit::cluster::null_sink(), 1);
  {
    std::jthread thread([&](const std::stop_token& stop) { reflector.run(stop); });
    // The LIST, the watch, then a third call waiting on the empty script: every line has been handled.
    gpuadmit::fuzz::require(transport.wait_for_calls(path, 3), "the reflector reads the whole stream");
  }
  store.rebuild();
  gpuadmit::fuzz::require(store.snapshot() != nullptr, "the view builds from what the stream kept");
  return 0;
}
