// gpuadmit recommend: the requests a model needs, from flags or a manifest's model annotations, with the
// formula shown, as YAML to paste. The figures are the rules' own (policy::recommend).
#include <array>
#include <iostream>
#include <tuple>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/recommend.hpp"
#include "manifests.hpp"

namespace gpuadmit::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kRecommendUsage = R"(Usage:
  gpuadmit recommend --parameters N|--family NAME [model flags] [--gpus N] [--gpu PRODUCT] [--cluster FILE]
                     [--policy FILE] [-o yaml|json]
  gpuadmit recommend -f FILE|DIR|- [model flags] [--cluster FILE] [--policy FILE] [-o yaml|json]

Works out the requests a model needs with the formulas the rules apply (docs/policy.md: memory-floor,
gpu-memory-fit, shm-size, checkpoint-pvc) and prints them as YAML to paste, with the working as comments:
cpu, memory, GPUs (how many of which product), /dev/shm, and a checkpoint claim for training.

The model comes from flags, or from the gpuadmit.io/model-* annotations of each Pod and pod template
(a member named template or podTemplate, an Argo template) in the files (-f); flags override annotations. Each flag sets the annotation of the same meaning:
      --parameters      gpuadmit.io/model-parameters: 7B, 350M, 7e9
      --family          gpuadmit.io/model-family: llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b,
                        llama-3-70b, mistral-7b, mixtral-8x7b (served; implies --mode inference)
      --precision       gpuadmit.io/model-precision: fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4
      --mode            gpuadmit.io/model-mode: training (default) or inference
      --optimizer       gpuadmit.io/optimizer: adam, adamw, sgd, none (default)
      --batch-memory    gpuadmit.io/batch-memory: 4Gi
      --batch-size      gpuadmit.io/batch-size: 32 (with --input-bytes: 602112, bytes per sample)
      --context         gpuadmit.io/context-length: tokens per request (default 4096)
      --concurrent      gpuadmit.io/concurrent-requests: requests served at once (default 1)
      --checkpoints-kept
                        gpuadmit.io/checkpoints-kept (default: the policy's checkpoint-pvc checkpointsKept)
      --checkpoint-optimizer
                        gpuadmit.io/checkpoint-optimizer: the checkpoints keep the optimizer state
      --measured-peak-memory
                        gpuadmit.io/measured-peak-memory: GPU memory a profiling run peaked at, summed
                        over one replica's GPUs (torch.cuda.max_memory_allocated() on each rank); it
                        overrides the estimate

Flags:
  -f, --filename    a file, a directory or - for stdin, as gpuadmit check reads them
      --gpus        GPUs per replica: a training job's (default 1); for a served model or a measured peak
                    the memory sets the count, and a --gpus given instead is kept with a note of what the
                    memory needs
      --gpu         the GPU product to size for, or part of its name: h100, a100-80, T4 (default: with
                    --cluster the product that holds the model in the fewest GPUs of one node; without,
                    A100-80GB)
      --cluster     weigh the GPU products the cluster's nodes have (a dump, as gpuadmit check takes),
                    not the table of common GPUs; the YAML then selects the product chosen
      --policy      the policy whose parameters the figures use (default: the embedded policy)
  -o, --output      yaml (default) or json

Exit codes: 0 every model sized, 2 usage, input or policy errors, or a manifest with no model annotations.
)";

constexpr Command kRecommend{"gpuadmit recommend", kRecommendUsage};

// Flag → the annotation it sets.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kModelFlags{{
    {"parameters", "gpuadmit.io/model-parameters"},
    {"family", "gpuadmit.io/model-family"},
    {"precision", "gpuadmit.io/model-precision"},
    {"mode", "gpuadmit.io/model-mode"},
    {"optimizer", "gpuadmit.io/optimizer"},
    {"batch-memory", "gpuadmit.io/batch-memory"},
    {"batch-size", "gpuadmit.io/batch-size"},
    {"input-bytes", "gpuadmit.io/input-bytes"},
    {"context", "gpuadmit.io/context-length"},
    {"concurrent", "gpuadmit.io/concurrent-requests"},
    {"checkpoints-kept", "gpuadmit.io/checkpoints-kept"},
    {"measured-peak-memory", "gpuadmit.io/measured-peak-memory"},
}};

bool is_model_annotation(const std::string& key) {
  return std::any_of(kModelFlags.begin(), kModelFlags.end(),
                     [&](const auto& f) { return f.second == key; }) ||
         key == "gpuadmit.io/checkpoint-optimizer";
}

// A model to size: where it was found and the annotations that describe it.
struct ModelSource {
  std::string source;  // "flags", or "train.yaml: Deployment llama /spec/template"
  k8s::StringMap annotations;
};

