#include "gpuadmit/cluster/snapshot_store.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace gpuadmit::cluster {
namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();

std::int64_t to_ns(Instant t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// The cached objects of one kind, shared: each pointer owns its variant and points at the alternative.
template <typename T>
policy::SharedList<T> shared_values_of(const std::map<std::string, SnapshotStore::SharedObject>& objects) {
  policy::SharedList<T> out;
  out.reserve(objects.size());
  for (const auto& [key, object] : objects)
    out.push_back(std::shared_ptr<const T>(object, &std::get<T>(*object)));
  return out;
}

}  // namespace

SnapshotStore::SnapshotStore(StoreOptions options, const Clock& clock)
    : options_(options),
      clock_(clock),
      created_ns_(to_ns(clock.now())),
      last_probe_answer_ns_(kNever),
      snapshot_(std::make_shared<const policy::ClusterSnapshot>()) {
  for (KindState& k : kinds_) k.last_contact_ns.store(kNever, std::memory_order_relaxed);
}

std::int64_t SnapshotStore::now_ns() const noexcept {
  return to_ns(clock_.now());
}

void SnapshotStore::changed_locked() {
  ++version_;
  changed_.notify_all();
}

SnapshotStore::SharedObject SnapshotStore::share(Kind kind, const std::string& key,
                                                 ClusterObject object) const {
  {
    const std::lock_guard lock(mutex_);
    const auto& objects = kinds_[index(kind)].objects;
    const auto it = objects.find(key);
    if (it != objects.end() && same_view(*it->second, object)) return it->second;
  }
  intern(object);
  return std::make_shared<const ClusterObject>(std::move(object));
}

void SnapshotStore::intern(ClusterObject& object) const {
  if (auto* slice = std::get_if<k8s::ResourceSlice>(&object)) device_views_.intern(*slice);
}

void SnapshotStore::replace(Kind kind, Entries entries) {
  SharedEntries shared;
  shared.reserve(entries.size());
  for (auto& [key, object] : entries) {
    SharedObject one = share(kind, key, std::move(object));
    shared.emplace_back(std::move(key), std::move(one));
  }
  replace_shared(kind, std::move(shared));
}

void SnapshotStore::replace_shared(Kind kind, SharedEntries entries) {
  std::map<std::string, SharedObject> objects;
  for (auto& [key, object] : entries) objects.insert_or_assign(std::move(key), std::move(object));
  const std::lock_guard lock(mutex_);
  KindState& k = kinds_[index(kind)];
  k.objects.swap(objects);
  k.object_count.store(k.objects.size(), std::memory_order_relaxed);
  k.listed = true;
  k.available.store(true, std::memory_order_relaxed);
  k.lists.fetch_add(1, std::memory_order_relaxed);
  answered(k);
  check_complete_locked();
  changed_locked();
  // `objects` now holds the old content: freed here, after the lock.
}

void SnapshotStore::mark_unavailable(Kind kind) {
  std::map<std::string, SharedObject> objects;  // the old content, freed after the lock
  const std::lock_guard lock(mutex_);
  KindState& k = kinds_[index(kind)];
  answered(k);
  k.available.store(false, std::memory_order_relaxed);
  if (k.listed && k.objects.empty()) return;  // nothing the snapshot holds changes
  k.objects.swap(objects);
  k.object_count.store(0, std::memory_order_relaxed);
  k.listed = true;
  check_complete_locked();
  changed_locked();
}

void SnapshotStore::check_complete_locked() {
  if (!complete_)
    complete_ = std::all_of(kinds_.begin(), kinds_.end(), [](const KindState& s) { return s.listed; });
}

void SnapshotStore::upsert(Kind kind, std::string key, ClusterObject object) {
  intern(object);  // first: a slice whose devices did not change then compares by pointer
  auto shared = std::make_shared<const ClusterObject>(std::move(object));
  const std::lock_guard lock(mutex_);
  KindState& k = kinds_[index(kind)];
  answered(k);
  const auto it = k.objects.find(key);
  if (it != k.objects.end()) {
    if (same_view(*it->second, *shared)) return;  // a heartbeat: nothing the rules read changed
    it->second = std::move(shared);
  } else {
    k.objects.emplace(std::move(key), std::move(shared));
  }
  k.object_count.store(k.objects.size(), std::memory_order_relaxed);
  changed_locked();
}

void SnapshotStore::erase(Kind kind, const std::string& key) {
  const std::lock_guard lock(mutex_);
  KindState& k = kinds_[index(kind)];
  answered(k);
  if (k.objects.erase(key) == 0) return;
  k.object_count.store(k.objects.size(), std::memory_order_relaxed);
  changed_locked();
}

void SnapshotStore::contact(Kind kind) {
  answered(kinds_[index(kind)]);
}

