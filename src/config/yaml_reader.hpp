// The policy loader's walk over yaml-cpp's tree: typed reads of scalars, lists and mappings that record
// every problem with its file:line:column and field path, and never stop at the first. Private to the config
// layer.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::config {

// "a, b, c": the names a message says were expected.
std::string comma_list(std::span<const std::string_view> names);

class YamlReader {
 public:
  // `marks`: errors name the line and column; off for text gpuadmit wrote itself (a policy object from the
  // API server, rendered to YAML), where only the field's path means anything to the reader.
  explicit YamlReader(std::string_view source, bool marks = true) : source_(source), marks_(marks) {}

  void error(const YAML::Node& node, const std::string& path, const std::string& what);
  // An error at a character of a one-line scalar (a path's bad step), located at that character.
  void error_at(const YAML::Node& scalar, std::size_t offset, const std::string& path,
                const std::string& what);
  [[nodiscard]] std::string located(const YAML::Node& node, const std::string& path,
                                    const std::string& what) const;
  // The message for a mapping's `key` that is not one of `allowed`, located at the key.
  [[nodiscard]] std::string unknown_key(const YAML::Node& key, const std::string& path,
                                        std::span<const std::string_view> allowed) const;
  // Errors found after the ones that follow them in the file's reading order (a mapping's unknown keys).
  void insert_errors(std::size_t at, const std::vector<std::string>& errors);

  // Checks the node is a map whose keys are all in `allowed`; returns false (and reports) otherwise.
  bool map(const YAML::Node& node, const std::string& path, std::initializer_list<std::string_view> allowed);
  std::optional<std::string> string(const YAML::Node& node, const std::string& path);
  std::vector<std::string> strings(const YAML::Node& node, const std::string& path);
  // A mapping of strings into `out` (kept entries are overwritten); `what` names them in the error.
  void string_map(const YAML::Node& node, const std::string& path, std::string_view what,
                  k8s::StringMap& out);
  std::optional<k8s::Quantity> quantity(const YAML::Node& node, const std::string& path,
                                        bool positive = true);
  std::optional<std::int64_t> integer(const YAML::Node& node, const std::string& path, std::int64_t min,
                                      std::int64_t max);
  // The index of the string among `names`.
  std::optional<std::size_t> choice(const YAML::Node& node, const std::string& path,
                                    std::span<const std::string_view> names);
  std::optional<policy::Action> action(const YAML::Node& node, const std::string& path);

  template <typename Enum>
  std::optional<Enum> one_of(const YAML::Node& node, const std::string& path,
                             std::initializer_list<std::pair<std::string_view, Enum>> choices) {
    std::vector<std::string_view> names;
    names.reserve(choices.size());
    for (const auto& entry : choices) names.push_back(entry.first);
    const auto i = choice(node, path, names);
    if (!i) return std::nullopt;
    return std::data(choices)[*i].second;
  }

  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::string_view source_;
  bool marks_ = true;
  std::vector<std::string> errors_;
};

template <typename T>
void assign(T& target, std::optional<T> value) {
  if (value) target = std::move(*value);
}

}  // namespace gpuadmit::config
