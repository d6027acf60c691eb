#include "gpuadmit/cluster/reflector.hpp"

#include <condition_variable>

#include "api_text.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::cluster {
namespace {

using nlohmann::json;

// A watch that ends this soon without delivering anything did not really work (a proxy closing streams at
// once, say): reopening it at once would spin, so it waits like a failure.
constexpr std::chrono::milliseconds kMinHealthyWatch{1'000};
// During an outage each kind fails every 30 s at most: warn on the first failure and then on every 20th
// (about every 10 minutes), so an outage of hours stays a handful of lines; the rest go to debug.
constexpr std::uint64_t kWarnEveryNthFailure = 20;

std::string rbac_hint(Kind kind, int status) {
  if (status != 401 && status != 403) return {};
  if (status == 401) return "the API server did not accept the credentials";
  // resource.group, as kubectl and RBAC errors name it: "resourceslices.resource.k8s.io".
  const std::string_view api_version = info(kind).api_version;
  const std::size_t slash = api_version.find('/');
  std::string resource(info(kind).resource);
  if (slash != std::string_view::npos) resource += "." + std::string(api_version.substr(0, slash));
  return "grant get/list/watch on " + resource + " (see docs/cluster.md)";
}

// A failed LIST's or watch's log fields, with what to do about a 401 or 403.
LogFields failure_fields(Kind kind, int status, std::string error) {
  LogFields fields{{"kind", info(kind).resource}, {"error", std::move(error)}};
  if (const std::string hint = rbac_hint(kind, status); !hint.empty()) fields["hint"] = hint;
  return fields;
}

}  // namespace

Reflector::Reflector(Kind kind, ApiTransport& transport, SnapshotStore& store, ReflectorOptions options,
                     LogSink log, std::uint64_t seed)
    : kind_(kind),
      transport_(transport),
      store_(store),
      options_(options),
      log_(std::move(log)),
      backoff_(options.backoff, seed),
      random_(seed ^ 0x9E3779B97F4A7C15ULL) {}

std::string Reflector::resource_version() const {
  const std::lock_guard lock(rv_mutex_);
  return resource_version_;
}

void Reflector::wait(std::chrono::milliseconds delay, std::stop_token stop) const {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  wake.wait_for(lock, stop, delay, [] { return false; });
}

void Reflector::unavailable(int status, const std::string& error) {
  if (status == 403) store_.count_failure(kind_);
  store_.mark_unavailable(kind_);
  succeeded();  // the API server answered, and clearly
  const KindInfo& k = info(kind_);
  LogFields fields{{"kind", k.resource},
                   {"apiVersion", k.api_version},
                   {"error", error},
                   {"retrySeconds", options_.unavailable_retry.count()}};
  if (status == unavailable_since_) {
    log_(spdlog::level::debug, "cluster kind still unavailable", fields);
    return;
  }
  unavailable_since_ = status;
  if (status == 404) {
    log_(spdlog::level::info, "cluster kind not served by the API server; the view goes on without it",
         fields);
  } else {
    fields["hint"] = rbac_hint(kind_, status);
    log_(spdlog::level::warn, "cluster kind forbidden; the view goes on without it", fields);
  }
}

Reflector::Listed Reflector::list(std::stop_token stop) {
  const std::string_view resource = info(kind_).resource;
  SnapshotStore::SharedEntries entries;
  std::size_t skipped = 0;
  const auto add = [&](json&& item) {
    auto key = object_key(item);
    auto parsed = key ? parse_object(kind_, item) : Result<ClusterObject>(key.error());
    if (!parsed) {
      // Skipped rather than failing the LIST: one odd object must not keep the whole view unsynced.
      ++skipped;
      store_.count_malformed(kind_);
      log_(spdlog::level::warn, "cluster object skipped",
           {{"kind", resource}, {"key", key ? *key : std::string()}, {"error", parsed.error().message}});
      return;
    }
    SnapshotStore::SharedObject object = store_.share(kind_, *key, std::move(*parsed));
    entries.emplace_back(std::move(*key), std::move(object));
  };
  int status = 0;
  std::size_t clipped = 0;
  auto listed = list_pages(transport_, kind_, options_.list_page_size, stop, add, &status,
                           options_.max_list_pages, &clipped);
  left_out(clipped, "");
  if (!listed) {
    if (stop.stop_requested()) return Listed::kFailed;
    if (unavailable_answer(kind_, status)) {
      unavailable(status, listed.error().message);
      return Listed::kUnavailable;
    }
    fail("cluster LIST failed", failure_fields(kind_, status, listed.error().message));
    return Listed::kFailed;
  }
  const std::size_t count = entries.size();
  store_.replace_shared(kind_, std::move(entries));
  {
    const std::lock_guard lock(rv_mutex_);
    resource_version_ = *listed;
  }
  events_since_list_ = 0;
  healthy_since_list_ = false;
  succeeded();
  if (unavailable_since_ != 0) {
    log_(spdlog::level::info, "cluster kind available again", {{"kind", resource}, {"objects", count}});
    unavailable_since_ = 0;
  } else {
    log_(listed_once_ ? spdlog::level::info : spdlog::level::debug,
         listed_once_ ? "cluster relisted" : "cluster listed",
         {{"kind", resource}, {"objects", count}, {"skipped", skipped}, {"resourceVersion", *listed}});
  }
  listed_once_ = true;
  return Listed::kListed;
}

void Reflector::left_out(std::size_t subtrees, const std::string& key) {
  if (subtrees == 0) return;
  // Kept, with the too-deep parts (fields no rule reads) left out: said, and counted as malformed.
  for (std::size_t i = 0; i < subtrees; ++i) store_.count_malformed(kind_);
  LogFields fields{{"kind", info(kind_).resource}, {"subtrees", subtrees}, {"maxDepth", kMaxJsonDepth}};
  if (!key.empty()) fields["key"] = key;
  log_(spdlog::level::warn, "cluster objects nested too deep: those parts were left out", fields);
}

bool Reflector::handle_line(std::string_view line, Outcome* outcome, std::string* detail) {
  const auto malformed = [&](const std::string& why) {
    store_.count_malformed(kind_);
    *outcome = Outcome::kMalformed;
    *detail = why + ": " + std::string(line.substr(0, kLoggedLineBytes));
    return false;
  };
  std::size_t clipped = 0;
  auto event = parse_api_json(line, clipped);
  if (!event) return malformed("undecodable watch event (" + event.error().message + ")");
  if (!event->is_object()) return malformed("watch event is not an object");
  const auto type_it = event->find("type");
  const auto object_it = event->find("object");
  if (type_it == event->end() || !type_it->is_string() || object_it == event->end() ||
      !object_it->is_object()) {
    return malformed("watch event without type or object");
  }
  const std::string& type = type_it->get_ref<const std::string&>();
  const json& object = *object_it;
  if (const auto key = clipped > 0 ? object_key(object) : Result<std::string>(std::string()); key)
    left_out(clipped, *key);

  if (type == "BOOKMARK") {
    std::string rv = cluster::resource_version(object);
    if (rv.empty()) return malformed("bookmark without resourceVersion");
    const std::lock_guard lock(rv_mutex_);
    resource_version_ = std::move(rv);
    store_.contact(kind_);
    return true;
  }
  if (type == "ERROR") {
    const int code = object.value("code", 0);
    *detail = "ERROR event: " + object.value("message", std::string("(no message)"));
    *outcome = code == 410 ? Outcome::kGone : Outcome::kFailed;
    return false;
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED")
    return malformed("unknown watch event type");
  auto key = object_key(object);
  if (!key) return malformed("watch event object without a name (" + key.error().message + ")");
  if (type == "DELETED") {
    store_.erase(kind_, *key);
  } else if (auto parsed = parse_object(kind_, object); parsed) {
    store_.upsert(kind_, *key, std::move(*parsed));
  } else {
    // What a LIST would do with it: leave it out. Keeping the previous version would be wrong too.
    store_.count_malformed(kind_);
    store_.erase(kind_, *key);
    log_(spdlog::level::warn, "cluster object dropped",
         {{"kind", info(kind_).resource}, {"key", *key}, {"error", parsed.error().message}});
  }
  if (std::string rv = cluster::resource_version(object); !rv.empty()) {
    const std::lock_guard lock(rv_mutex_);
    resource_version_ = std::move(rv);
  }
  ++events_since_list_;
  return true;
}

Result<ApiResponse> Reflector::open_watch(WatchStream& stream, std::stop_token stop) {
  const std::int64_t min_timeout = std::max<std::int64_t>(1, options_.min_watch_timeout.count());
  const std::int64_t timeout =
      std::uniform_int_distribution<std::int64_t>(min_timeout, 2 * min_timeout - 1)(random_);
  const std::string target =
      std::string(info(kind_).path) +
      "?watch=1&allowWatchBookmarks=true&resourceVersion=" + percent_encode(resource_version()) +
      "&timeoutSeconds=" + std::to_string(timeout);
  WatchCallbacks callbacks;
  callbacks.opened = [&] {
    stream.opened = true;
    store_.set_watching(kind_, true);
    succeeded();
  };
  callbacks.line = [&](std::string_view line) { return handle_line(line, &stream.outcome, &stream.detail); };
  auto result = transport_.watch(target, std::chrono::seconds(timeout) + options_.watch_deadline_grace,
                                 callbacks, stop);
  if (stream.opened) store_.set_watching(kind_, false);
  return result;
}

Reflector::Outcome Reflector::watch(std::stop_token stop) {
  if (watched_once_) store_.count_watch_restart(kind_);
  watched_once_ = true;
  WatchStream stream;
  const std::uint64_t events_before = events_since_list_;
  const auto started = std::chrono::steady_clock::now();
  const auto result = open_watch(stream, stop);
  if (stop.stop_requested()) return Outcome::kStopped;
  const bool worked =
      events_since_list_ > events_before || std::chrono::steady_clock::now() - started >= kMinHealthyWatch;
  if (stream.opened && worked) {
    backoff_.reset();
    healthy_since_list_ = true;
  }
  return watch_outcome(result, stream, worked);
}

Reflector::Outcome Reflector::watch_outcome(const Result<ApiResponse>& result, const WatchStream& stream,
                                            bool worked) {
  const std::string_view resource = info(kind_).resource;
  if (!result) {
    fail("cluster watch failed", {{"kind", resource}, {"error", result.error().message}});
    return Outcome::kFailed;
  }
  if (result->status == 410) {
    log_(spdlog::level::info, "cluster watch expired (410 Gone); relisting", {{"kind", resource}});
    return Outcome::kGone;
  }
  if (unavailable_answer(kind_, result->status)) {
    // Served and allowed when listed, not now: the LIST that follows tells which, and marks it.
    log_(spdlog::level::info, "cluster watch refused; listing again",
         {{"kind", resource}, {"status", result->status}});
    return Outcome::kUnavailable;
  }
  if (result->status != 200) {
    fail("cluster watch refused",
         failure_fields(kind_, result->status, describe_status(result->status, result->body)));
    return Outcome::kFailed;
  }
  switch (stream.outcome) {
    case Outcome::kGone:
      log_(spdlog::level::info, "cluster watch expired (410 Gone); relisting",
           {{"kind", resource}, {"detail", stream.detail}});
      break;
    case Outcome::kMalformed:
      log_(spdlog::level::warn, "cluster watch event malformed; relisting",
           {{"kind", resource}, {"detail", stream.detail}});
      break;
    case Outcome::kFailed:
      fail("cluster watch failed", {{"kind", resource}, {"error", stream.detail}});
      break;
    case Outcome::kEnded:
      if (!worked) return Outcome::kFailed;  // see kMinHealthyWatch; not counted as a failure
      break;
    case Outcome::kUnavailable:
    case Outcome::kStopped:
      break;
  }
  return stream.outcome;
}

void Reflector::fail(std::string_view message, LogFields fields) {
  store_.count_failure(kind_);
  ++consecutive_failures_;
  const bool warn = consecutive_failures_ == 1 || consecutive_failures_ % kWarnEveryNthFailure == 0;
  if (consecutive_failures_ > 1) fields["attempt"] = consecutive_failures_;
  log_(warn ? spdlog::level::warn : spdlog::level::debug, message, fields);
}

void Reflector::succeeded() {
  if (consecutive_failures_ > 0) {
    log_(spdlog::level::info, "cluster API server reachable again",
         {{"kind", info(kind_).resource}, {"failedAttempts", consecutive_failures_}});
  }
  consecutive_failures_ = 0;
}

void Reflector::run(std::stop_token stop) {
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      const Listed listed = list(stop);
      if (listed != Listed::kListed) {
        wait(listed == Listed::kUnavailable ? options_.unavailable_retry : backoff_.next(), stop);
        continue;
      }
      need_list = false;
    }
    switch (watch(stop)) {
      case Outcome::kStopped:
        return;
      case Outcome::kEnded:
        break;  // on schedule: reopen at once from the last resourceVersion
      case Outcome::kGone:
        need_list = true;
        // Gone before any watch since the LIST worked: LIST and 410 would spin, so back off. Otherwise (the
        // usual case: compaction, or an API server restart) LIST at once.
        if (!healthy_since_list_) wait(backoff_.next(), stop);
        break;
      case Outcome::kMalformed:
      case Outcome::kUnavailable:
        need_list = true;
        wait(backoff_.next(), stop);
        break;
      case Outcome::kFailed:
        wait(backoff_.next(), stop);
        break;
    }
  }
}

}  // namespace gpuadmit::cluster
