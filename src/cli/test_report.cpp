#include "test_report.hpp"

#include <algorithm>
#include <string>

namespace gpuadmit::cli {
namespace {

struct Counts {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t errors = 0;
};

Counts count(const std::vector<SuiteRun>& runs) {
  Counts n;
  for (const SuiteRun& run : runs) {
    if (!run.result.error.empty()) ++n.errors;
    for (const CaseResult& c : run.result.cases) ++(c.failures.empty() ? n.passed : n.failed);
  }
  return n;
}

std::string padded(const std::string& text, std::size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ') + "  ";
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + (line.ends_with('\n') ? "" : "\n");
  return out;
}

std::string xml_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 has no place for the other control characters.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace

void print_test_table(const std::vector<SuiteRun>& runs, std::ostream& out) {
  std::size_t suite_width = 5;
  std::size_t resource_width = 8;
  for (const SuiteRun& run : runs) {
    suite_width = std::max(suite_width, run.suite.name.size());
    for (const CaseResult& c : run.result.cases) resource_width = std::max(resource_width, c.resource.size());
  }
  out << padded("SUITE", suite_width) << padded("RESOURCE", resource_width) << "RESULT\n";
  for (const SuiteRun& run : runs) {
    if (!run.result.error.empty()) {
      out << padded(run.suite.name, suite_width) << padded("-", resource_width) << "ERROR\n";
    }
    for (const CaseResult& c : run.result.cases) {
      out << padded(run.suite.name, suite_width) << padded(c.resource, resource_width)
          << (c.failures.empty() ? "pass" : "FAIL") << "\n";
    }
  }
  for (const SuiteRun& run : runs) {
    if (!run.result.error.empty()) {
      out << "\n--- " << run.suite.name << " (" << run.suite.file << "): ERROR\n" << run.result.error << "\n";
    }
    for (const CaseResult& c : run.result.cases) {
      if (c.failures.empty()) continue;
      out << "\n--- " << run.suite.name << ": " << c.resource << " (" << c.source;
      if (c.expected != nullptr && c.expected->location != c.source)
        out << "; expected at " << c.expected->location;
      out << ")\n" << joined(c.failures);
    }
  }
  const Counts n = count(runs);
  out << "\n"
      << runs.size() << (runs.size() == 1 ? " suite, " : " suites, ") << n.passed << " passed, " << n.failed
      << " failed, " << n.errors << (n.errors == 1 ? " suite error\n" : " suite errors\n");
}

void print_test_junit(const std::vector<SuiteRun>& runs, std::ostream& out) {
  const Counts n = count(runs);
  out << R"(<?xml version="1.0" encoding="UTF-8"?>)"
      << "\n"
      << R"(<testsuites name="gpuadmit test" tests=")" << n.passed + n.failed + n.errors << R"(" failures=")"
      << n.failed << R"(" errors=")" << n.errors << "\">\n";
  for (const SuiteRun& run : runs) {
    const std::vector<CaseResult>& cases = run.result.cases;
    const auto failed = static_cast<std::size_t>(
        std::count_if(cases.begin(), cases.end(), [](const CaseResult& c) { return !c.failures.empty(); }));
    const std::size_t errors = run.result.error.empty() ? 0 : 1;
    const std::string suite = xml_escaped(run.suite.name);
    out << R"(  <testsuite name=")" << suite << R"(" file=")" << xml_escaped(run.suite.file) << R"(" tests=")"
        << cases.size() + errors << R"(" failures=")" << failed << R"(" errors=")" << errors << "\">\n";
    if (errors != 0) {
      out << R"(    <testcase classname=")" << suite << R"(" name="suite"><error message=")"
          << xml_escaped(run.result.error.substr(0, run.result.error.find('\n'))) << "\">"
          << xml_escaped(run.result.error) << "</error></testcase>\n";
    }
    for (const CaseResult& c : cases) {
      out << R"(    <testcase classname=")" << suite << R"(" name=")" << xml_escaped(c.resource)
          << R"(" file=")" << xml_escaped(c.source.substr(0, c.source.rfind(':'))) << "\"";
      if (c.failures.empty()) {
        out << "/>\n";
        continue;
      }
      const std::string& first = c.failures.front();
      out << R"(><failure message=")" << xml_escaped(first.substr(0, first.find('\n'))) << "\">"
          << xml_escaped(joined(c.failures)) << "</failure></testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace gpuadmit::cli