// Whether `key` names a pod template's place: a workload's template or podTemplate, an Argo templates[i].
bool template_member(std::string_view key) {
  return key == "template" || key == "podTemplate" || key == "templates";
}

// The model annotations of a pod or pod template's metadata; an error for a value that is not a string (an
// unquoted number in YAML), which the API server would refuse as well.
Result<bool> read_models(const json& meta, const std::string& where, std::vector<ModelSource>& out) {
  if (!meta.is_object() || !meta.contains("annotations") || !meta["annotations"].is_object()) return false;
  ModelSource found{where, {}};
  for (const auto& [key, v] : meta["annotations"].items()) {
    if (!is_model_annotation(key)) continue;
    if (!v.is_string()) {
      return make_error(where + ": annotation " + key + " is " + v.dump() + ", not a string; quote it");
    }
    found.annotations[key] = v.get<std::string>();
  }
  if (found.annotations.empty()) return false;
  out.push_back(std::move(found));
  return true;
}

// Every pod template under `value` whose metadata carries model annotations.
Result<bool> find_models(const json& value, const std::string& where, const std::string& pointer,
                         bool is_template, std::vector<ModelSource>& out) {
  if (value.is_object()) {
    if (is_template && value.contains("metadata")) {
      if (auto read = read_models(value["metadata"], where + " " + pointer, out); !read) return read;
    }
    for (const auto& [key, child] : value.items()) {
      if (key == "metadata" || key == "status") continue;
      std::string child_pointer = pointer;
      child_pointer.append("/").append(key);
      if (auto found = find_models(child, where, child_pointer, template_member(key), out); !found)
        return found;
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (auto found = find_models(value[i], where, pointer + "/" + std::to_string(i), is_template, out);
          !found)
        return found;
    }
  }
  return true;
}

Result<std::vector<ModelSource>> models_in(const std::vector<std::string>& files) {
  auto sources = read_sources(files);
  if (!sources) return sources.error();
  std::vector<ModelSource> out;
  for (const Source& source : *sources) {
    auto documents = config::read_documents(source.text, source.name);
    if (!documents) return documents.error();
    for (const config::Document& doc : *documents) {
      const json& object = doc.object;
      if (!object.is_object()) continue;
      const auto text = [&](const json::json_pointer& at) {
        return object.contains(at) && object[at].is_string() ? object[at].get<std::string>() : std::string();
      };
      const std::string kind = text("/kind"_json_pointer);
      const std::string where =
          source.name + ": " + (kind.empty() ? "object" : kind) + " " + text("/metadata/name"_json_pointer);
      if (kind == "Pod") {
        if (auto read = read_models(object.value("metadata", json::object()), where, out); !read) {
          return read.error();
        }
        continue;
      }
      if (auto found = find_models(object, where, "", false, out); !found) return found.error();
    }
  }
  if (out.empty())
    return make_error("no pod or pod template in the files carries gpuadmit.io/model-* annotations");
  return out;
}

k8s::Pod pod_of(const ModelSource& model) {
  k8s::Pod pod;
  pod.meta.name = "recommend";
  pod.meta.annotations = model.annotations;
  return pod;
}

std::string q(const k8s::Quantity& quantity) {
  return quantity.to_string();
}

json resources_yaml(const policy::Recommendation& r, const policy::RuleSet& rules) {
  const json list = {{"cpu", q(r.cpu)}, {"memory", q(r.memory)}, {rules.gpu_intent.resource, r.gpus}};
  json spec;
  if (r.gpu && r.gpu->per_node > 0) spec["nodeSelector"] = {{rules.gpu_type.product_label, r.gpu->product}};
  spec["containers"] =
      json::array({{{"name", "main"},
                    {"resources", {{"requests", list}, {"limits", list}}},
                    {"volumeMounts", json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}})}}});
  spec["volumes"] =
      json::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", q(r.shm)}}}}});
  return {{"spec", spec}};
}

json claim_yaml(const policy::Recommendation& r, const policy::RuleSet& rules) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", "checkpoints"}, {"labels", {{rules.checkpoint_pvc.marker, "true"}}}}},
          {"spec",
           {{"accessModes", json::array({"ReadWriteOnce"})},
            {"resources", {{"requests", {{"storage", q(*r.checkpoint_claim)}}}}}}}};
}

void print_yaml(const std::string& source, const policy::Recommendation& r, const policy::RuleSet& rules) {
  std::cout << "# " << source << ": " << r.model << "\n";
  for (const std::string& line : r.working) std::cout << "# " << line << "\n";
  std::cout << config::to_yaml(resources_yaml(r, rules));
  if (r.checkpoint_claim) std::cout << "---\n" << config::to_yaml(claim_yaml(r, rules));
}

