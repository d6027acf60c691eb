// Load benchmark for `gpuadmit serve`: keep-alive HTTPS against an in-process webhook on 127.0.0.1:0.
//
// For each endpoint it measures
//   1. throughput at saturation: K connections, each on its own thread, sending back to back;
//   2. latency at half that rate: the same connections paced open-loop on one shared schedule, each send
//      taken by whichever connection is free, as the API server's connection pool does (latency counted
//      from the scheduled send time, so a slow reply delays the measurement instead of hiding it), and
//      beside it the same latency from the actual send and how late the idle load generator itself woke up
//      (the host's floor).
// The endpoints are /mutate on a corpus of realistic AdmissionReviews, /validate on the same reviews after
// our patch (what the API server sends it) and on the raw corpus, and /bench/constant, which answers a
// fixed review without parsing anything: the transport's own ceiling. That route is the bench's own, not
// the product's: a second server in this process, on the same transport, TLS files and server threads as
// the webhook, whose one handler returns a fixed body (ConstantServer). Results read as a ratio of the two
// (the median over rounds of each round's pair, so that a burst of load from a neighbour on a shared host
// moves one round, not the result), and as process CPU per request (client and server share the machine,
// so absolute numbers are a floor).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <fcntl.h>
#include <nlohmann/json.hpp>

#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "gpuadmit/server/certs.hpp"
#include "gpuadmit/server/log_writer.hpp"
#include "gpuadmit/server/metrics.hpp"
#include "gpuadmit/server/readiness.hpp"
#include "gpuadmit/server/router.hpp"
#include "gpuadmit/server/server.hpp"
#include "gpuadmit/server/tls_context.hpp"
#include "gpuadmit/server/webhook.hpp"
#include "support/https_client.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using gpuadmit::test::HttpsClient;
using nlohmann::json;

// The transport's ceiling: the webhook's HTTPS server (same configuration, TLS files and log) with one route,
// POST /bench/constant, whose handler answers a fixed AdmissionReview and parses nothing. What an endpoint
// costs beyond it is the review and its handler.
class ConstantServer {
 public:
  static gpuadmit::Result<std::unique_ptr<ConstantServer>> start(const gpuadmit::server::ServerConfig& config,
                                                                 const gpuadmit::server::TlsFiles& files,
                                                                 const gpuadmit::server::JsonLog& log) {
    auto tls = gpuadmit::server::TlsContextStore::open(files);
    if (!tls) {
      return tls.error();
    }
    auto out = std::unique_ptr<ConstantServer>(new ConstantServer(std::move(*tls)));
    out->router_.add("POST", "/bench/constant", [](const gpuadmit::server::Request&) {
      return gpuadmit::server::Response{
          200,
          "application/json",
          R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
          R"("response":{"uid":"00000000-0000-0000-0000-000000000000","allowed":true}})",
          {}};
    });
    auto server =
        gpuadmit::server::Server::bind(config, out->router_, *out->tls_, out->metrics_, out->readiness_, log);
    if (!server) {
      return server.error();
    }
    out->server_ = std::move(*server);
    out->server_->start();
    return out;
  }
  ConstantServer(const ConstantServer&) = delete;
  ConstantServer& operator=(const ConstantServer&) = delete;
  ConstantServer(ConstantServer&&) = delete;
  ConstantServer& operator=(ConstantServer&&) = delete;
  ~ConstantServer() {
    server_->stop_now();
    server_->wait();
  }

  [[nodiscard]] std::uint16_t port() const noexcept { return server_->port(); }

 private:
  explicit ConstantServer(std::unique_ptr<gpuadmit::server::TlsContextStore> tls) : tls_(std::move(tls)) {}

  std::unique_ptr<gpuadmit::server::TlsContextStore> tls_;
  gpuadmit::server::Metrics metrics_{"bench"};
  gpuadmit::server::Readiness readiness_;
  gpuadmit::server::Router router_;
  std::unique_ptr<gpuadmit::server::Server> server_;  // last: stopped before what it uses
};

