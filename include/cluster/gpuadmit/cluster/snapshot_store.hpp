// SnapshotStore: the watcher's cache of typed objects per kind, and the immutable ClusterSnapshot built from
// it. Reflectors write objects (any thread); a rebuild turns the cache into a new snapshot and swaps a
// shared_ptr<const ClusterSnapshot> atomically, so a request keeps the snapshot it started with and never
// touches the cache or its mutex. The store owns no thread: ClusterWatcher drives rebuilds, tests call them.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "gpuadmit/cluster/clock.hpp"
#include "gpuadmit/cluster/device_view_pool.hpp"
#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/common/shared_slot.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace gpuadmit::cluster {

struct StoreOptions {
  // The view is stale when, for this long, some kind has had no working watch (nor a successful LIST), or,
  // once probes are expected, the API server has answered none.
  std::chrono::milliseconds stale_after{30'000};
  // Rebuilds are at least this far apart: a burst of events (a node pool scaling up) costs one rebuild per
  // interval, while a lone change after a quiet period is rebuilt at once.
  std::chrono::milliseconds rebuild_interval{150};
};

// Counters for /metrics and logs, read without locks. Counts only grow.
struct KindStats {
  std::uint64_t objects = 0;           // cached now
  std::uint64_t lists = 0;             // successful LISTs, the first included
  std::uint64_t relists = 0;           // LISTs after the first (410 Gone, undecodable event, ...)
  std::uint64_t watch_restarts = 0;    // watches opened after the first
  std::uint64_t failures = 0;          // failed LISTs and watches (connection, TLS, HTTP status, ERROR event)
  std::uint64_t malformed_events = 0;  // undecodable lines and objects that did not parse
  bool synced = false;                 // listed at least once
  bool watching = false;               // a watch stream is open now
  bool available = true;               // false: an optional kind not served (404) or forbidden (403)
  double seconds_since_contact = 0;    // 0 while watching
};

struct ClusterStats {
  std::array<KindStats, kKindCount> kinds{};  // indexed by cluster::index(Kind)
  std::uint64_t snapshot_rebuilds = 0;
  bool synced = false;
  bool stale = false;
  double snapshot_age_seconds = 0;
  std::uint64_t probe_failures = 0;       // probes the API server did not answer (connection, TLS, deadline)
  double seconds_since_probe_answer = 0;  // 0 when nobody probes
};

class SnapshotStore {
 public:
  using Entries = std::vector<std::pair<std::string, ClusterObject>>;
  // Objects are immutable once cached and shared with the snapshots built from them.
  using SharedObject = std::shared_ptr<const ClusterObject>;
  using SharedEntries = std::vector<std::pair<std::string, SharedObject>>;

  explicit SnapshotStore(StoreOptions options = {}, const Clock& clock = steady_clock());
  SnapshotStore(const SnapshotStore&) = delete;
  SnapshotStore& operator=(const SnapshotStore&) = delete;
  ~SnapshotStore() = default;

  // --- written by the reflectors (thread-safe) ---
  // A complete LIST: `entries` (key → object) become the kind's whole content.
  void replace_shared(Kind kind, SharedEntries entries);
  void replace(Kind kind, Entries entries);  // each entry through share()
  // `object` as the cache should hold it: the cached object under `key` when its view is the same, else
  // `object` itself (a ResourceSlice's device views interned: device_view_pool.hpp). A relist collects its
  // entries through this, so while it runs the cache and the new list hold one copy of every object that did
  // not change, not two (65,000 nodes are 100 MiB each time).
  [[nodiscard]] SharedObject share(Kind kind, const std::string& key, ClusterObject object) const;
  // An optional kind the API server does not serve (404) or refuses (403): it is empty, counts as listed
  // (the view syncs without it) and as current (staleness is about the kinds that can be watched) until the
  // next successful LIST (replace_shared) makes it available again.
  void mark_unavailable(Kind kind);
  void upsert(Kind kind, std::string key, ClusterObject object);
  void erase(Kind kind, const std::string& key);
  // The API server answered for `kind` (an event, a bookmark, a watch that ended on schedule).
  void contact(Kind kind);
  // A watch stream for `kind` opened (true) or closed (false). While open, the kind counts as current.
  void set_watching(Kind kind, bool watching);
  void count_failure(Kind kind) noexcept;
  void count_malformed(Kind kind) noexcept;
  void count_watch_restart(Kind kind) noexcept;
  // From now on the view is current only as of the API server's last answer to a probe (ClusterWatcher
  // calls this when it starts probing, which starts the clock; a store nobody probes ignores probes).
  void expect_probes();
  // The API server answered a probe, with any HTTP status: it is reachable and serving. Every other answer
  // counts the same (a LIST, an event or bookmark, a watch opening), so the view is current again as soon
  // as the watches are back, not at the next probe.
  void probe_answered();
  void count_probe_failure() noexcept;