json to_json(const std::string& source, const policy::Recommendation& r, const policy::RuleSet& rules) {
  json options = json::array();
  for (const policy::GpuOption& o : r.options) {
    const auto mib = static_cast<std::int64_t>(o.bytes_per_gpu / (1 << 20));
    options.push_back(
        {{"product", o.product},
         {"memoryPerGpu", q(k8s::Quantity::from_units(mib << 20, k8s::Quantity::Format::kBinarySI))},
         {"gpus", o.gpus},
         {"perNode", o.per_node}});
  }
  json out = {{"source", source},     {"model", r.model},      {"gpus", r.gpus},
              {"cpu", q(r.cpu)},      {"memory", q(r.memory)}, {"shm", q(r.shm)},
              {"working", r.working}, {"gpuOptions", options}, {"podSpec", resources_yaml(r, rules)["spec"]}};
  if (r.gpu) out["gpuProduct"] = r.gpu->product;
  if (r.checkpoint_claim) out["checkpointClaim"] = q(*r.checkpoint_claim);
  return out;
}

// The models to size: the flags' annotations alone, or laid over those of each model in the files.
Result<std::vector<ModelSource>> models_of(const ParsedFlags& flags) {
  ModelSource overrides{"flags", {}};
  for (const auto& [flag, key] : kModelFlags) {
    if (const auto v = flags.last(flag)) overrides.annotations[std::string(key)] = *v;
  }
  if (flags.has("family") && !flags.has("mode"))
    overrides.annotations["gpuadmit.io/model-mode"] = "inference";
  if (flags.has("checkpoint-optimizer")) overrides.annotations["gpuadmit.io/checkpoint-optimizer"] = "true";
  if (!flags.has("filename")) return std::vector<ModelSource>{overrides};
  auto found = models_in(flags.all("filename"));
  if (!found) return found.error();
  for (ModelSource& m : *found) {
    for (const auto& [key, value] : overrides.annotations) m.annotations[key] = value;
  }
  return found;
}

}  // namespace

int recommend_command(Args args) {
  int exit_code = kExitOk;
  const auto flags = command_flags(args,
                                   {{"filename", "f"},
                                    {"parameters", ""},
                                    {"family", ""},
                                    {"precision", ""},
                                    {"mode", ""},
                                    {"optimizer", ""},
                                    {"batch-memory", ""},
                                    {"batch-size", ""},
                                    {"input-bytes", ""},
                                    {"context", ""},
                                    {"concurrent", ""},
                                    {"checkpoints-kept", ""},
                                    {"checkpoint-optimizer", "", false},
                                    {"measured-peak-memory", ""},
                                    {"gpus", ""},
                                    {"gpu", ""},
                                    {"cluster", ""},
                                    {"policy", ""},
                                    {"output", "o"},
                                    {"help", "h", false}},
                                   kRecommend, exit_code);
  if (!flags) return exit_code;
  const std::string output = flags->last("output").value_or("yaml");
  if (output != "yaml" && output != "json") return command_error(kRecommend, "--output must be yaml or json");
  if (!flags->positional.empty()) return usage_error(kRecommend, "unexpected argument (use -f FILE)");
  policy::RecommendFor target{0, flags->last("gpu").value_or("")};
  if (const auto g = flags->last("gpus")) {
    char* end = nullptr;
    target.gpus = std::strtoll(g->c_str(), &end, 10);
    if (end != g->c_str() + g->size() || target.gpus < 1 || target.gpus > 1024) {
      return command_error(kRecommend, "--gpus takes a whole number from 1 to 1024, not \"" + *g + "\"");
    }
  }
  auto models = models_of(*flags);
  if (!models) return command_error(kRecommend, models.error().message);
  auto rules = load_rules(flags->last("policy"));
  if (!rules) return command_error(kRecommend, rules.error().message);
  const auto view = load_view(flags->last("cluster"));
  if (!view) return command_error(kRecommend, view.error().message);
  json list = json::array();
  for (std::size_t i = 0; i < models->size(); ++i) {
    const ModelSource& model = (*models)[i];
    auto r = policy::recommend(pod_of(model), *rules, view->snapshot.get(), target);
    if (!r) return command_error(kRecommend, model.source + ": " + r.error().message);
    if (output == "json") {
      list.push_back(to_json(model.source, *r, *rules));
    } else {
      if (i > 0) std::cout << "---\n";
      print_yaml(model.source, *r, *rules);
    }
  }
  if (output == "json") std::cout << json{{"recommendations", list}}.dump(2) << "\n";
  return kExitOk;
}

}  // namespace gpuadmit::cli