struct BenchOptions {
  int connections = 8;
  std::chrono::milliseconds duration{4'000};  // per phase (saturation: in total, over the rounds)
  // Saturation runs the endpoints in turn, this many times; each round's ratio pairs slices a few seconds
  // apart, so a background burst on a shared host moves one round, not the median.
  int rounds = 8;
  std::uint64_t max_requests = 2'000'000;  // per phase, a bound besides time
  unsigned server_threads = 0;
  std::string only;  // one endpoint label: that endpoint alone, for profilers (no ratio, no in-process loops)
  std::string source_dir = GPUADMIT_SOURCE_DIR;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

json review_of(const json& pod, int n) {
  json review = json::parse(read_text(std::filesystem::path(GPUADMIT_SOURCE_DIR) /
                                      "deploy/examples/admission-review-gpu-pod.json"));
  review["request"]["uid"] = "bench-" + std::to_string(n);
  review["request"]["object"] = pod;
  review["request"]["namespace"] = pod["metadata"].value("namespace", "ml-team");
  return review;
}

// The deploy example (a Job's pod as the apiserver serializes it), every fixture pod, and a large pod with
// sidecars and many env vars: the mix a GPU cluster sends.
std::vector<std::string> load_corpus(const std::string& source_dir) {
  std::vector<std::string> corpus;
  const json example = json::parse(
      read_text(std::filesystem::path(source_dir) / "deploy/examples/admission-review-gpu-pod.json"));
  corpus.push_back(example.dump());
  int n = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(source_dir) / "tests/fixtures/pods")) {
    auto documents = gpuadmit::config::read_documents(read_text(entry.path()), entry.path().string());
    if (!documents) {
      continue;
    }
    for (const auto& document : *documents) {
      // Pods only: the envelope says kind Pod, and a review whose object is another kind is malformed
      // (tests/fixtures/pods/deployment-not-a-pod.yaml would be answered 400, a failure in every round).
      if (document.object.value("kind", "Pod") != "Pod") continue;
      corpus.push_back(review_of(document.object, ++n).dump());
    }
  }
  json large = example["request"]["object"];
  json& containers = large["spec"]["containers"];
  for (int i = 0; i < 60; ++i) {
    containers[0]["env"].push_back(
        {{"name", "TRAIN_SETTING_" + std::to_string(i)}, {"value", std::string(24, 'v')}});
  }
  for (const char* sidecar : {"log-shipper", "metrics-exporter"}) {
    json extra = containers[0];
    extra["name"] = sidecar;
    extra["image"] = std::string("registry.example.com/") + sidecar + ":1.4.2";
    extra["resources"] = {{"limits", {{"cpu", "200m"}, {"memory", "256Mi"}}},
                          {"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}};
    containers.push_back(extra);
  }
  corpus.push_back(review_of(large, ++n).dump());
  return corpus;
}

struct Target {
  std::string label;
  std::string path;
  const std::vector<std::string>* bodies;
  std::uint16_t port;  // the webhook's, or the constant server's
};

// What the API server sends /validate: the object after the mutating webhooks, here ours alone.
std::vector<std::string> after_mutation(const std::vector<std::string>& corpus,
                                        const gpuadmit::policy::RuleSet& rules) {
  std::vector<std::string> out;
  for (const std::string& body : corpus) {
    json review = json::parse(body);
    json& object = review["request"]["object"];
    const auto document = gpuadmit::k8s::OwnedJsonDocument::of(object);
    if (!document) continue;
    const gpuadmit::policy::Request request{document->root(), review["request"].value("namespace", ""),
                                            gpuadmit::policy::Mode::kMutate};
    const auto decision = gpuadmit::policy::evaluate(request, rules);
    if (decision && decision->allowed() && !decision->patch.empty()) {
      object = object.patch(decision->patch);
    }
    out.push_back(review.dump());
  }
  return out;
}

// Nearest-rank percentile (p in [0, 1]) of unsorted samples; 0 when there are none.
double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) {
    return 0;
  }
  std::sort(samples.begin(), samples.end());
  return samples[std::min(samples.size() - 1,
                          static_cast<std::size_t>(p * static_cast<double>(samples.size())))];
}