  // --- read by requests: never blocked by the cache, the reflectors or a rebuild ---
  // Always non-null: an empty snapshot until the first full sync.
  [[nodiscard]] std::shared_ptr<const policy::ClusterSnapshot> snapshot() const;
  // True once every kind has been listed (or, optional, found unavailable) and the first snapshot built
  // from them published; never false again.
  [[nodiscard]] bool synced() const noexcept { return synced_.load(std::memory_order_acquire); }
  // stale: not synced yet, or some kind has been without a watch for longer than stale_after, or (probed)
  // the API server has answered no probe for that long.
  // age_seconds: since the moment the snapshot was last known to match the API server (the oldest kind's
  // last contact; a kind with an open watch is current, as of the last answered probe when probed). Before
  // the first sync: since construction.
  [[nodiscard]] policy::ClusterView view() const;
  [[nodiscard]] ClusterStats stats() const;
  [[nodiscard]] const DeviceViewPool& device_views() const noexcept { return device_views_; }

  // --- rebuilds (ClusterWatcher's rebuild thread, or tests) ---
  // Something changed since the last rebuild, and every kind has been listed.
  [[nodiscard]] bool dirty() const;
  // When the next rebuild may run: now if the last one is at least rebuild_interval ago.
  [[nodiscard]] Instant next_rebuild_at() const;
  // Builds and publishes a snapshot if dirty; returns whether it did.
  bool rebuild();
  // Blocks until dirty() or `stop`; returns dirty().
  bool wait_dirty(std::stop_token stop);

 private:
  struct KindState {
    // Shared with the snapshots built from them: a rebuild copies pointers (policy::SharedList).
    std::map<std::string, std::shared_ptr<const ClusterObject>> objects;  // guarded by mutex_
    bool listed = false;                                                  // guarded by mutex_
    std::atomic<std::uint64_t> object_count{0};
    std::atomic<std::uint64_t> lists{0};
    std::atomic<std::uint64_t> watch_restarts{0};
    std::atomic<std::uint64_t> failures{0};
    std::atomic<std::uint64_t> malformed{0};
    std::atomic<bool> watching{false};
    std::atomic<bool> available{true};
    std::atomic<std::int64_t> last_contact_ns{0};  // Clock time since epoch
  };

  void changed_locked();
  // Every kind listed (or found unavailable) at least once.
  void check_complete_locked();
  // The API server answered for `k` (LIST, event, bookmark): its last contact, and an answer as a probe's.
  void answered(KindState& k);
  void probe_answered_at(std::int64_t now);
  [[nodiscard]] std::int64_t now_ns() const noexcept;
  [[nodiscard]] std::int64_t current_as_of_ns(std::int64_t now) const noexcept;
  // The kinds whose facts are older than stale_after (all of them before the sync, or past the probes).
  [[nodiscard]] policy::ViewKinds stale_kinds(bool is_synced, std::int64_t now,
                                              std::int64_t stale_after) const noexcept;
  // A ResourceSlice's device views pointed at the pool's copies; other kinds as they are.
  void intern(ClusterObject& object) const;

  StoreOptions options_;
  const Clock& clock_;
  const std::int64_t created_ns_;

  std::mutex rebuild_mutex_;  // held for a whole rebuild
  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  std::array<KindState, kKindCount> kinds_;
  mutable DeviceViewPool device_views_;  // its own mutex, never held with mutex_
  bool complete_ = false;                // guarded by mutex_: every kind listed at least once
  std::uint64_t version_ = 0;            // guarded by mutex_: bumped by every change
  std::uint64_t built_version_ = 0;      // guarded by mutex_
  std::optional<Instant> last_rebuild_;  // guarded by mutex_

  std::atomic<std::int64_t> last_probe_answer_ns_;  // kNever until expect_probes()
  std::atomic<std::uint64_t> probe_failures_{0};
  std::atomic<bool> synced_{false};
  std::atomic<std::uint64_t> rebuilds_{0};
  SharedSlot<const policy::ClusterSnapshot> snapshot_;  // its mutex is never held together with mutex_
};

}  // namespace gpuadmit::cluster
