#pragma once
// JSON Patch (RFC 6902) from one document to another, in the same form as nlohmann::json::diff but
// visiting each node once: nlohmann's version compares whole subtrees at every level before descending
// and rebuilds the path string for each node, so a node deep in a pod is compared once per level above it.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/json_document.hpp"

namespace gpuadmit::policy {

// One operation: {"op": name, "path": path} and, with a value, "value".
nlohmann::json patch_op(const char* name, const std::string& path);
nlohmann::json patch_op(const char* name, const std::string& path, const nlohmann::json& value);

// Appends to `patch` (a JSON array) the operations that turn `source` into `target`, with paths
// prefixed by `path` (a JSON Pointer, "" for the root). Arrays are compared index by index: changed
// elements are diffed, extra source elements removed from the end backwards, extra target elements
// appended with "/-".
void append_diff(const nlohmann::json& source, const nlohmann::json& target, std::string& path,
                 nlohmann::json& patch);
// The same from a document value (the object as the webhook parsed it) to the fixed copy.
void append_diff(const k8s::JsonValue& source, const nlohmann::json& target, std::string& path,
                 nlohmann::json& patch);

// The whole patch as a new array.
nlohmann::json json_diff(const nlohmann::json& source, const nlohmann::json& target, std::string path = {});

}  // namespace gpuadmit::policy