struct Phase {
  std::uint64_t requests = 0;
  std::uint64_t failures = 0;
  double seconds = 0;
  double cpu_seconds = 0;  // the whole process (server and load generator), user + system
  // Paced phases only. Response time counts from the scheduled send, so replies that keep every connection
  // busy past a send's time are charged to that send (no coordinated omission). It also charges the load
  // generator's own late wake-ups, which on a shared virtual machine can be milliseconds at p99 with no load
  // at all; `late_us` measures those alone (sends whose connection was free before they were due), and
  // `sent_us` counts from the actual send: what a caller like the API server, which does not sleep before
  // it calls, would see.
  std::vector<double> latencies_us;
  std::vector<double> sent_us;
  std::vector<double> late_us;
  [[nodiscard]] double rate() const { return seconds > 0 ? static_cast<double>(requests) / seconds : 0; }
  // CPU per request at saturation, client and server together: how the ratio splits into costs.
  [[nodiscard]] double cpu_per_request_us() const {
    return requests > 0 ? cpu_seconds * 1e6 / static_cast<double>(requests) : 0;
  }
};

// Each round's rate over the constant route's in the same round.
std::vector<double> paired_ratios(const std::vector<double>& rates, const std::vector<double>& constant) {
  std::vector<double> out;
  for (std::size_t i = 0; i < rates.size() && i < constant.size(); ++i) {
    out.push_back(constant[i] > 0 ? rates[i] / constant[i] : 0);
  }
  return out;
}

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// K connections; rate 0 = as fast as possible, each connection sending back to back. Otherwise paced
// open-loop at `rate` requests/s in total, on one shared schedule: send n is due at start + n / rate, and
// whichever connection is free takes the next one due. So a request waits for a connection only when all K
// are busy, as with the API server's connection pool (it sends each call on an idle connection, or opens
// one), and never behind one slow reply while other connections sit idle.
Phase run_phase(const std::function<HttpsClient(std::uint16_t)>& make_client, const Target& target,
                const BenchOptions& options, double rate) {
  const std::vector<std::string>& corpus = *target.bodies;
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> tickets{0};  // paced phases: the next send on the schedule
  std::mutex mutex;
  Phase phase;
  std::vector<HttpsClient> clients;
  for (int i = 0; i < options.connections; ++i) {
    clients.push_back(make_client(target.port));
    if (!clients.back().connect()) {
      failures.fetch_add(1);
    }
  }
  const auto start = Clock::now() + 100ms;  // every thread starts together
  const double cpu_before = process_cpu_seconds();
  const auto end = start + options.duration;
  const auto due = [&](std::uint64_t n) {
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(static_cast<double>(n) / rate));
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(options.connections));
  for (int i = 0; i < options.connections; ++i) {
    threads.emplace_back([&, i] {
      HttpsClient& client = clients[static_cast<std::size_t>(i)];
      std::vector<double> local;
      std::vector<double> local_sent;
      std::vector<double> local_late;
      auto k = static_cast<std::size_t>(i);
      std::this_thread::sleep_until(start);
      while (Clock::now() < end && requests.load(std::memory_order_relaxed) < options.max_requests) {
        auto next = Clock::now();
        bool idle = false;  // free before the send was due: any lateness is the host's, not a queue's
        if (rate > 0) {
          const std::uint64_t n = tickets.fetch_add(1, std::memory_order_relaxed);
          next = due(n);
          if (next >= end) {
            break;
          }
          k = static_cast<std::size_t>(n);
          idle = Clock::now() < next;
          std::this_thread::sleep_until(next);
        }
        const std::string& body = corpus[k++ % corpus.size()];
        const auto sent = Clock::now();
        auto reply = client.request("POST", target.path, body);
        const auto done = Clock::now();
        if (!reply || reply->status != 200) {
          failures.fetch_add(1, std::memory_order_relaxed);
        } else {
          requests.fetch_add(1, std::memory_order_relaxed);
          local.push_back(std::chrono::duration<double, std::micro>(done - next).count());
          if (rate > 0) {
            local_sent.push_back(std::chrono::duration<double, std::micro>(done - sent).count());
            if (idle) {
              local_late.push_back(std::chrono::duration<double, std::micro>(sent - next).count());
            }
          }
        }
      }
      const std::lock_guard lock(mutex);
      phase.latencies_us.insert(phase.latencies_us.end(), local.begin(), local.end());
      phase.sent_us.insert(phase.sent_us.end(), local_sent.begin(), local_sent.end());
      phase.late_us.insert(phase.late_us.end(), local_late.begin(), local_late.end());
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  const double seconds = std::chrono::duration<double>(std::min(Clock::now(), end) - start).count();
  // The 100 ms before the start are spent asleep, so the CPU time is the phase's own.
  phase.requests = requests.load();
  phase.failures = failures.load();
  phase.seconds = seconds;
  phase.cpu_seconds = process_cpu_seconds() - cpu_before;
  return phase;
}

std::string proc_status(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":")) {
      const auto first = line.find_first_not_of(" \t", field.size() + 1);
      return first == std::string::npos ? std::string() : line.substr(first);
    }
  }
  return "?";
}

