#include "gpuadmit/cluster/cluster_watcher.hpp"

#include <condition_variable>
#include <mutex>
#include <random>

namespace gpuadmit::cluster {

ClusterWatcher::ClusterWatcher(std::shared_ptr<ApiTransport> transport, WatcherOptions options,
                               const Clock& clock)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(clock),
      store_(options_.store, clock) {
  if (!options_.log) options_.log = null_sink();
  std::random_device seed;
  for (const Kind kind : kAllKinds) {
    reflectors_.push_back(
        std::make_unique<Reflector>(kind, *transport_, store_, options_.reflector, options_.log, seed()));
  }
}

ClusterWatcher::~ClusterWatcher() {
  stop();
}

void ClusterWatcher::start() {
  if (!threads_.empty()) return;
  options_.log(spdlog::level::info, "cluster watch starting",
               {{"apiServer", transport_->endpoint()},
                {"staleAfterSeconds", options_.store.stale_after.count() / 1000.0}});
  for (auto& reflector : reflectors_) {
    threads_.emplace_back([r = reflector.get()](const std::stop_token& stop) { r->run(stop); });
  }
  threads_.emplace_back([this](const std::stop_token& stop) { rebuild_loop(stop); });
  threads_.emplace_back([this](const std::stop_token& stop) { stale_log_loop(stop); });
  if (options_.probe_interval.count() > 0) {
    store_.expect_probes();
    threads_.emplace_back([this](const std::stop_token& stop) { probe_loop(stop); });
  }
}

void ClusterWatcher::stop() {
  for (auto& thread : threads_) thread.request_stop();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

bool ClusterWatcher::wait_for_sync(std::chrono::milliseconds timeout) const {
  // Polled: synced() is a flag set once, and this runs at start-up only.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!synced()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void ClusterWatcher::rebuild_loop(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  bool logged_sync = false;
  while (!stop.stop_requested()) {
    if (!store_.wait_dirty(stop)) continue;
    // Coalesce: no closer than rebuild_interval to the previous rebuild; changes arriving meanwhile join in.
    const Instant due = store_.next_rebuild_at();
    const Instant now = clock_.now();
    if (due > now) {
      std::unique_lock lock(mutex);
      wake.wait_for(lock, stop, due - now, [] { return false; });
      if (stop.stop_requested()) break;
    }
    const bool rebuilt = store_.rebuild();
    if (!logged_sync) {
      logged_sync = true;
      log_synced();
    }
    if (rebuilt && options_.on_rebuilt) options_.on_rebuilt(*store_.snapshot());
  }
}

void ClusterWatcher::log_synced() const {
  const ClusterStats s = store_.stats();
  LogFields fields{{"apiServer", transport_->endpoint()}};
  std::string unavailable;
  for (const Kind kind : kAllKinds) {
    const KindStats& k = s.kinds[index(kind)];
    fields[std::string(info(kind).resource)] = k.objects;
    if (!k.available) unavailable += (unavailable.empty() ? "" : ",") + std::string(info(kind).resource);
  }
  if (!unavailable.empty()) fields["unavailable"] = unavailable;
  options_.log(spdlog::level::info, "cluster view synced", fields);
}

namespace {

// "resourceclaims,resourceclaimtemplates": the resources of a set of kinds, for logs.
std::string kind_names(policy::ViewKinds kinds) {
  std::string out;
  for (const Kind kind : kAllKinds) {
    if ((kinds & policy::view_kind_bit(kind)) == 0) continue;
    out += (out.empty() ? "" : ",") + std::string(info(kind).resource);
  }
  return out;
}

}  // namespace

void ClusterWatcher::stale_log_loop(std::stop_token stop) {
  // Staleness is a matter of time passing (no event marks it), so it is sampled; once per second is well
  // inside the 30 s threshold. Only transitions are logged: the metrics carry the age continuously.
  std::mutex mutex;
  std::condition_variable_any wake;
  policy::ViewKinds was_stale = 0;
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mutex);
      wake.wait_for(lock, stop, options_.stale_check_interval, [] { return false; });
    }
    if (stop.stop_requested() || !synced()) continue;  // before the first sync, "not yet" is not news
    const policy::ClusterView v = view();
    const policy::ViewKinds stale = v.stale ? v.stale_kinds : 0;
    if (stale != 0 && stale != was_stale) {
      // The kinds say which rules it touches: each rule is downgraded only by the kinds it reads.
      options_.log(spdlog::level::warn, "cluster view stale: serving from the last snapshot",
                   {{"apiServer", transport_->endpoint()},
                    {"ageSeconds", v.age_seconds},
                    {"kinds", kind_names(stale)}});
    } else if (stale == 0 && was_stale != 0) {
      options_.log(spdlog::level::info, "cluster view current again",
                   {{"apiServer", transport_->endpoint()}, {"ageSeconds", v.age_seconds}});
    }
    was_stale = stale;
  }
}

void ClusterWatcher::probe_loop(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  bool failing = false;
  while (!stop.stop_requested()) {
    const Result<ApiResponse> answer = transport_->get(kProbeTarget, stop);
    if (stop.stop_requested()) break;
    if (answer.ok()) {
      store_.probe_answered();
      if (failing) {
        options_.log(spdlog::level::info, "cluster probe answered again",
                     {{"apiServer", transport_->endpoint()}});
      }
    } else {
      store_.count_probe_failure();
      if (!failing) {
        options_.log(spdlog::level::warn, "cluster probe failed",
                     {{"apiServer", transport_->endpoint()},
                      {"error", answer.error().message},
                      {"staleAfterSeconds", options_.store.stale_after.count() / 1000.0}});
      }
    }
    failing = !answer.ok();
    std::unique_lock lock(mutex);
    wake.wait_for(lock, stop, options_.probe_interval, [] { return false; });
  }
}

}  // namespace gpuadmit::cluster
