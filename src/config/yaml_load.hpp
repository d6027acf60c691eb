// yaml-cpp's LoadAll, without its endless loop on a stray token.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace gpuadmit::config {

// Every document of `text`, as YAML::LoadAll returns them; throws YAML::ParserException (at the token) where
// yaml-cpp 0.7 would loop forever: at document level, a token its document parser does not consume (a
// stray ',' as in `- a` then `,`) makes LoadAll add the same empty document again and again, allocating
// until the process is killed (jbeder/yaml-cpp#1040; fixed upstream by #1319, after 0.8.0).
std::vector<YAML::Node> load_all(const std::string& text);

}  // namespace gpuadmit::config
