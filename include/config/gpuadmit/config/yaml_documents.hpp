// Multi-document YAML (or JSON) manifests → JSON objects, the way kubectl reads `-f FILE`.
// Scalars resolve as sigs.k8s.io/yaml does (YAML 1.1 booleans such as yes/on included; quoted scalars
// stay strings). Limits: 8 MiB per input, nesting 64 deep, 1,000,000 nodes after alias expansion.
#pragma once

#include <cstddef>
#include <memory>
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

// Where a value stands in its text, 1-based.
struct Mark {
  int line = 0;
  int column = 0;
};

// The parsed YAML behind a Document, kept for mark_of (defined in yaml_documents.cpp: yaml-cpp stays
// private).
struct DocumentNodes;

struct Document {
  nlohmann::json object;
  int line = 0;                                // 1-based line where the document starts
  std::shared_ptr<const DocumentNodes> nodes;  // null for a document not read from text
};

// Where the value at `pointer` (a JSON Pointer into doc.object, RFC 6901) stands in the text; the deepest
// value on its way that exists when it does not (an error about a missing member points at its parent),
// and the document's start when nothing is known.
Mark mark_of(const Document& doc, std::string_view pointer);

// Empty documents (a lone `---`) are skipped. Errors carry `source:line:column`.
Result<std::vector<Document>> read_documents(std::string_view text, std::string_view source_name,
                                             const YamlLimits& limits = {});

// Single JSON document → YAML text (for `check -o yaml`), keys in the object's order.
std::string to_yaml(const nlohmann::json& value);

}  // namespace gpuadmit::config
