// Device selectors: semantic versions as github.com/blang/semver/v4 parses and orders them (the library
// behind Kubernetes' CEL semver type and DRA version attributes), with its error texts, since a bad version
// literal or attribute surfaces to the user as that text; and CEL's names of values and static types.
#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "device_cel_ast.hpp"

namespace gpuadmit::policy::cel {
namespace {

bool only(std::string_view s, std::string_view allowed) {
  return std::all_of(s.begin(), s.end(), [&](char c) { return allowed.find(c) != std::string_view::npos; });
}
constexpr std::string_view kNumbers = "0123456789";
constexpr std::string_view kAlphanum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-0123456789";

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}  // %q for printable ASCII

// strconv.ParseUint(s, 10, 64)'s failure text is "strconv.ParseUint: parsing "s": value out of range".
Result<std::uint64_t> parse_number(std::string_view s, std::string_view what) {
  if (!only(s, kNumbers))
    return make_error("Invalid character(s) found in " + std::string(what) + " " + quoted(s));
  if (s.size() > 1 && s[0] == '0') {
    std::string title(what);
    title[0] = static_cast<char>(title[0] - 'a' + 'A');
    return make_error(title + " must not contain leading zeroes " + quoted(s));
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || s.empty()) {
    return make_error("strconv.ParseUint: parsing " + quoted(s) +
                      (s.empty() ? ": invalid syntax" : ": value out of range"));
  }
  return v;
}

std::vector<std::string_view> split_keeping_empty(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// strings.SplitN(s, ".", 3): up to three parts, the last one keeping any further dots.
std::vector<std::string_view> split_version(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 2; ++i) {
    const std::size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) break;
    parts.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

Result<Semver> parse_strict(std::string_view s) {
  if (s.empty()) return make_error("Version string empty");
  const std::vector<std::string_view> parts = split_version(s);
  if (parts.size() != 3) return make_error("No Major.Minor.Patch elements found");
  Semver v;
  auto major = parse_number(parts[0], "major number");
  if (!major) return major.error();
  v.major = *major;
  auto minor = parse_number(parts[1], "minor number");
  if (!minor) return minor.error();
  v.minor = *minor;
  // As Parse does: build metadata after the first '+', then a pre-release after the first '-' before it;
  // the patch number is checked first, then the pre-release, then the build metadata.
  std::string_view patch_text = parts[2];
  std::vector<std::string_view> build;
  std::vector<std::string_view> pre;
  if (const std::size_t plus = patch_text.find('+'); plus != std::string_view::npos) {
    build = split_keeping_empty(patch_text.substr(plus + 1), '.');
    patch_text = patch_text.substr(0, plus);
  }
  if (const std::size_t minus = patch_text.find('-'); minus != std::string_view::npos) {
    pre = split_keeping_empty(patch_text.substr(minus + 1), '.');
    patch_text = patch_text.substr(0, minus);
  }
  auto patch = parse_number(patch_text, "patch number");
  if (!patch) return patch.error();
  v.patch = *patch;
  for (auto p : pre) {
    if (p.empty()) return make_error("Prerelease is empty");
    if (only(p, kNumbers)) {
      if (p.size() > 1 && p[0] == '0') {
        return make_error("Numeric PreRelease version must not contain leading zeroes " + quoted(p));
      }
      auto n = parse_number(p, "prerelease");
      if (!n) return n.error();
    } else if (!only(p, kAlphanum)) {
      return make_error("Invalid character(s) found in prerelease " + quoted(p));
    }
    v.pre.emplace_back(p);
  }
  for (auto b : build) {
    if (b.empty()) return make_error("Build meta data is empty");
    if (!only(b, kAlphanum)) return make_error("Invalid character(s) found in build meta data " + quoted(b));
  }
  return v;
}

int compare_identifier(std::string_view a, std::string_view b) {
  const bool an = only(a, kNumbers);
  const bool bn = only(b, kNumbers);
  if (an && bn) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;  // no leading zeros: length orders
    return a == b ? 0 : (a < b ? -1 : 1);
  }
  if (an) return -1;
  if (bn) return 1;
  return a == b ? 0 : (a < b ? -1 : 1);
}

}  // namespace

Result<Semver> parse_semver(std::string_view text, bool normalize) {
  if (!normalize) return parse_strict(text);
  // library.normalizeAndParse in k8s.io/apiserver/pkg/cel/library/semverlib.go.
  std::string_view s = text;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  std::vector<std::string> parts;
  for (const std::string_view part : split_version(s)) parts.emplace_back(part);
  for (auto& p : parts) {
    if (p.size() > 1) {
      const std::size_t nz = p.find_first_not_of('0');
      p = nz == std::string::npos ? std::string() : p.substr(nz);
      if (p.empty() || !(p[0] >= '0' && p[0] <= '9')) p = "0" + p;
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return make_error("short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  return parse_strict(parts[0] + "." + parts[1] + "." + parts[2]);
}

int compare(const Semver& a, const Semver& b) noexcept {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.pre.empty() != b.pre.empty()) return a.pre.empty() ? 1 : -1;  // a release is above its pre-releases
  for (std::size_t i = 0; i < a.pre.size() && i < b.pre.size(); ++i) {
    if (int c = compare_identifier(a.pre[i], b.pre[i]); c != 0) return c;
  }
  if (a.pre.size() != b.pre.size()) return a.pre.size() < b.pre.size() ? -1 : 1;
  return 0;
}

std::string type_name(const Value& value) {
  switch (value.v.index()) {
    case 0:
      return "bool";
    case 1:
      return "int";
    case 2:
      return "uint";
    case 3:
      return "double";
    case 4:
      return "string";
    case 5:
      return "list";
    case 6:
      return "map";
    case 7:
      return "kubernetes.Quantity";
    case 8:
      return "kubernetes.Semver";
    default:
      return "kubernetes.DRADevice";
  }
}

std::string_view type_name(Type type) noexcept {
  switch (type) {
    case Type::kDyn:
      return "any";  // cel-go's name for the attributes' AnyType
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kUint:
      return "uint";
    case Type::kDouble:
      return "double";
    case Type::kString:
      return "string";
    case Type::kList:
      return "list(dyn)";
    case Type::kQuantity:
      return "kubernetes.Quantity";
    case Type::kSemver:
      return "kubernetes.Semver";
    case Type::kDevice:
      return "kubernetes.DRADevice";
    case Type::kAttributesByDomain:
      return "map(string, map(string, dyn))";
    case Type::kAttributes:
      return "map(string, dyn)";
    case Type::kCapacityByDomain:
      return "map(string, map(string, kubernetes.Quantity))";
    case Type::kCapacity:
      return "map(string, kubernetes.Quantity)";
  }
  return "dyn";
}

}  // namespace gpuadmit::policy::cel
