#include "gpuadmit/config/yaml_documents.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "yaml_load.hpp"

namespace gpuadmit::config {
namespace {

using nlohmann::json;

struct ConvertError {
  std::string message;
  YAML::Mark mark;
};

std::string location(std::string_view source, const YAML::Mark& mark) {
  return std::string(source) + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

bool is_one_of(const std::string& s, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), s) != words.end();
}

// Resolves a plain (unquoted) scalar like go-yaml v2, which kubectl uses through sigs.k8s.io/yaml.
json resolve_plain(const std::string& s) {
  if (s.empty() || is_one_of(s, {"~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(s, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"})) return true;
  if (is_one_of(s, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"}))
    return false;
  const char first = s[0];
  if ((first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.') {
    errno = 0;
    char* end = nullptr;
    const long long as_int = std::strtoll(s.c_str(), &end, 0);
    if (errno == 0 && end == s.c_str() + s.size() && s.find('.') == std::string::npos) return as_int;
    if (is_one_of(s, {".inf", ".Inf", ".INF", "+.inf"})) return std::numeric_limits<double>::infinity();
    if (is_one_of(s, {"-.inf", "-.Inf", "-.INF"})) return -std::numeric_limits<double>::infinity();
    errno = 0;
    const double as_double = std::strtod(s.c_str(), &end);
    const bool numeric_chars = std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
    });
    if (numeric_chars && errno == 0 && end == s.c_str() + s.size() && std::isfinite(as_double))
      return as_double;
  }
  return s;
}

class Converter {
 public:
  explicit Converter(const YamlLimits& limits) : limits_(limits) {}

  json convert(const YAML::Node& node, std::size_t depth) {
    if (++nodes_ > limits_.max_nodes) {
      throw ConvertError{"more than " + std::to_string(limits_.max_nodes) + " nodes (alias expansion?)",
                         node.Mark()};
    }
    if (depth > limits_.max_depth) {
      throw ConvertError{"nesting deeper than " + std::to_string(limits_.max_depth) + " levels", node.Mark()};
    }
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar:
        return node.Tag() == "!" ? json(node.Scalar()) : resolve_plain(node.Scalar());
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (const auto& item : node) out.push_back(convert(item, depth + 1));
        return out;
      }
      case YAML::NodeType::Map: {
        json out = json::object();
        for (const auto& entry : node) {
          if (!entry.first.IsScalar()) throw ConvertError{"mapping keys must be strings", entry.first.Mark()};
          const std::string& key = entry.first.Scalar();
          if (out.contains(key)) throw ConvertError{"duplicate key \"" + key + "\"", entry.first.Mark()};
          out[key] = convert(entry.second, depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

 private:
  const YamlLimits& limits_;
  std::size_t nodes_ = 0;
};

// Flow-collection depth ([ and {) outside quotes and comments; yaml-cpp parses these recursively, so a
// hostile `[[[[…` must be refused before it reaches the parser.
std::size_t flow_depth(std::string_view text, std::size_t cap) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (comment) {
      comment = c != '\n';
      continue;
    }
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n')) {
      comment = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > cap) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Block nesting depth is bounded by indentation; refuse absurd indentation for the same reason.
std::size_t max_indent(std::string_view text) {
  std::size_t deepest = 0;
  std::size_t current = 0;
  bool at_line_start = true;
  for (const char c : text) {
    if (c == '\n') {
      at_line_start = true;
      current = 0;
    } else if (at_line_start && (c == ' ' || c == '-')) {
      deepest = std::max(deepest, ++current);
    } else {
      at_line_start = false;
    }
  }
  return deepest;
}

void emit(std::ostringstream& out, const json& value, int indent, bool in_sequence);

std::string scalar_text(const json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    // Quote anything a YAML reader could take for another type or that has YAML syntax in it.
    const json resolved = resolve_plain(s);
    const bool plain_safe = !s.empty() && resolved.is_string() &&
                            s.find_first_of(":#{}[],&*!|>'\"%@`\n\t") == std::string::npos &&
                            s.front() != ' ' && s.back() != ' ' && s.front() != '-' && s.front() != '?';
    return plain_safe ? s : json(s).dump();
  }
  return value.dump();
}

void emit(std::ostringstream& out, const json& value, int indent, bool in_sequence) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (value.is_object()) {
    if (value.empty()) {
      out << "{}\n";
      return;
    }
    bool first = true;
    for (const auto& [key, child] : value.items()) {
      if (!(first && in_sequence)) out << pad;
      first = false;
      out << scalar_text(json(key)) << ":";
      if ((child.is_object() && !child.empty()) || (child.is_array() && !child.empty())) {
        out << "\n";
        emit(out, child, child.is_array() ? indent : indent + 2, false);
      } else {
        out << " ";
        emit(out, child, indent + 2, false);
      }
    }
    return;
  }
  if (value.is_array()) {
    if (value.empty()) {
      out << "[]\n";
      return;
    }
    bool first = true;
    for (const auto& item : value) {
      // The first item of a list inside a list goes on its parent's "- " line.
      if (!(first && in_sequence)) out << pad;
      first = false;
      out << "- ";
      if ((item.is_object() || item.is_array()) && !item.empty()) {
        emit(out, item, indent + 2, true);
      } else {
        emit(out, item, indent + 2, false);
      }
    }
    return;
  }
  out << scalar_text(value) << "\n";
}

// The next token of a JSON Pointer from `pos` (at a '/'), unescaped; pos moves past it.
std::string next_token(std::string_view pointer, std::size_t& pos) {
  const std::size_t end = std::min(pointer.find('/', pos + 1), pointer.size());
  std::string token;
  for (std::size_t i = pos + 1; i < end; ++i) {
    if (pointer[i] == '~' && i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[++i] == '0' ? '~' : '/';
    } else {
      token += pointer[i];
    }
  }
  pos = end;
  return token;
}

// The child of `node` named by a pointer token (a key of a map, an index of a sequence); undefined if none.
YAML::Node child_of(const YAML::Node& node, const std::string& token) {
  if (node.IsMap()) return node[token];  // const: a missing key is not added
  if (node.IsSequence()) {
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
    if (ec == std::errc() && end == token.data() + token.size() && index < node.size()) return node[index];
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

}  // namespace

struct DocumentNodes {
  YAML::Node root;
};

Mark mark_of(const Document& doc, std::string_view pointer) {
  if (!doc.nodes) return {doc.line, 1};
  YAML::Node node = doc.nodes->root;
  std::size_t pos = 0;
  while (pos < pointer.size() && pointer[pos] == '/') {
    YAML::Node child = child_of(static_cast<const YAML::Node&>(node), next_token(pointer, pos));
    if (!child.IsDefined()) break;
    node.reset(child);  // reset, not =: assigning one node to another copies the value into the first
  }
  return {node.Mark().line + 1, node.Mark().column + 1};
}

Result<LoadedDocuments> load_documents(std::string_view text, std::string_view source_name,
                                       const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return make_error(std::string(source_name) + ": " + std::to_string(text.size()) +
                      " bytes exceeds the limit of " + std::to_string(limits.max_bytes) + " bytes");
  }
  if (flow_depth(text, limits.max_depth) > limits.max_depth || max_indent(text) > 4 * limits.max_depth) {
    return make_error(std::string(source_name) + ": nesting deeper than " + std::to_string(limits.max_depth) +
                      " levels");
  }
  LoadedDocuments loaded;
  try {
    loaded.nodes = load_all(std::string(text));
    Converter converter(limits);
    for (const YAML::Node& node : loaded.nodes) {
      if (node.IsNull()) continue;
      loaded.documents.push_back({converter.convert(node, 0), node.Mark().line + 1,
                                  std::make_shared<const DocumentNodes>(DocumentNodes{node})});
    }
  } catch (const ConvertError& e) {
    return make_error(location(source_name, e.mark) + ": " + e.message);
  } catch (const YAML::Exception& e) {
    return make_error(location(source_name, e.mark) + ": " + e.msg);
  }
  return loaded;
}

Result<std::vector<Document>> read_documents(std::string_view text, std::string_view source_name,
                                             const YamlLimits& limits) {
  auto loaded = load_documents(text, source_name, limits);
  if (!loaded) return loaded.error();
  return std::move(loaded->documents);
}

std::string to_yaml(const nlohmann::json& value) {
  std::ostringstream out;
  emit(out, value, 0, false);
  return out.str();
}

}  // namespace gpuadmit::config
