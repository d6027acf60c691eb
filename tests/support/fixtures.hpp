// Test helpers: load fixture manifests, build pods from short YAML snippets.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/config/yaml_documents.hpp"

namespace gpuadmit::test {

inline std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::ostringstream out;
  out << file.rdbuf();
  return out.str();
}

// First document of a YAML snippet as JSON; throws on error so a broken fixture fails the test loudly.
inline nlohmann::json yaml(const std::string& text) {
  auto docs = config::read_documents(text, "<test>");
  if (!docs || docs->empty()) throw std::runtime_error(docs ? "empty YAML" : docs.error().message);
  return docs->front().object;
}

inline nlohmann::json fixture(const std::string& relative) {
  return yaml(read_text(std::string(GPUADMIT_FIXTURES_DIR) + "/" + relative));
}

}  // namespace gpuadmit::test
