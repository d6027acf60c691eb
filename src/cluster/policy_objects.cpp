#include "gpuadmit/cluster/policy_objects.hpp"

#include <condition_variable>

#include "gpuadmit/cluster/reflector.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::cluster {
namespace {

using nlohmann::json;

constexpr std::size_t kPolicyPageSize = 500;
constexpr std::size_t kMaxPolicyEventBytes = 8U << 20U;
constexpr std::size_t kMaxPolicyJsonDepth = 64;
// A watch that ends this soon without an event did not really work: listing again at once would spin.
constexpr std::chrono::seconds kMinHealthyPolicyWatch{1};

std::string policy_status_target(const PolicyCollection& collection, const json& object) {
  const json meta = object.value("metadata", json::object());
  const std::string name = meta.value("name", std::string());
  if (!collection.namespaced) return std::string(collection.path) + "/" + name + "/status";
  return "/apis/gpuadmit.io/v1alpha1/namespaces/" + meta.value("namespace", std::string()) + "/" +
         std::string(collection.resource) + "/" + name + "/status";
}

// The API server's message from a Status body, else the start of the body.
std::string policy_status_message(const ApiResponse& response) {
  auto parsed = k8s::parse_json(response.body, {1U << 20U, kMaxPolicyJsonDepth});
  if (parsed && parsed->is_object() && parsed->contains("message") && (*parsed)["message"].is_string())
    return "HTTP " + std::to_string(response.status) + ": " + (*parsed)["message"].get<std::string>();
  return "HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 200);
}

}  // namespace

PolicyObjectWatch::PolicyObjectWatch(std::shared_ptr<ApiTransport> transport, OnChange on_change,
                                     PolicyWatchOptions options)
    : transport_(std::move(transport)), on_change_(std::move(on_change)), options_(std::move(options)) {}

PolicyObjectWatch::~PolicyObjectWatch() {
  stop();
}

void PolicyObjectWatch::start() {
  for (std::size_t i = 0; i < kPolicyCollections.size(); ++i) {
    threads_.emplace_back([this, i](const std::stop_token& stop) { run(i, stop); });
  }
}

void PolicyObjectWatch::stop() {
  for (std::jthread& thread : threads_) thread.request_stop();
  threads_.clear();  // joins
}

bool PolicyObjectWatch::listed() const {
  const std::lock_guard lock(mutex_);
  return listed_[0] && listed_[1];
}

void PolicyObjectWatch::wait(std::chrono::milliseconds delay, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  wake.wait_for(lock, stop, delay, [] { return false; });
}

void PolicyObjectWatch::run(std::size_t collection, const std::stop_token& stop) {
  Backoff backoff(options_.backoff);
  while (!stop.stop_requested()) {
    std::string resource_version;
    if (!list(collection, resource_version, stop)) {
      wait(backoff.next(), stop);
      continue;
    }
    if (resource_version.empty()) {  // the CRD is not installed
      wait(options_.missing_retry, stop);
      continue;
    }
    if (watch_until_change(collection, resource_version, stop)) {
      backoff.reset();
    } else {
      wait(backoff.next(), stop);
    }
  }
}

bool PolicyObjectWatch::list(std::size_t collection, std::string& resource_version,
                             const std::stop_token& stop) {
  const PolicyCollection& c = kPolicyCollections[collection];
  std::vector<json> items;
  int status = 0;
  auto listed = list_pages_at(
      *transport_, c.path, c.resource, kPolicyPageSize, stop,
      [&](json&& item) {
        // List items of custom resources carry these, but nothing guarantees it.
        item["apiVersion"] = kPolicyApiVersion;
        item["kind"] = c.kind;
        items.push_back(std::move(item));
      },
      &status);
  if (stop.stop_requested()) return false;
  if (!listed && status != 404) {
    options_.log(spdlog::level::warn, "policy objects: LIST failed",
                 {{"resource", c.resource}, {"error", listed.error().message}});
    return false;
  }
  if (!listed) {
    items.clear();
    resource_version.clear();
  } else {
    resource_version = *listed;
  }
  PolicyObjects snapshot;
  {
    const std::lock_guard lock(mutex_);
    if (!listed && !listed_[collection]) {
      options_.log(spdlog::level::info, "policy objects: no CRD yet; looking again later",
                   {{"resource", c.resource}, {"retry_s", options_.missing_retry.count()}});
    }
    items_[collection] = std::move(items);
    listed_[collection] = true;
    if (!listed_[0] || !listed_[1]) return true;  // the other collection reports once it has listed
    snapshot = PolicyObjects{items_[0], items_[1]};
  }
  const std::lock_guard report(report_mutex_);
  on_change_(snapshot);
  return true;
}

bool PolicyObjectWatch::watch_until_change(std::size_t collection, const std::string& resource_version,
                                           const std::stop_token& stop) {
  const PolicyCollection& c = kPolicyCollections[collection];
  const std::string target = std::string(c.path) +
                             "?watch=1&allowWatchBookmarks=true&resourceVersion=" + resource_version +
                             "&timeoutSeconds=" + std::to_string(options_.watch_timeout.count());
  bool changed = false;
  std::string problem;
  WatchCallbacks callbacks;
  callbacks.line = [&](std::string_view line) {
    if (line.size() > kMaxPolicyEventBytes) {
      problem = "an event larger than " + std::to_string(kMaxPolicyEventBytes) + " bytes";
      return false;
    }
    auto event = k8s::parse_json(line, {line.size(), kMaxPolicyJsonDepth});
    if (!event || !event->is_object()) {
      problem = "an undecodable event";
      return false;
    }
    const std::string type = event->value("type", std::string());
    if (type == "BOOKMARK") return true;
    if (type == "ERROR") {  // 410 Gone and the like: a fresh list is the answer to all of them
      problem = "ERROR event: " + (*event)["object"].value("message", std::string());
      return false;
    }
    changed = true;  // ADDED, MODIFIED, DELETED: list again
    return false;
  };
  const auto started = std::chrono::steady_clock::now();
  auto result = transport_->watch(target, options_.watch_timeout + std::chrono::seconds(30), callbacks, stop);
  if (stop.stop_requested()) return true;
  if (!result) {
    options_.log(spdlog::level::warn, "policy objects: watch failed",
                 {{"resource", c.resource}, {"error", result.error().message}});
    return false;
  }
  if (result->status != 200) {
    options_.log(spdlog::level::warn, "policy objects: watch refused",
                 {{"resource", c.resource}, {"error", policy_status_message(*result)}});
    return false;
  }
  if (!problem.empty()) {
    options_.log(spdlog::level::info, "policy objects: listing again",
                 {{"resource", c.resource}, {"reason", problem}});
    return true;
  }
  return changed || std::chrono::steady_clock::now() - started >= kMinHealthyPolicyWatch;
}

Result<bool> PolicyObjectWatch::patch_status(const json& object, const json& status,
                                             const std::stop_token& stop) {
  const std::string kind = object.value("kind", std::string());
  const PolicyCollection* collection = nullptr;
  for (const PolicyCollection& c : kPolicyCollections) {
    if (c.kind == kind) collection = &c;
  }
  if (collection == nullptr) return make_error("not a policy object: kind \"" + kind + "\"");
  const json patch = {{"status", status}};
  auto response = transport_->merge_patch(policy_status_target(*collection, object), patch.dump(), stop);
  if (!response) return response.error();
  if (response->status != 200) return make_error("PATCH status: " + policy_status_message(*response));
  return true;
}

}  // namespace gpuadmit::cluster
