#include "gpuadmit/cluster/lease.hpp"

#include <array>
#include <condition_variable>
#include <ctime>
#include <mutex>

#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::cluster {
namespace {

using nlohmann::json;

constexpr int kOk = 200;
constexpr int kCreated = 201;
constexpr int kNotFound = 404;
constexpr std::size_t kMaxLeaseBytes = 64 * 1024;

std::string string_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t int_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Result<LeaseRecord> record_of(const ApiResponse& response) {
  auto parsed = k8s::parse_json(response.body, {kMaxLeaseBytes, 32});
  if (!parsed) return make_error("the Lease is not JSON: " + parsed.error().message);
  return parse_lease(*parsed);
}

}  // namespace

Result<LeaseRecord> parse_lease(const json& lease) {
  if (!lease.is_object() || lease.value("kind", std::string()) != "Lease")
    return make_error("not a Lease object");
  LeaseRecord record;
  if (const auto meta = lease.find("metadata"); meta != lease.end() && meta->is_object())
    record.resource_version = string_at(*meta, "resourceVersion");
  if (const auto spec = lease.find("spec"); spec != lease.end() && spec->is_object()) {
    record.holder = string_at(*spec, "holderIdentity");
    record.acquire_time = string_at(*spec, "acquireTime");
    record.renew_time = string_at(*spec, "renewTime");
    record.duration_seconds = int_at(*spec, "leaseDurationSeconds");
    record.transitions = int_at(*spec, "leaseTransitions");
  }
  return record;
}

json lease_object(const LeaseSettings& settings, const std::optional<LeaseRecord>& current,
                  const std::string& now) {
  const bool renewing = current && current->holder == settings.identity && !settings.identity.empty();
  json meta{{"name", settings.name}, {"namespace", settings.namespace_}};
  if (current) meta["resourceVersion"] = current->resource_version;
  std::int64_t transitions = 0;
  if (current) transitions = current->transitions + (renewing || settings.identity.empty() ? 0 : 1);
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", meta},
          {"spec",
           {{"holderIdentity", settings.identity},
            {"leaseDurationSeconds", settings.duration.count()},
            {"acquireTime", renewing ? current->acquire_time : now},
            {"renewTime", now},
            {"leaseTransitions", transitions}}}};
}

std::string micro_time(std::chrono::system_clock::time_point time) {
  const auto since = time.time_since_epoch();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(since);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since - seconds).count();
  const std::time_t t = seconds.count();
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 64> text{};
  std::size_t n = std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%S", &tm);
  n += static_cast<std::size_t>(
      std::snprintf(text.data() + n, text.size() - n, ".%06lldZ", static_cast<long long>(micros)));  // NOLINT
  return {text.data(), n};
}

LeaderElection::LeaderElection(std::shared_ptr<ApiTransport> transport, LeaseSettings settings,
                               const Clock& clock, LogSink log,
                               std::function<std::chrono::system_clock::time_point()> wall_clock)
    : transport_(std::move(transport)),
      settings_(std::move(settings)),
      clock_(clock),
      log_(std::move(log)),
      wall_clock_(wall_clock ? std::move(wall_clock) : [] { return std::chrono::system_clock::now(); }) {}

std::string LeaderElection::path() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + settings_.namespace_ + "/leases/" + settings_.name;
}

void LeaderElection::set_leading(bool leading, const std::string& why) {
  if (leading_.exchange(leading) == leading) return;
  log_(
      leading ? spdlog::level::info : spdlog::level::warn,
      leading ? "audit lease acquired: this replica audits" : "audit lease lost: this replica stops auditing",
      {{"lease", settings_.namespace_ + "/" + settings_.name},
       {"identity", settings_.identity},
       {"why", why}});
}

bool LeaderElection::renew_failed(const std::string& why) {
  if (leading_ && clock_.now() - last_renewal_ < settings_.renew_deadline) {
    log_(spdlog::level::warn, "audit lease not renewed; retrying",
         {{"lease", settings_.namespace_ + "/" + settings_.name}, {"error", why}});
    return true;
  }
  set_leading(false, why);
  return false;
}

bool LeaderElection::try_acquire_or_renew(std::stop_token stop) {
  const std::string now = micro_time(wall_clock_());
  auto read = transport_->get(path(), stop);
  if (!read) return renew_failed("GET Lease: " + read.error().message);
  std::optional<LeaseRecord> current;
  if (read->status == kOk) {
    auto record = record_of(*read);
    if (!record) return renew_failed(record.error().message);
    current = std::move(*record);
    if (!observed_ || observed_->holder != current->holder || observed_->renew_time != current->renew_time) {
      observed_ = current;
      observed_at_ = clock_.now();
    }
    const auto duration =
        current->duration_seconds > 0 ? std::chrono::seconds(current->duration_seconds) : settings_.duration;
    if (current->holder != settings_.identity && !current->holder.empty() &&
        clock_.now() < observed_at_ + duration) {
      set_leading(false, "held by " + current->holder);
      return false;
    }
  } else if (read->status != kNotFound) {
    return renew_failed("GET Lease: HTTP " + std::to_string(read->status));
  }
  const json object = lease_object(settings_, current, now);
  auto written = current ? transport_->write(WriteVerb::kReplace, path(), object.dump(), stop)
                         : transport_->write(
                               WriteVerb::kCreate,
                               "/apis/coordination.k8s.io/v1/namespaces/" + settings_.namespace_ + "/leases",
                               object.dump(), stop);
  if (!written) return renew_failed("write Lease: " + written.error().message);
  if (written->status != kOk && written->status != kCreated) {
    // 409: another replica wrote it since the read; the next round reads again.
    return renew_failed("write Lease: HTTP " + std::to_string(written->status));
  }
  auto mine = record_of(*written);
  if (!mine) return renew_failed(mine.error().message);
  const std::string previous = current ? current->holder : std::string();
  observed_ = std::move(*mine);
  observed_at_ = last_renewal_ = clock_.now();
  set_leading(true,
              previous.empty() || previous == settings_.identity ? "free" : "taken over from " + previous);
  return true;
}

void LeaderElection::release() {
  if (!leading_ || !observed_) return;
  LeaseSettings released = settings_;
  released.identity.clear();
  released.duration = std::chrono::seconds(1);
  const json object = lease_object(released, observed_, micro_time(wall_clock_()));
  auto written = transport_->write(WriteVerb::kReplace, path(), object.dump(), {});
  set_leading(false, "stopping");
  if (!written || written->status != kOk) {
    log_(spdlog::level::warn, "audit lease not released; another replica takes it over when it expires",
         {{"error", written ? "HTTP " + std::to_string(written->status) : written.error().message}});
  }
}

void LeaderElection::run(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  while (!stop.stop_requested()) {
    try_acquire_or_renew(stop);
    std::unique_lock lock(mutex);
    wake.wait_for(lock, stop, settings_.retry, [] { return false; });
  }
  release();
}

}  // namespace gpuadmit::cluster
