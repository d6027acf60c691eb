// Lenient reads of an object's fields by path, for code that reports on objects rather than judging them
// (audit, why, check's listing): a missing or mistyped field reads as "", never an error.
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace gpuadmit::k8s {

// The string at `path` under `object` ({"metadata", "name"}), or "".
std::string text_at(const nlohmann::json& object, std::initializer_list<const char*> path);

// The uid of the ownerReference with controller: true, or "".
std::string controller_uid(const nlohmann::json& object);

}  // namespace gpuadmit::k8s
