#include "policy_docs.hpp"

#include <optional>
#include <vector>

#include "gpuadmit/common/text.hpp"

namespace gpuadmit::config {
namespace {

// Markdown to plain text: `code` and **bold** marks dropped, [text](link) kept as text.
std::string plain(std::string_view md) {
  std::string out;
  for (std::size_t i = 0; i < md.size(); ++i) {
    const char c = md[i];
    if (c == '`' || (c == '*' && i + 1 < md.size() && md[i + 1] == '*')) {
      if (c == '*') ++i;
      continue;
    }
    if (c == '[') {
      const std::size_t close = md.find("](", i);
      const std::size_t end = close == std::string_view::npos ? close : md.find(')', close);
      if (end != std::string_view::npos) {
        out += plain(md.substr(i + 1, close - i - 1));
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

// The cells of a table row ("| a | b |" → {"a", "b"}); empty when the line is no row.
std::vector<std::string_view> cells(std::string_view line) {
  std::vector<std::string_view> out;
  if (line.size() < 2 || line.front() != '|') return out;
  line.remove_prefix(1);
  while (!line.empty()) {
    const std::size_t bar = line.find('|');
    if (bar == std::string_view::npos) break;
    out.push_back(trim_space(line.substr(0, bar)));
    line.remove_prefix(bar + 1);
  }
  return out;
}

// "`name`" → "name"; anything else → "".
std::string_view code_name(std::string_view cell) {
  if (cell.size() < 3 || cell.front() != '`' || cell.back() != '`') return {};
  return cell.substr(1, cell.size() - 2);
}

// A row's description: its meaning (when the table has that column) and its default.
std::string row_description(const std::vector<std::string_view>& row) {
  const std::string def = plain(row[1]);
  if (row.size() >= 3 && !row[2].empty()) return plain(row[2]) + " (default: " + def + ")";
  return "Default: " + def + ".";
}

struct Walk {
  PolicyDescriptions out;
  std::string section;                      // the "## " heading
  std::string rule;                         // the "### `id`" heading's id, under "## Rules"
  std::optional<std::string> table_prefix;  // inside a settings table: what its rows' names are under
  std::string paragraph;                    // the rule's opening paragraph, while it is read
  bool reading_paragraph = false;

  void finish_paragraph() {
    if (reading_paragraph && !rule.empty()) {
      out["spec.rules." + rule] = plain(paragraph);
      const std::size_t at = paragraph.find("**");
      const std::size_t end = at == std::string::npos ? at : paragraph.find("**", at + 2);
      const std::string action =
          end == std::string::npos ? std::string() : paragraph.substr(at + 2, end - at - 2);
      out["spec.rules." + rule + ".action"] =
          "enforce (fix when safe, deny what is still wrong), warn (allow with a Warning), audit (log and "
          "count only) or off (default: " +
          action + ")";
    }
    reading_paragraph = false;
    paragraph.clear();
  }

  void line(std::string_view text) {
    if (text.starts_with("## ")) {
      finish_paragraph();
      section = std::string(text.substr(3));
      rule.clear();
      table_prefix.reset();
      return;
    }
    if (text.starts_with("### ")) {
      finish_paragraph();
      rule = section == "Rules" ? std::string(code_name(trim_space(text.substr(4)))) : std::string();
      table_prefix.reset();
      return;
    }
    if (reading_paragraph) {
      if (trim_space(text).empty()) return finish_paragraph();
      paragraph += " " + std::string(trim_space(text));
      return;
    }
    if (!rule.empty() && text.starts_with("Default action:")) {
      reading_paragraph = true;
      paragraph = std::string(text);
      return;
    }
    table_row(cells(text));
  }

  void table_row(const std::vector<std::string_view>& row) {
    if (row.size() < 2) {
      table_prefix.reset();
      return;
    }
    // A settings table's header says what its rows name.
    if (row[0] == "key" && section == "Top-level settings") {
      table_prefix = "";
    } else if (row[0] == "parameter" && !rule.empty()) {
      table_prefix = "spec.rules." + rule + ".";
    } else if (row[0] == "preset key") {
      table_prefix = "spec.presets[].";
    } else if (row[0] == "workload key") {
      table_prefix = "spec.workloads[].";
    } else if (const std::string_view name = code_name(row[0]); table_prefix && !name.empty()) {
      out[*table_prefix + std::string(name)] = row_description(row);
    }
  }
};

}  // namespace

PolicyDescriptions read_policy_docs(std::string_view markdown) {
  Walk walk;
  while (!markdown.empty()) {
    const std::size_t end = markdown.find('\n');
    walk.line(markdown.substr(0, end));
    markdown.remove_prefix(end == std::string_view::npos ? markdown.size() : end + 1);
  }
  walk.finish_paragraph();
  return std::move(walk.out);
}

}  // namespace gpuadmit::config
