// Policy core benchmark: per-pod cost of parse, evaluate+mutate, and patch serialisation, on a corpus of
// realistic pods shaped like what the API server sends (managedFields, defaulted fields, a few KB each).
// Prints numbers; asserts nothing. Run: make bench (release build).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/admission/json_patch.hpp"
#include "gpuadmit/admission/review.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/json_input.hpp"
#include "gpuadmit/policy/evaluate.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Variations of the base pod that exercise different rules: as sent, Burstable, no GPU, fractional, no
// resources at all, tolerations present.
std::vector<std::string> make_corpus(const json& base) {
  std::vector<std::string> corpus;
  corpus.push_back(base.dump());
  json burstable = base;
  burstable["spec"]["containers"][0]["resources"]["requests"]["memory"] = "32Gi";
  corpus.push_back(burstable.dump());
  json cpu_only = base;
  cpu_only["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");
  cpu_only["spec"]["containers"][0]["resources"]["requests"].erase("nvidia.com/gpu");
  corpus.push_back(cpu_only.dump());
  json fractional = base;
  fractional["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "500m";
  fractional["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "500m";
  corpus.push_back(fractional.dump());
  json bare = base;
  bare["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "2"}}}};
  corpus.push_back(bare.dump());
  json tolerated = base;
  tolerated["spec"]["tolerations"].push_back(
      {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  tolerated["spec"]["containers"][0]["resources"]["requests"] =
      tolerated["spec"]["containers"][0]["resources"]["limits"];
  tolerated["spec"]["initContainers"][0]["resources"] = {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}};
  corpus.push_back(tolerated.dump());
  return corpus;
}

template <typename F>
double per_item_us(std::size_t items, F&& body) {
  const auto start = Clock::now();
  body();
  const std::chrono::duration<double, std::micro> elapsed = Clock::now() - start;
  return elapsed.count() / static_cast<double>(items);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string fixture = argc > 1 ? argv[1] : "tests/fixtures/api-objects/training-pod-as-sent.json";
  const json base = json::parse(read_file(fixture), nullptr, false);
  if (!base.is_object()) {
    std::fprintf(stderr, "policy_bench: cannot read a pod from %s (run from the repository root)\n",
                 fixture.c_str());
    return 1;
  }
  const std::vector<std::string> corpus = make_corpus(base);
  const auto& rules = gpuadmit::config::default_rule_set();
  // GPUADMIT_BENCH_ROUNDS lowers the count for profiling under valgrind or perf.
  const char* rounds_env = std::getenv("GPUADMIT_BENCH_ROUNDS");
  const int kRounds = rounds_env != nullptr ? std::max(1, std::atoi(rounds_env)) : 3000;
  const std::size_t items = corpus.size() * kRounds;

  std::size_t bytes = 0;
  for (const auto& s : corpus) bytes += s.size();

  // Parse: the object read into a JsonDocument, the form the policy judges (the webhook reads the whole
  // review the same way).
  std::vector<json> parsed;
  std::vector<gpuadmit::k8s::JsonDocument> documents;
  for (const auto& s : corpus) parsed.push_back(json::parse(s));
  const double parse_us = per_item_us(items, [&] {
    for (int r = 0; r < kRounds; ++r) {
      for (const auto& s : corpus) {
        auto document = gpuadmit::k8s::parse_json_document(s);
        if (r == 0) documents.push_back(std::move(*document));
      }
    }
  });

  // Evaluate + mutate: the policy core's whole job for /mutate (copy, rules, fixes, JSON Patch diff).
  std::size_t fixes = 0;
  std::vector<json> mutated(parsed.size());
  std::vector<json> patches(parsed.size());
  const double mutate_us = per_item_us(items, [&] {
    for (int r = 0; r < kRounds; ++r) {
      for (std::size_t i = 0; i < parsed.size(); ++i) {
        auto d = gpuadmit::policy::evaluate({documents[i].root(), "ml-team", gpuadmit::policy::Mode::kMutate},
                                            rules);
        fixes += d->fixes.size();
        if (r == 0) {
          mutated[i] = parsed[i].patch(d->patch);
          patches[i] = std::move(d->patch);
        }
      }
    }
  });

  // Validate: what /validate costs on the final object.
  std::vector<gpuadmit::k8s::OwnedJsonDocument> mutated_documents;
  for (const json& m : mutated) {
    auto document = gpuadmit::k8s::OwnedJsonDocument::of(m);
    mutated_documents.push_back(std::move(*document));
  }
  std::size_t violations = 0;
  const double validate_us = per_item_us(items, [&] {
    for (int r = 0; r < kRounds; ++r) {
      for (const auto& m : mutated_documents) {
        auto d = gpuadmit::policy::evaluate({m.root(), "ml-team", gpuadmit::policy::Mode::kValidate}, rules);
        violations += d->violations.size();
      }
    }
  });

  // Patch serialisation: the patch (already a diff, computed by evaluate) to JSON text and base64.
  std::size_t patch_bytes = 0;
  const double patch_us = per_item_us(items, [&] {
    for (int r = 0; r < kRounds; ++r) {
      for (std::size_t i = 0; i < parsed.size(); ++i) {
        patch_bytes += gpuadmit::admission::base64_encode(patches[i].dump()).size();
      }
    }
  });

  // Whole reviews: what the webhook runs per request once the HTTP body is read (parse the AdmissionReview,
  // evaluate, build and serialise the response), on the same pods wrapped as the API server sends them.
  const std::string envelope_file = argc > 2 ? argv[2] : "deploy/examples/admission-review-gpu-pod.json";
  json envelope = json::parse(read_file(envelope_file), nullptr, false);
  if (!envelope.is_object()) {
    std::fprintf(stderr,
                 "policy_bench: cannot read an AdmissionReview from %s (run from the repository root)\n",
                 envelope_file.c_str());
    return 1;
  }
  std::vector<std::string> reviews;
  std::size_t review_bytes = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    envelope["request"]["uid"] = "bench-" + std::to_string(i);
    envelope["request"]["object"] = parsed[i];
    reviews.push_back(envelope.dump());
    review_bytes += reviews.back().size();
  }
  std::size_t response_bytes = 0;
  double review_us[2] = {0, 0};
  for (int e = 0; e < 2; ++e) {
    const auto endpoint =
        e == 0 ? gpuadmit::admission::Endpoint::kMutate : gpuadmit::admission::Endpoint::kValidate;
    review_us[e] = per_item_us(items, [&] {
      for (int r = 0; r < kRounds; ++r) {
        for (const auto& body : reviews)
          response_bytes += gpuadmit::admission::review(body, endpoint, rules).body.size();
      }
    });
  }

  // Workloads: a Deployment (one template) and a PyTorchJob with three replica specs, each template the
  // corpus' first pod spec, evaluated in Mutate mode (templates found, judged as pods, patches re-rooted).
  double workload_us[2] = {0, 0};
  std::size_t workload_fixes = 0;
  {
    const auto deployment_docs = gpuadmit::config::read_documents(
        read_file("tests/fixtures/workloads/deployment.yaml"), "deployment.yaml");
    if (!deployment_docs || deployment_docs->empty()) {
      std::fprintf(stderr, "policy_bench: cannot read tests/fixtures/workloads/deployment.yaml\n");
      return 1;
    }
    json deployment = deployment_docs->front().object;
    deployment["spec"]["template"]["spec"] = parsed[0]["spec"];
    json pytorchjob = {{"apiVersion", "kubeflow.org/v1"},
                       {"kind", "PyTorchJob"},
                       {"metadata", {{"name", "bench"}, {"namespace", "ml-team"}}},
                       {"spec", {{"pytorchReplicaSpecs", json::object()}}}};
    for (const char* type : {"Master", "Worker", "Evaluator"}) {
      pytorchjob["spec"]["pytorchReplicaSpecs"][type] = {
          {"replicas", 2},
          {"template", {{"metadata", {{"labels", {{"role", type}}}}}, {"spec", parsed[0]["spec"]}}}};
    }
    std::vector<gpuadmit::k8s::OwnedJsonDocument> workloads;
    for (const json* workload : {&deployment, &pytorchjob}) {
      auto document = gpuadmit::k8s::OwnedJsonDocument::of(*workload);
      workloads.push_back(std::move(*document));
    }
    for (int w = 0; w < 2; ++w) {
      workload_us[w] = per_item_us(static_cast<std::size_t>(kRounds), [&] {
        for (int r = 0; r < kRounds; ++r) {
          auto d = gpuadmit::policy::evaluate(
              {workloads[w].root(), "ml-team", gpuadmit::policy::Mode::kMutate}, rules);
          workload_fixes += d->fixes.size();
        }
      });
    }
  }

  std::printf("policy core benchmark: %zu pods in the corpus (%zu bytes on average), %d rounds, %s\n",
              corpus.size(), bytes / corpus.size(), kRounds, GPUADMIT_ALLOCATOR);
  std::printf("  parse            %8.2f us/pod\n", parse_us);
  std::printf("  evaluate+mutate  %8.2f us/pod\n", mutate_us);
  std::printf("  validate         %8.2f us/pod\n", validate_us);
  std::printf("  patch serialise  %8.2f us/pod\n", patch_us);
  std::printf(
      "  review /mutate   %8.2f us/review (budget 40; whole AdmissionReview of %zu bytes on average: parse, "
      "evaluate, respond)\n",
      review_us[0], review_bytes / reviews.size());
  std::printf("  review /validate %8.2f us/review (budget 30)\n", review_us[1]);
  std::printf("  Deployment       %8.2f us/object (evaluate+mutate, one template)\n", workload_us[0]);
  std::printf("  PyTorchJob       %8.2f us/object (evaluate+mutate, three replica specs)\n", workload_us[1]);
  std::printf(
      "  (checksums: %zu fixes, %zu violations, %zu patch bytes, %zu response bytes, %zu workload fixes)\n",
      fixes, violations, patch_bytes, response_bytes, workload_fixes);
  return 0;
}
