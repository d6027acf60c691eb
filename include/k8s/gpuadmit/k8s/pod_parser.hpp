// Parsing of a Pod (or pod template) into the typed view of objects.hpp, whole or by the part a fix edits.
// The cluster's other objects: cluster_object_parser.hpp.
// Every type mismatch is an error naming the field path, so a malformed object never reaches a rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::k8s {

// `object` is a Pod or a PodTemplateSpec (both have metadata and spec), read from a JsonDocument: the
// review's object in the webhook, k8s::OwnedJsonDocument elsewhere.
Result<Pod> parse_pod(const JsonValue& object);
// The same reading of an object held as nlohmann::json (read into a document first).
Result<Pod> parse_pod(const nlohmann::json& object);
// A part of a pod that gpuadmit's fixes edit: one member of a container, of the spec or of the metadata.
// The names are string literals (the members a rule edits), so a part is a small value.
struct PodPart {
  enum class Scope : std::uint8_t { kContainer, kSpec, kMetadata };
  Scope scope = Scope::kSpec;
  std::string_view array;  // kContainer: "containers" or "initContainers"
  std::size_t index = 0;   // kContainer: the position in that array
  // kContainer: resources, env, volumeMounts; kSpec: resources, affinity, tolerations, volumes, nodeSelector;
  // kMetadata: labels, annotations.
  std::string_view member;

  bool operator==(const PodPart&) const = default;
};

// Reads a part's new value (null when it is absent) into `pod` with parse_pod's checks and error messages,
// so a fix re-reads what it changed and not the whole pod.
Result<bool> parse_pod_part(const PodPart& part, const nlohmann::json& value, Pod& pod);
// Reads `items`, appended to a list part (a container's volumeMounts, the spec's tolerations or volumes),
// onto the end of that list in `pod`: parse_pod's checks, and errors that name each item by its index in the
// whole list (the items `pod` holds come first).
Result<bool> parse_pod_part_items(const PodPart& part, const nlohmann::json& items, Pod& pod);

}  // namespace gpuadmit::k8s
