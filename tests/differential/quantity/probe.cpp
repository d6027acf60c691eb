// gpuadmit's side of the Quantity differential test (run.sh): per hex-encoded input line on stdin, what
// k8s::Quantity::parse makes of it, in quantityref's format:
//   "ok <nanos> <canonical> <cmp>"  the exact value in nano-units, to_string(), and <=> against the last
//                                   accepted input (-1, 0, 1; 0 on the first)
//   "err long|range|other"          the parse error, by the stated limit it names (or none)
// A canonical text that does not parse back to the same value is reported as "bad-canonical".
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "gpuadmit/k8s/quantity.hpp"

namespace {

using gpuadmit::k8s::Int128;
using gpuadmit::k8s::Quantity;

std::string decimal(Int128 value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  std::string digits;
  while (value != 0) {
    const auto digit = static_cast<int>(value % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (digit < 0 ? -digit : digit)));
    value /= 10;
  }
  return negative ? "-" + digits : digits;
}

std::optional<std::string> from_hex(const std::string& line) {
  if (line.size() % 2 != 0) return std::nullopt;
  std::string text;
  for (std::size_t i = 0; i < line.size(); i += 2) {
    text += static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16));
  }
  return text;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::optional<Quantity> last;
  std::string out;
  for (std::string line; std::getline(std::cin, line);) {
    const auto text = from_hex(line);
    if (!text) {
      std::fprintf(stderr, "probe: bad hex line: %s\n", line.c_str());
      return 1;
    }
    const auto parsed = Quantity::parse(*text);
    if (!parsed) {
      const std::string& message = parsed.error().message;
      out += message.find("longer than") != std::string::npos                 ? "err long\n"
             : message.find("larger than the supported") != std::string::npos ? "err range\n"
                                                                              : "err other\n";
      continue;
    }
    const std::string canonical = parsed->to_string();
    const auto again = Quantity::parse(canonical);
    if (!again || *again != *parsed) {
      out += "bad-canonical " + canonical + "\n";
      continue;
    }
    int cmp = 0;
    if (last) cmp = *parsed < *last ? -1 : (*parsed > *last ? 1 : 0);
    last = *parsed;
    out += "ok " + decimal(parsed->nanos()) + " " + canonical + " " + std::to_string(cmp) + "\n";
    if (out.size() > (1U << 16)) {
      std::cout << out;
      out.clear();
    }
  }
  std::cout << out;
  return 0;
}
