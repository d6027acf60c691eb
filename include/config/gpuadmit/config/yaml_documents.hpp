// Multi-document YAML (or JSON) manifests → JSON objects, the way kubectl reads `-f FILE`.
// Scalars resolve as sigs.k8s.io/yaml does (YAML 1.1 booleans such as yes/on included; quoted scalars
// stay strings). Limits: 8 MiB per input, nesting 64 deep, 1,000,000 nodes after alias expansion.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::config {

struct YamlLimits {
  std::size_t max_bytes = 8 * 1024 * 1024;
  std::size_t max_depth = 64;
  std::size_t max_nodes = 1'000'000;
};

struct Document {
  nlohmann::json object;
  int line = 0;  // 1-based line where the document starts
};

// Empty documents (a lone `---`) are skipped. Errors carry `source:line:column`.
Result<std::vector<Document>> read_documents(std::string_view text, std::string_view source_name,
                                             const YamlLimits& limits = {});

// Single JSON document → YAML text (for `check -o yaml`), keys in the object's order.
std::string to_yaml(const nlohmann::json& value);

}  // namespace gpuadmit::config
