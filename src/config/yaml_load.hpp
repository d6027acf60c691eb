// yaml-cpp's LoadAll, without its endless loop on a stray token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/config/yaml_documents.hpp"

namespace gpuadmit::config {

// Every document of `text`, as YAML::LoadAll returns them; throws YAML::ParserException (at the token) where
// yaml-cpp 0.7 would loop forever: at document level, a token its document parser does not consume (a
// stray ',' as in `- a` then `,`) makes LoadAll add the same empty document again and again, allocating
// until the process is killed (jbeder/yaml-cpp#1040; fixed upstream by #1319, after 0.8.0).
std::vector<YAML::Node> load_all(const std::string& text);

// read_documents, keeping yaml-cpp's nodes (every document, empty ones included) beside the JSON: the policy
// loader walks the nodes for its line:column errors, from the same single parse.
struct LoadedDocuments {
  std::vector<YAML::Node> nodes;
  std::vector<Document> documents;
};
Result<LoadedDocuments> load_documents(std::string_view text, std::string_view source_name,
                                       const YamlLimits& limits = {});

}  // namespace gpuadmit::config