int usage() {
  std::fputs(
      "usage: gpuadmit_load_bench [--connections K] [--seconds S] [--rounds R] [--max-requests N] "
      "[--server-threads N] [--only ENDPOINT]\n"
      "  --only runs one endpoint (/bench/constant, /validate, \"/validate (raw)\", /mutate) and nothing "
      "else,\n"
      "  so that a profiler sees only its requests (scripts/instructions.sh uses it)\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i + 1 >= args.size()) {
      return usage();
    }
    const std::string& value = args[i + 1];
    if (args[i] == "--connections") {
      options.connections = std::stoi(value);
    } else if (args[i] == "--seconds") {
      options.duration = std::chrono::milliseconds(static_cast<long>(std::stod(value) * 1000));
    } else if (args[i] == "--max-requests") {
      options.max_requests = std::stoull(value);
    } else if (args[i] == "--server-threads") {
      options.server_threads = static_cast<unsigned>(std::stoul(value));
    } else if (args[i] == "--only") {
      options.only = value;
      if (value != "/bench/constant" && value != "/validate" && value != "/validate (raw)" &&
          value != "/mutate") {
        std::fprintf(stderr, "--only: no endpoint labelled \"%s\"\n", value.c_str());
        return usage();
      }
    } else if (args[i] == "--rounds") {
      options.rounds = std::max(1, std::stoi(value));
    } else {
      return usage();
    }
    ++i;
  }

  const auto directory =
      std::filesystem::temp_directory_path() / ("gpuadmit-bench-" + std::to_string(::getpid()));
  auto ca = gpuadmit::server::generate_ca({"bench-ca", 1});
  auto serving =
      ca ? gpuadmit::server::generate_serving_certificate(*ca, {{"localhost"}, {"127.0.0.1"}, 1, {}})
         : gpuadmit::Result<gpuadmit::server::PemPair>(ca.error());
  if (!serving) {
    std::fprintf(stderr, "certificates: %s\n", serving.error().message.c_str());
    return 1;
  }
  auto files = gpuadmit::server::write_certificate_files(directory, ca->certificate, *serving);
  if (!files) {
    return 1;
  }

  gpuadmit::server::WebhookConfig config;
  config.server.host = "127.0.0.1";
  config.server.port = 0;
  config.server.threads = options.server_threads;
  config.tls = {files->certificate, files->private_key, std::nullopt};
  // Review log lines are written as in production (through a LogWriter), to /dev/null: their cost is part
  // of a review.
  const int dev_null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (dev_null < 0) {
    std::perror("/dev/null");
    return 1;
  }
  auto log_writer = std::make_shared<gpuadmit::server::LogWriter>(dev_null);
  const auto log = gpuadmit::server::JsonLog::to_writer(log_writer, spdlog::level::info);
  auto webhook = gpuadmit::server::Webhook::create(config, log);
  if (!webhook) {
    std::fprintf(stderr, "webhook: %s\n", webhook.error().message.c_str());
    return 1;
  }
  (*webhook)->start();
  auto constant = ConstantServer::start(config.server, config.tls, log);
  if (!constant) {
    std::fprintf(stderr, "constant server: %s\n", constant.error().message.c_str());
    return 1;
  }
  const std::uint16_t port = (*webhook)->port();
  const auto make_client = [&](std::uint16_t target_port) {
    gpuadmit::test::ClientOptions client_options;
    client_options.ca_pem = ca->certificate;
    return HttpsClient("127.0.0.1", target_port, client_options);
  };

  const std::vector<std::string> corpus = load_corpus(options.source_dir);
  std::size_t corpus_bytes = 0;
  for (const std::string& body : corpus) {
    corpus_bytes += body.size();
  }
  const std::vector<std::string> constant_body{corpus.front()};
  std::printf(
      "gpuadmit load bench: %d keep-alive TLS connections, %.1f s per phase, server threads %u, "
      "%u cores, %s; corpus %zu reviews, mean %zu bytes\n\n",
      options.connections, static_cast<double>(options.duration.count()) / 1000.0,
      options.server_threads == 0 ? std::thread::hardware_concurrency() : options.server_threads,
      std::thread::hardware_concurrency(), GPUADMIT_ALLOCATOR, corpus.size(), corpus_bytes / corpus.size());
  std::printf("%-16s %14s %12s %10s %10s %10s %13s %13s %9s %14s\n", "endpoint", "saturation/s",
              "half-load/s", "p50 µs", "p99 µs", "max µs", "p99 sent µs", "late p99 µs", "failures",
              "CPU µs/req");

  // /validate is measured twice: on what the API server sends it (each review after our /mutate patch, so
  // what mutation fixed no longer shows) and on the raw corpus (every finding denied in full, the worst
  // case: long messages).
  const std::vector<std::string> validate_corpus = after_mutation(corpus, *(*webhook)->policy().current());
  std::vector<Target> targets{{"/bench/constant", "/bench/constant", &constant_body, (*constant)->port()},
                              {"/validate", "/validate", &validate_corpus, port},
                              {"/validate (raw)", "/validate", &corpus, port},
                              {"/mutate", "/mutate", &corpus, port}};
  if (!options.only.empty()) {
    std::erase_if(targets, [&](const Target& target) { return target.label != options.only; });
  }
  // The admission layer alone on the same corpora, one thread, no sockets: what the ratio is made of.
  const auto rules = (*webhook)->policy().current();
  const auto core_us = [&](gpuadmit::admission::Endpoint endpoint, const std::vector<std::string>& bodies) {
    std::size_t reviews = 0;
    const auto begin = Clock::now();
    while (Clock::now() - begin < 1s) {
      for (const std::string& body : bodies) {
        (void)gpuadmit::admission::review(body, endpoint, *rules);
      }
      reviews += bodies.size();
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - begin).count() /
           static_cast<double>(reviews);
  };
  if (!options.only.empty()) {
    // One saturation phase and nothing else: with --max-requests, exactly that many requests are made, so
    // two runs with different counts difference out the start-up (scripts/instructions.sh).
    const Target& target = targets.front();
    const Phase phase = run_phase(make_client, target, options, 0);
    std::printf("%-16s %14.0f %12s %10s %10s %10s %13s %13s %9llu %14.1f\n", target.label.c_str(),
                phase.rate(), "-", "-", "-", "-", "-", "-",
                static_cast<unsigned long long>(phase.failures),  // NOLINT(google-runtime-int)
                phase.cpu_per_request_us());
    constant->reset();
    (*webhook)->stop_now();
    (*webhook)->wait();
    std::filesystem::remove_all(directory);
    return phase.failures == 0 ? 0 : 1;
  }
  for (const Target& target : targets) {
    run_phase(make_client, target, {options.connections, 300ms, 1, options.max_requests, 0, {}, {}},
              0);  // warm-up
  }
  // Saturation, interleaved: round after round of every endpoint.
  std::map<std::string, Phase> saturation;
  std::map<std::string, std::vector<double>> round_rates;
  BenchOptions slice = options;
  slice.duration = options.duration / options.rounds;
  for (int round = 0; round < options.rounds; ++round) {
    for (const Target& target : targets) {
      const Phase phase = run_phase(make_client, target, slice, 0);
      round_rates[target.label].push_back(phase.rate());
      Phase& total = saturation[target.label];
      total.requests += phase.requests;
      total.failures += phase.failures;
      total.seconds += phase.seconds;
      total.cpu_seconds += phase.cpu_seconds;
    }
  }
  json summary;
  const double constant_rate = saturation["/bench/constant"].rate();
  for (const Target& target : targets) {
    const Phase& full = saturation[target.label];
    const std::vector<double> ratios =
        paired_ratios(round_rates[target.label], round_rates["/bench/constant"]);
    const Phase half = run_phase(make_client, target, options, full.rate() / 2);
    std::printf("%-16s %14.0f %12.0f %10.0f %10.0f %10.0f %13.0f %13.0f %9llu %14.1f\n", target.label.c_str(),
                full.rate(), half.rate(), percentile(half.latencies_us, 0.50),
                percentile(half.latencies_us, 0.99), percentile(half.latencies_us, 1.0),
                percentile(half.sent_us, 0.99), percentile(half.late_us, 0.99),
                static_cast<unsigned long long>(full.failures + half.failures),  // NOLINT(google-runtime-int)
                full.cpu_per_request_us());
    summary[target.label] = {{"saturation_rps", full.rate()},
                             {"half_load_rps", half.rate()},
                             {"p50_us", percentile(half.latencies_us, 0.50)},
                             {"p99_us", percentile(half.latencies_us, 0.99)},
                             {"p99_from_send_us", percentile(half.sent_us, 0.99)},
                             {"late_p99_us", percentile(half.late_us, 0.99)},
                             {"failures", full.failures + half.failures},
                             {"cpu_us_per_request", full.cpu_per_request_us()},
                             {"ratio_to_constant", median(ratios)},
                             {"ratio_to_constant_rounds", ratios},
                             {"ratio_of_totals", constant_rate > 0 ? full.rate() / constant_rate : 0}};
  }

  summary["core_us_validate"] = core_us(gpuadmit::admission::Endpoint::kValidate, validate_corpus);
  summary["core_us_validate_raw"] = core_us(gpuadmit::admission::Endpoint::kValidate, corpus);
  summary["core_us_mutate"] = core_us(gpuadmit::admission::Endpoint::kMutate, corpus);
  constant->reset();
  (*webhook)->stop_now();
  (*webhook)->wait();
  std::filesystem::remove_all(directory);

  const auto percent = [&](const char* label, const char* key) {
    return 100 * summary[label][key].get<double>();
  };
  const auto range = [&](const char* label) {
    const auto rounds = summary[label]["ratio_to_constant_rounds"].get<std::vector<double>>();
    const auto [low, high] = std::minmax_element(rounds.begin(), rounds.end());
    return std::to_string(std::lround(100 * *low)) + "–" + std::to_string(std::lround(100 * *high)) + " %";
  };
  std::printf(
      "\nratio to the transport ceiling (saturation, median of %d paired rounds): validate %.0f %% (raw "
      "corpus "
      "%.0f %%), mutate %.0f %%\n",
      options.rounds, percent("/validate", "ratio_to_constant"),
      percent("/validate (raw)", "ratio_to_constant"), percent("/mutate", "ratio_to_constant"));
  std::printf("  rounds range: validate %s, raw corpus %s, mutate %s\n", range("/validate").c_str(),
              range("/validate (raw)").c_str(), range("/mutate").c_str());
  std::printf("  ratio of the rounds' totals: validate %.0f %% (raw corpus %.0f %%), mutate %.0f %%\n",
              percent("/validate", "ratio_of_totals"), percent("/validate (raw)", "ratio_of_totals"),
              percent("/mutate", "ratio_of_totals"));
  std::printf(
      "admission::review alone, one thread: validate %.1f µs (raw corpus %.1f µs), mutate %.1f µs per "
      "review\n",
      summary["core_us_validate"].get<double>(), summary["core_us_validate_raw"].get<double>(),
      summary["core_us_mutate"].get<double>());
  std::printf("memory (whole process, server and load generator): VmHWM %s, VmRSS %s\n",
              proc_status("VmHWM").c_str(), proc_status("VmRSS").c_str());
  summary["vm_hwm"] = proc_status("VmHWM");
  std::printf("%s\n", summary.dump().c_str());
  return 0;
}
