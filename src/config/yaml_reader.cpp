#include "yaml_reader.hpp"

#include <algorithm>

namespace gpuadmit::config {

std::string comma_list(std::span<const std::string_view> names) {
  std::string list;
  for (const std::string_view name : names) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

void YamlReader::error(const YAML::Node& node, const std::string& path, const std::string& what) {
  errors_.push_back(located(node, path, what));
}

void YamlReader::error_at(const YAML::Node& scalar, std::size_t offset, const std::string& path,
                          const std::string& what) {
  if (!marks_ || !scalar.IsScalar() || scalar.Scalar().find('\n') != std::string::npos) {
    error(scalar, path, what);
    return;
  }
  // A quoted scalar's mark is its opening quote (yaml-cpp tags quoted scalars "!", plain ones "?").
  const std::size_t quote = scalar.Tag() == "!" ? 1 : 0;
  const YAML::Mark mark = scalar.Mark();
  errors_.push_back(std::string(source_) + ":" + std::to_string(mark.line + 1) + ":" +
                    std::to_string(static_cast<std::size_t>(mark.column) + quote + offset + 1) + ": " + path +
                    ": " + what);
}

std::string YamlReader::located(const YAML::Node& node, const std::string& path,
                                const std::string& what) const {
  if (!marks_) return std::string(source_) + ": " + path + ": " + what;
  const YAML::Mark mark = node.Mark();
  return std::string(source_) + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) +
         ": " + path + ": " + what;
}

std::string YamlReader::unknown_key(const YAML::Node& key, const std::string& path,
                                    std::span<const std::string_view> allowed) const {
  return located(key, path,
                 "unknown key \"" + key.Scalar() + "\" (expected one of: " + comma_list(allowed) + ")");
}

void YamlReader::insert_errors(std::size_t at, const std::vector<std::string>& errors) {
  errors_.insert(errors_.begin() + static_cast<std::ptrdiff_t>(at), errors.begin(), errors.end());
}

bool YamlReader::map(const YAML::Node& node, const std::string& path,
                     std::initializer_list<std::string_view> allowed) {
  if (!node.IsMap()) {
    error(node, path, "expected a mapping");
    return false;
  }
  for (const auto& entry : node) {
    if (std::find(allowed.begin(), allowed.end(), entry.first.Scalar()) == allowed.end()) {
      errors_.push_back(unknown_key(entry.first, path, {allowed.begin(), allowed.size()}));
    }
  }
  return true;
}

std::optional<std::string> YamlReader::string(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    error(node, path, "expected a string");
    return std::nullopt;
  }
  return node.Scalar();
}

std::vector<std::string> YamlReader::strings(const YAML::Node& node, const std::string& path) {
  std::vector<std::string> out;
  if (!node.IsSequence()) {
    error(node, path, "expected a list of strings");
    return out;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (auto s = string(node[i], path + "[" + std::to_string(i) + "]")) out.push_back(*s);
  }
  return out;
}

void YamlReader::string_map(const YAML::Node& node, const std::string& path, std::string_view what,
                            k8s::StringMap& out) {
  if (!node.IsMap()) {
    error(node, path, "expected a mapping of " + std::string(what));
    return;
  }
  for (const auto& e : node) {
    if (auto v = string(e.second, path + "." + e.first.Scalar())) out[e.first.Scalar()] = *v;
  }
}

std::optional<k8s::Quantity> YamlReader::quantity(const YAML::Node& node, const std::string& path,
                                                  bool positive) {
  auto text = string(node, path);
  if (!text) return std::nullopt;
  auto q = k8s::Quantity::parse(*text);
  if (!q) {
    error(node, path, "expected a quantity such as 8, 500m or 32Gi: " + q.error().message);
    return std::nullopt;
  }
  if (positive && !(*q > k8s::Quantity{})) {
    error(node, path, "expected a quantity greater than zero, got " + *text);
    return std::nullopt;
  }
  return *q;
}

std::optional<std::int64_t> YamlReader::integer(const YAML::Node& node, const std::string& path,
                                                std::int64_t min, std::int64_t max) {
  if (node.IsScalar()) {
    try {
      const auto value = node.as<std::int64_t>();
      if (value >= min && value <= max) return value;
    } catch (const YAML::Exception&) {
    }
  }
  error(node, path, "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  return std::nullopt;
}

std::optional<std::size_t> YamlReader::choice(const YAML::Node& node, const std::string& path,
                                              std::span<const std::string_view> names) {
  auto text = string(node, path);
  if (!text) return std::nullopt;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (*text == names[i]) return i;
  }
  error(node, path, "expected one of " + comma_list(names) + ", got \"" + *text + "\"");
  return std::nullopt;
}

std::optional<policy::Action> YamlReader::action(const YAML::Node& node, const std::string& path) {
  using policy::Action;
  return one_of<Action>(node, path,
                        {{"enforce", Action::kEnforce},
                         {"warn", Action::kWarn},
                         {"audit", Action::kAudit},
                         {"off", Action::kOff}});
}

}  // namespace gpuadmit::config