void SnapshotStore::answered(KindState& k) {
  const std::int64_t now = now_ns();
  k.last_contact_ns.store(now, std::memory_order_relaxed);
  probe_answered_at(now);
}

void SnapshotStore::set_watching(Kind kind, bool watching) {
  KindState& k = kinds_[index(kind)];
  // Contact first: a reader that sees watching == false must also see when it stopped.
  k.last_contact_ns.store(now_ns(), std::memory_order_relaxed);
  if (watching) probe_answered();  // a stream that opened is an answer; one that closed may be a reset
  k.watching.store(watching, std::memory_order_release);
}

void SnapshotStore::expect_probes() {
  std::int64_t never = kNever;
  last_probe_answer_ns_.compare_exchange_strong(never, now_ns(), std::memory_order_relaxed);
}

void SnapshotStore::probe_answered() {
  probe_answered_at(now_ns());
}

void SnapshotStore::probe_answered_at(std::int64_t now) {
  std::int64_t seen = last_probe_answer_ns_.load(std::memory_order_relaxed);
  while (seen != kNever && seen < now &&
         !last_probe_answer_ns_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

void SnapshotStore::count_probe_failure() noexcept {
  probe_failures_.fetch_add(1, std::memory_order_relaxed);
}

void SnapshotStore::count_failure(Kind kind) noexcept {
  kinds_[index(kind)].failures.fetch_add(1, std::memory_order_relaxed);
}

void SnapshotStore::count_malformed(Kind kind) noexcept {
  kinds_[index(kind)].malformed.fetch_add(1, std::memory_order_relaxed);
}

void SnapshotStore::count_watch_restart(Kind kind) noexcept {
  kinds_[index(kind)].watch_restarts.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<const policy::ClusterSnapshot> SnapshotStore::snapshot() const {
  return snapshot_.load();
}

std::int64_t SnapshotStore::current_as_of_ns(std::int64_t now) const noexcept {
  // An open watch vouches for its kind only while the API server answers: a stream held open by a
  // partition or a server stuck in shutdown delivers nothing and fails nothing.
  const std::int64_t answered = last_probe_answer_ns_.load(std::memory_order_relaxed);
  std::int64_t oldest = answered == kNever ? now : std::min(now, answered);
  for (const KindState& k : kinds_) {
    // An unavailable kind has nothing to be current about: it is looked for again on a schedule.
    if (k.watching.load(std::memory_order_acquire) || !k.available.load(std::memory_order_relaxed)) continue;
    const std::int64_t contact = k.last_contact_ns.load(std::memory_order_relaxed);
    oldest = std::min(oldest, contact == kNever ? created_ns_ : contact);
  }
  return oldest;
}

policy::ClusterView SnapshotStore::view() const {
  // synced_ first: it is set after the snapshot is stored, so a true here guarantees the load below sees the
  // first complete snapshot or a newer one.
  const bool is_synced = synced();
  policy::ClusterView view;
  view.snapshot = snapshot();
  const std::int64_t now = now_ns();
  const std::int64_t as_of = is_synced ? current_as_of_ns(now) : created_ns_;
  const std::int64_t age_ns = std::max<std::int64_t>(0, now - as_of);
  const std::int64_t stale_after = std::chrono::nanoseconds(options_.stale_after).count();
  view.age_seconds = age_ns / 1'000'000'000;
  view.stale_kinds = stale_kinds(is_synced, now, stale_after);
  view.stale = view.stale_kinds != 0;
  return view;
}

policy::ViewKinds SnapshotStore::stale_kinds(bool is_synced, std::int64_t now,
                                             std::int64_t stale_after) const noexcept {
  // Unanswered probes (a partition, an API server in its shutdown) leave every kind in doubt.
  const std::int64_t answered = last_probe_answer_ns_.load(std::memory_order_relaxed);
  if (!is_synced || (answered != kNever && now - answered > stale_after)) return policy::kEveryViewKind;
  policy::ViewKinds stale = 0;
  for (std::size_t i = 0; i < kKindCount; ++i) {
    const KindState& k = kinds_[i];
    if (k.watching.load(std::memory_order_acquire) || !k.available.load(std::memory_order_relaxed)) continue;
    const std::int64_t contact = k.last_contact_ns.load(std::memory_order_relaxed);
    if (now - (contact == kNever ? created_ns_ : contact) > stale_after)
      stale |= policy::view_kind_bit(kAllKinds[i]);
  }
  return stale;
}

ClusterStats SnapshotStore::stats() const {
  ClusterStats out;
  const std::int64_t now = now_ns();
  for (std::size_t i = 0; i < kKindCount; ++i) {
    const KindState& k = kinds_[i];
    KindStats& s = out.kinds[i];
    s.objects = k.object_count.load(std::memory_order_relaxed);
    s.lists = k.lists.load(std::memory_order_relaxed);
    s.relists = s.lists > 0 ? s.lists - 1 : 0;
    s.watch_restarts = k.watch_restarts.load(std::memory_order_relaxed);
    s.failures = k.failures.load(std::memory_order_relaxed);
    s.malformed_events = k.malformed.load(std::memory_order_relaxed);
    s.synced = s.lists > 0;
    s.watching = k.watching.load(std::memory_order_acquire);
    s.available = k.available.load(std::memory_order_relaxed);
    const std::int64_t contact = k.last_contact_ns.load(std::memory_order_relaxed);
    const std::int64_t since = s.watching ? now : (contact == kNever ? created_ns_ : contact);
    s.seconds_since_contact = static_cast<double>(std::max<std::int64_t>(0, now - since)) / 1e9;
  }
  out.snapshot_rebuilds = rebuilds_.load(std::memory_order_relaxed);
  const policy::ClusterView v = view();
  out.synced = synced();
  out.stale = v.stale;
  const std::int64_t as_of = out.synced ? current_as_of_ns(now) : created_ns_;
  out.snapshot_age_seconds = static_cast<double>(std::max<std::int64_t>(0, now - as_of)) / 1e9;
  out.probe_failures = probe_failures_.load(std::memory_order_relaxed);
  const std::int64_t answered = last_probe_answer_ns_.load(std::memory_order_relaxed);
  if (answered != kNever)
    out.seconds_since_probe_answer = static_cast<double>(std::max<std::int64_t>(0, now - answered)) / 1e9;
  return out;
}

bool SnapshotStore::dirty() const {
  const std::lock_guard lock(mutex_);
  return complete_ && version_ != built_version_;
}

Instant SnapshotStore::next_rebuild_at() const {
  const std::lock_guard lock(mutex_);
  return last_rebuild_ ? *last_rebuild_ + options_.rebuild_interval : Instant::min();
}

bool SnapshotStore::rebuild() {
  // One rebuild at a time, so an older snapshot can never be published after a newer one.
  const std::lock_guard rebuilding(rebuild_mutex_);
  policy::ClusterObjects objects;
  std::uint64_t version = 0;
  {
    const std::lock_guard lock(mutex_);
    if (!complete_ || version_ == built_version_) return false;
    version = version_;
    const auto of = [&](Kind kind) -> const auto& {
      return kinds_[index(kind)].objects;
    };
    objects.nodes = shared_values_of<k8s::Node>(of(Kind::kNode));
    objects.quotas = shared_values_of<k8s::ResourceQuota>(of(Kind::kResourceQuota));
    objects.storage_classes = shared_values_of<k8s::StorageClass>(of(Kind::kStorageClass));
    objects.claims = shared_values_of<k8s::PersistentVolumeClaim>(of(Kind::kPersistentVolumeClaim));
    objects.device_classes = shared_values_of<k8s::DeviceClass>(of(Kind::kDeviceClass));
    objects.resource_slices = shared_values_of<k8s::ResourceSlice>(of(Kind::kResourceSlice));
    objects.resource_claims = shared_values_of<k8s::ResourceClaim>(of(Kind::kResourceClaim));
    objects.claim_templates = shared_values_of<k8s::ResourceClaimTemplate>(of(Kind::kResourceClaimTemplate));
    objects.node_pools = shared_values_of<k8s::NodePool>(of(Kind::kNodePool));
    // dra-claims speaks of missing claims only when all four kinds are watched (served and allowed).
    objects.dra_listed = std::all_of(kAllKinds.begin(), kAllKinds.end(), [&](Kind kind) {
      return (policy::view_kind_bit(kind) & policy::kDeviceViewKinds) == 0 ||
             kinds_[index(kind)].available.load(std::memory_order_relaxed);
    });
  }
  // The expensive part (indexes, sorting) runs without the cache lock, so watch events are not held up.
  auto built = std::make_shared<const policy::ClusterSnapshot>(policy::make_snapshot(std::move(objects)));
  snapshot_.store(std::move(built));  // frees the previous one (milliseconds when large) outside its lock
  // Only now: a request that sees synced() must also see a complete snapshot, never the empty one.
  synced_.store(true, std::memory_order_release);
  rebuilds_.fetch_add(1, std::memory_order_relaxed);
  const std::lock_guard lock(mutex_);
  built_version_ = version;
  last_rebuild_ = clock_.now();
  return true;
}

bool SnapshotStore::wait_dirty(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, stop, [&] { return complete_ && version_ != built_version_; });
  return complete_ && version_ != built_version_;
}

}  // namespace gpuadmit::cluster
