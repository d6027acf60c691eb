// ParameterReader: how a rule reads its settings (`spec.rules.<id>` of the policy YAML) without the policy
// core knowing YAML. Each rule's reader lives in its rule file and names its keys; the config layer
// implements this over yaml-cpp, reports every problem at its line and column, and rejects the keys no
// reader asked for (in the order the reader asked, which is the order the docs list them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// alias → patterns (gpu-type's aliases).
using StringLists = std::map<std::string, std::vector<std::string>, std::less<>>;

class ParameterReader {
 public:
  ParameterReader() = default;
  ParameterReader(const ParameterReader&) = delete;
  ParameterReader& operator=(const ParameterReader&) = delete;
  ParameterReader(ParameterReader&&) = delete;
  ParameterReader& operator=(ParameterReader&&) = delete;
  virtual ~ParameterReader() = default;

  // Each reads `key` when it is present and valid, and leaves `out` as it is otherwise (an invalid value is
  // reported). Lists and maps replace what `out` held.
  virtual void action(std::string_view key, Action& out) = 0;
  virtual void quantity(std::string_view key, k8s::Quantity& out) = 0;  // greater than zero
  virtual void integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) = 0;
  virtual void string(std::string_view key, std::string& out) = 0;
  virtual void strings(std::string_view key, std::vector<std::string>& out) = 0;
  // A mapping of strings; `what` says what it maps ("label key to value") in the error.
  virtual void string_map(std::string_view key, std::string_view what, k8s::StringMap& out) = 0;
  // A mapping of lists of strings; `what` as for string_map.
  virtual void string_lists(std::string_view key, std::string_view what, StringLists& out) = 0;
  virtual void tolerations(std::string_view key, std::vector<k8s::Toleration>& out) = 0;
  // The position in `names` of the value of `key`, when it is one of them (else reported).
  virtual std::optional<std::size_t> one_of(std::string_view key,
                                            std::span<const std::string_view> names) = 0;
  // The reader of the mapping at `key` (its keys checked like the rule's own), or nullptr when absent.
  virtual ParameterReader* section(std::string_view key) = 0;
  // A problem with the settings as a whole (at the rule's own line).
  virtual void error(std::string what) = 0;

  // one_of() into an enum, from {name, value} pairs.
  template <class Enum>
  void choice(std::string_view key, std::initializer_list<std::pair<std::string_view, Enum>> choices,
              Enum& out) {
    std::vector<std::string_view> names;
    names.reserve(choices.size());
    for (const auto& c : choices) names.push_back(c.first);
    if (const auto i = one_of(key, names)) out = std::data(choices)[*i].second;
  }
};

}  // namespace gpuadmit::policy
