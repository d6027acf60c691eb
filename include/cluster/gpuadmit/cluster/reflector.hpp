// Reflector: the LIST-then-WATCH loop for one kind, in the manner of client-go's reflector. It lists
// (paginated), then watches from the list's resourceVersion with bookmarks, and keeps the store in step:
//   - a watch that ends on schedule (timeoutSeconds) is reopened at once from the last resourceVersion;
//   - 410 Gone (HTTP status or ERROR event) means the version was compacted away: LIST again;
//   - an undecodable line means the stream cannot be trusted: count it, LIST again;
//   - any other failure (connection refused, TLS, 5xx, 403): back off with jitter, then try again;
//   - except for an optional kind (the DRA kinds, kinds.hpp) whose LIST is answered 404 (the API server does
//     not serve it: Kubernetes before 1.34) or 403 (gpuadmit's RBAC lacks it: a chart from before them):
//     the kind is empty and unavailable (SnapshotStore::mark_unavailable), so the view syncs and stays
//     current without it; that is logged once, and the LIST is tried again every unavailable_retry, so an
//     upgrade of the cluster or of the RBAC is picked up without a restart.
// An object that decodes but does not parse into its typed view is dropped from the cache and counted,
// exactly as the LIST would skip it, so a single odd object cannot cause a relist loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/backoff.hpp"
#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/log_sink.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "gpuadmit/cluster/transport.hpp"

namespace gpuadmit::cluster {

struct ReflectorOptions {
  BackoffPolicy backoff{};
  // Watches ask for timeoutSeconds drawn from [min, 2*min) (client-go does the same), so the streams of
  // many replicas do not all reconnect at once.
  std::chrono::seconds min_watch_timeout{300};
  // The transport's deadline for a watch is its timeoutSeconds plus this.
  std::chrono::seconds watch_deadline_grace{30};
  std::size_t list_page_size = 500;
  std::size_t max_list_pages = 10'000;  // 5 million objects: a loop guard, not a real limit
  // How often an optional kind found unavailable (404, 403) is listed again.
  std::chrono::seconds unavailable_retry{60};
};

// One LIST of a whole collection, page by page (limit/continue), `page_size` objects a page or fewer for a
// kind with a max_page_size (ResourceSlices: 100). Each item is handed to `on_item` as soon as its page is
// parsed, so at most one page is ever held as JSON (a page of 500 Nodes is a few MiB; the whole collection
// of a large cluster would be hundreds). Returns the collection's resourceVersion. An HTTP
// error is an error whose message carries the status and the API server's message; `status` receives the
// HTTP status when there was one.
Result<std::string> list_pages(ApiTransport& transport, Kind kind, std::size_t page_size,
                               std::stop_token stop,
                               const std::function<void(nlohmann::json&& item)>& on_item,
                               int* status = nullptr, std::size_t max_pages = 10'000,
                               std::size_t* clipped = nullptr);

// list_pages for a collection that is not one of the cluster view's kinds (gpuadmit's policy objects):
// `path` is the collection's, `resource` its plural for messages.
Result<std::string> list_pages_at(ApiTransport& transport, std::string_view path, std::string_view resource,
                                  std::size_t page_size, std::stop_token stop,
                                  const std::function<void(nlohmann::json&& item)>& on_item,
                                  int* status = nullptr, std::size_t max_pages = 10'000,
                                  std::size_t* clipped = nullptr);

// list_pages collected into one array (for `cluster dump`, which writes them all anyway).
struct ListResult {
  nlohmann::json items = nlohmann::json::array();  // as the API returned them (no kind/apiVersion per item)
  std::string resource_version;
};
Result<ListResult> list_all(ApiTransport& transport, Kind kind, std::size_t page_size, std::stop_token stop,
                            int* status = nullptr);

class Reflector {
 public:
  Reflector(Kind kind, ApiTransport& transport, SnapshotStore& store, ReflectorOptions options, LogSink log,
            std::uint64_t seed = std::random_device{}());

  // Runs until `stop`; never throws for anything the API server or the network does.
  void run(std::stop_token stop);

  // The resourceVersion the next watch starts from ("" before the first LIST).
  [[nodiscard]] std::string resource_version() const;

 private:
  enum class Outcome : std::uint8_t { kEnded, kGone, kMalformed, kFailed, kUnavailable, kStopped };
  enum class Listed : std::uint8_t { kListed, kFailed, kUnavailable };

  // What a watch's stream said, through its callbacks.
  struct WatchStream {
    Outcome outcome = Outcome::kEnded;
    std::string detail;
    bool opened = false;  // the API server answered 200
  };

  Listed list(std::stop_token stop);
  // An optional kind's LIST was answered `status` (404 or 403): empty and unavailable, logged on a change.
  void unavailable(int status, const std::string& error);
  Outcome watch(std::stop_token stop);
  // One watch request from the last resourceVersion, its stream handled line by line into `stream`.
  Result<ApiResponse> open_watch(WatchStream& stream, std::stop_token stop);
  // A watch's outcome from its response and its stream, logged. `worked`: it delivered events or lasted
  // (see kMinHealthyWatch).
  Outcome watch_outcome(const Result<ApiResponse>& result, const WatchStream& stream, bool worked);
  // One line of the stream; sets *outcome and returns false to end the stream.
  bool handle_line(std::string_view line, Outcome* outcome, std::string* detail);
  void wait(std::chrono::milliseconds delay, std::stop_token stop) const;
  // Counts and logs a failed LIST or watch (rate-limited: see kWarnEveryNthFailure).
  void fail(std::string_view message, LogFields fields);
  // Subtrees of a LIST page or of the object `key` (empty: several objects) nested too deep and left out.
  void left_out(std::size_t subtrees, const std::string& key);
  // The API server answered properly again.
  void succeeded();

  Kind kind_;
  ApiTransport& transport_;
  SnapshotStore& store_;
  ReflectorOptions options_;
  LogSink log_;
  Backoff backoff_;
  std::mt19937_64 random_;
  mutable std::mutex rv_mutex_;
  std::string resource_version_;  // guarded by rv_mutex_ (written by run's thread, read by tests)
  std::uint64_t events_since_list_ = 0;
  bool healthy_since_list_ = false;  // a watch since the last LIST delivered events or lasted
  std::uint64_t consecutive_failures_ = 0;
  bool listed_once_ = false;
  int unavailable_since_ = 0;  // the status (404, 403) that made the kind unavailable; 0 while available
  bool watched_once_ = false;
};

}  // namespace gpuadmit::cluster
