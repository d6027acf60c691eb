#include "gpuadmit/policy/workload_path.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace gpuadmit::policy {
namespace {

// Longer paths are no one's template: the bound keeps a hostile policy's walk small.
constexpr std::size_t kMaxPathBytes = 512;
// Nine digits: any index or count a Kubernetes list holds, and never an overflow.
constexpr std::size_t kMaxDigits = 9;

bool is_member_char(char ch, bool glob) {
  const auto byte = static_cast<unsigned char>(ch);
  return std::isalnum(byte) != 0 || ch == '_' || ch == '-' || (glob && ch == '*');
}

bool all_digits(std::string_view text) {
  return !text.empty() && text.size() <= kMaxDigits && std::all_of(text.begin(), text.end(), [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch)) != 0;
  });
}

std::int64_t to_number(std::string_view digits) {
  std::int64_t n = 0;
  for (const char ch : digits) n = n * 10 + (ch - '0');
  return n;
}

std::optional<PathError> parse_select(std::string_view text, std::size_t open, std::size_t close,
                                      PathStep& step) {
  const std::string_view inside = text.substr(open + 1, close - open - 1);
  if (inside.empty())
    return PathError{open, "an empty [] selects nothing: write [*], [name=*], [name=value] or [0]"};
  if (inside == "*") {
    step.select = PathStep::Select::kEach;
    return std::nullopt;
  }
  if (all_digits(inside)) {
    step.select = PathStep::Select::kIndex;
    step.index = static_cast<std::size_t>(to_number(inside));
    return std::nullopt;
  }
  const std::size_t eq = inside.find('=');
  if (eq == std::string_view::npos) {
    return PathError{
        open + 1, "expected *, key=*, key=value or an index inside [], got \"" + std::string(inside) + "\""};
  }
  const std::string_view key = inside.substr(0, eq);
  const std::string_view value = inside.substr(eq + 1);
  if (key.empty()) return PathError{open + 1, "expected a member name before = in []"};
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (!is_member_char(key[i], false)) {
      return PathError{open + 1 + i,
                       std::string("unexpected '") + key[i] + "' in the key of []: a key is a member name"};
    }
  }
  if (value.empty()) return PathError{open + 2 + eq, "expected a value or * after " + std::string(key) + "="};
  step.key = std::string(key);
  if (value == "*") {
    step.select = PathStep::Select::kEach;
  } else {
    step.select = PathStep::Select::kWhere;
    step.value = std::string(value);
  }
  return std::nullopt;
}

}  // namespace

std::optional<PathError> parse_workload_path(std::string_view text, WorkloadPath& out) {
  out = WorkloadPath{};
  out.text = std::string(text);
  if (text.size() > kMaxPathBytes) {
    return PathError{kMaxPathBytes, "a path is at most " + std::to_string(kMaxPathBytes) + " bytes"};
  }
  std::size_t pos = 0;
  while (true) {
    PathStep step;
    const std::size_t start = pos;
    while (pos < text.size() && is_member_char(text[pos], true)) ++pos;
    if (pos == start) {
      if (pos < text.size() && text[pos] != '.' && text[pos] != '[') {
        return PathError{pos, std::string("unexpected '") + text[pos] +
                                  "': a step is a member name of letters, digits, _, - and *"};
      }
      return PathError{pos, "expected a member name (an empty step)"};
    }
    step.member = std::string(text.substr(start, pos - start));
    if (pos < text.size() && text[pos] == '[') {
      const std::size_t close = text.find(']', pos);
      const std::size_t nested = text.find('[', pos + 1);
      if (close == std::string_view::npos || (nested != std::string_view::npos && nested < close)) {
        return PathError{pos, "this [ is not closed by ]"};
      }
      if (auto error = parse_select(text, pos, close, step)) return error;
      pos = close + 1;
    }
    out.steps.push_back(std::move(step));
    if (pos == text.size()) return std::nullopt;
    if (text[pos] != '.') {
      return PathError{pos, std::string("unexpected '") + text[pos] + "': steps are separated by dots"};
    }
    ++pos;
  }
}

std::optional<PathError> parse_factor(std::string_view text, Factor& out) {
  out = Factor{};
  out.text = std::string(text);
  if (all_digits(text)) {
    out.number = to_number(text);
    return std::nullopt;
  }
  std::string_view ref = text;
  if (const std::size_t minus = text.rfind(" - "); minus != std::string_view::npos) {
    const std::string_view digits = text.substr(minus + 3);
    if (!all_digits(digits)) {
      return PathError{minus + 3, "expected a whole number after \" - \", as in size - 1"};
    }
    out.minus = to_number(digits);
    ref = text.substr(0, minus);
  }
  FieldRef field;
  std::size_t pos = 0;
  if (ref.starts_with("$.")) {
    field.from_root = true;
    pos = 2;
  }
  while (true) {
    const std::size_t start = pos;
    while (pos < ref.size() && is_member_char(ref[pos], false)) ++pos;
    if (pos == start) {
      if (pos < ref.size()) {
        return PathError{pos,
                         std::string("unexpected '") + ref[pos] +
                             "': a count is a number, a member path (replicas, template.spec.parallelism) "
                             "or $.path from the object's root, optionally \" - N\""};
      }
      return PathError{pos, "expected a member name (an empty step)"};
    }
    field.members.emplace_back(ref.substr(start, pos - start));
    if (pos == ref.size()) break;
    if (ref[pos] != '.') {
      return PathError{pos, std::string("unexpected '") + ref[pos] + "': steps are separated by dots"};
    }
    ++pos;
  }
  // "10000000000", "-1", "1.5": a number out of range or not whole, not a member named so.
  const char first = field.members.front().front();
  if (std::isdigit(static_cast<unsigned char>(first)) != 0 || first == '-') {
    return PathError{
        field.from_root ? 2U : 0U,
        "expected a whole number of at most 9 digits, or a member path that starts with a letter"};
  }
  out.ref = std::move(field);
  return std::nullopt;
}

std::optional<PathError> parse_field_ref(std::string_view text, FieldRef& out) {
  out = FieldRef{};
  if (text == "@") return std::nullopt;
  Factor f;
  if (auto error = parse_factor(text, f)) return error;
  if (!f.ref || f.minus != 0) {
    return PathError{0,
                     "expected @ (the object itself), a member path such as metadata, or $.path from the "
                     "object's root"};
  }
  out = std::move(*f.ref);
  return std::nullopt;
}

FieldRef field_ref(std::string_view text) {
  FieldRef f;
  if (auto error = parse_field_ref(text, f)) throw std::logic_error("built-in ref: " + error->what);
  return f;
}

WorkloadPath workload_path(std::string_view text) {
  WorkloadPath path;
  if (auto error = parse_workload_path(text, path)) throw std::logic_error("built-in path: " + error->what);
  return path;
}

Factor factor(std::string_view text) {
  Factor f;
  if (auto error = parse_factor(text, f)) throw std::logic_error("built-in factor: " + error->what);
  return f;
}

}  // namespace gpuadmit::policy
