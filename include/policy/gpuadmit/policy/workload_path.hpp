// Where a workload kind keeps its pod templates, and how many pods each one runs: the path grammar of the
// policy's spec.workloads (docs/policy.md "Workloads").
//
//   path   = step *("." step)                   spec.workerGroupSpecs[groupName=*].template
//   step   = member [select]
//   member = 1*(ALPHA / DIGIT / "_" / "-" / "*")  a '*' globs map keys (spec.*ReplicaSpecs.*.template)
//   select = "[" ("*" / key "=*" / key "=" value / 1*DIGIT) "]"
//
// A member never enters a list and a selector never enters a map, so a path says which shape it expects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::policy {

struct PathStep {
  enum class Select : std::uint8_t {
    kNone,   // a member (or a glob over map keys)
    kEach,   // [*] or [key=*]: every item
    kWhere,  // [key=value]: items whose string member `key` is `value`
    kIndex,  // [3]
  };
  std::string member;
  Select select = Select::kNone;
  std::string key;  // kEach: the member that labels an item ("" → its name, else its index); kWhere: compared
  std::string value;
  std::size_t index = 0;
  bool operator==(const PathStep&) const = default;
};

struct WorkloadPath {
  std::vector<PathStep> steps;
  std::string text;  // as written, for messages
  bool operator==(const WorkloadPath&) const = default;
};

// A grammar error at a byte offset of the text, so the policy reader can point at its line and column.
struct PathError {
  std::size_t offset = 0;
  std::string what;
};

// Parses `text` into `out`; on error `out` is unspecified.
std::optional<PathError> parse_workload_path(std::string_view text, WorkloadPath& out);

// A field a replica count is read from: dotted members relative to the template's anchor (the innermost list
// item the path stepped through, else the template's parent), or from the object's root after "$.".
struct FieldRef {
  bool from_root = false;
  std::vector<std::string> members;
  bool operator==(const FieldRef&) const = default;
};

// A ref, a ref minus a whole number ("size - 1", floored at 0), or a number.
struct Factor {
  std::optional<FieldRef> ref;
  std::int64_t number = 1;  // the value when there is no ref
  std::int64_t minus = 0;
  std::string text;
  bool operator==(const Factor&) const = default;
};

std::optional<PathError> parse_factor(std::string_view text, Factor& out);

// "@" (the object a podSpec path found: no members), a member path relative to it, or "$.path".
std::optional<PathError> parse_field_ref(std::string_view text, FieldRef& out);

// How many pods of one template run at once: clamp(count, min, max) × every factor of `times`. A count whose
// field is absent is `absent`; a factor whose field is absent is 1 (before its minus). No count: one pod.
struct Replicas {
  std::optional<Factor> count;
  std::int64_t absent = 1;
  std::optional<FieldRef> min;
  std::optional<FieldRef> max;
  std::vector<Factor> times;
  bool operator==(const Replicas&) const = default;
};

// One place pods come from in a workload kind: a pod template (metadata and spec) by path, or a PodSpec-like
// object whose pod gpuadmit assembles the way its controller does (KServe's predictor and its `model`, an
// Argo template's `container` with tolerations inherited from the workflow, a Tekton task's steps).
struct WorkloadPod {
  std::string name;  // tags its messages when the object has several templates ("head", "workers")
  WorkloadPath path;
  Replicas replicas;
  bool pod_spec = false;  // `podSpec:` rather than `template:`
  // podSpec only. Members of the object holding a Container or a list of them; an empty ref ("@") is the
  // object itself as one container (a NIMService's spec, a TrainJob's trainer).
  std::vector<FieldRef> containers;
  // podSpec only: the member of each of those containers that holds requests and limits (Tekton's
  // `computeResources`, Trainer's `resourcesPerNode`).
  std::string resources = "resources";
  // podSpec only. Where the pod's spec members (tolerations, nodeSelector, volumes, ...) come from, first
  // first: each member from the first source that has it, as Argo takes a template's own tolerations, else
  // its workflow's; volumes from all of them, by name. Fixes are written to the first source. Empty: the
  // object itself ("@").
  std::vector<FieldRef> fields;
  // podSpec only: where the pod's labels and annotations come from; the first source wins per key.
  std::vector<FieldRef> metadata;
  bool partial = false;  // a runtime completes the pod (evaluate.hpp Request::partial_pod)
  // podSpec only: the pod is partial when any of these is present (an Argo podSpecPatch).
  std::vector<FieldRef> partial_if;
  bool operator==(const WorkloadPod&) const = default;
};

// For built-in defaults: a path and a factor known to parse (anything else is a programming error).
WorkloadPath workload_path(std::string_view text);
Factor factor(std::string_view text);
FieldRef field_ref(std::string_view text);

}  // namespace gpuadmit::policy
