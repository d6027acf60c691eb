#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace {

using gpuadmit::k8s::Quantity;
using gpuadmit::policy::AttributeValue;
using gpuadmit::policy::compile_selector;
using gpuadmit::policy::DeviceView;
using gpuadmit::policy::evaluate;
using gpuadmit::policy::evaluate_selector;
using gpuadmit::policy::SelectorOutcome;
using gpuadmit::policy::VersionText;
using Kind = SelectorOutcome::Kind;

Quantity quantity_of(const char* text) {
  auto parsed = Quantity::parse(text);
  if (!parsed) FAIL("bad quantity " << text);
  return *parsed;
}

// What a row expects: a match, no match, an error (compile or evaluation) whose message contains `text`,
// or "not evaluated" whose reason contains `text`.
struct Expect {
  Kind kind;
  std::string text;
};
const Expect kMatch{Kind::kTrue, ""};
const Expect kNoMatch{Kind::kFalse, ""};
Expect error(std::string text) {
  return {Kind::kError, std::move(text)};
}
Expect not_evaluated(std::string text) {
  return {Kind::kNotEvaluated, std::move(text)};
}

struct Row {
  std::string name;
  std::string expression;
  DeviceView device;
  Expect expect;
};

void check(const Row& row) {
  INFO(row.name << ": " << row.expression);
  const SelectorOutcome got = evaluate_selector(row.expression, row.device);
  INFO("message: " << got.message);
  CHECK(got.kind == row.expect.kind);
  CHECK_THAT(got.message, Catch::Matchers::Contains(row.expect.text));
  if (got.kind == Kind::kNotEvaluated)
    CHECK_THAT(got.message, Catch::Matchers::StartsWith("not evaluated: "));
}

DeviceView device(std::string driver, std::map<std::string, AttributeValue> attributes = {},
                  std::map<std::string, Quantity> capacity = {}) {
  DeviceView d;
  d.driver = std::move(driver);
  d.attributes = std::move(attributes);
  d.capacity = std::move(capacity);
  return d;
}

// A device as k8s-dra-driver-gpu publishes an A100 (its ResourceSlice, driver gpu.nvidia.com).
DeviceView a100() {
  return device("gpu.nvidia.com",
                {{"type", std::string("gpu")},
                 {"uuid", std::string("GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c")},
                 {"productName", std::string("NVIDIA A100-SXM4-40GB")},
                 {"brand", std::string("Nvidia")},
                 {"architecture", std::string("Ampere")},
                 {"cudaComputeCapability", VersionText{"8.0.0"}},
                 {"driverVersion", VersionText{"560.35.3"}},
                 {"cudaDriverVersion", VersionText{"12.6.0"}},
                 {"index", std::int64_t{0}},
                 {"minor", std::int64_t{0}},
                 {"resource.kubernetes.io/pcieRoot", std::string("pci0000:00")}},
                {{"memory", quantity_of("40Gi")}});
}

DeviceView mig_1g5gb() {
  return device("gpu.nvidia.com",
                {{"type", std::string("mig")},
                 {"profile", std::string("1g.5gb")},
                 {"productName", std::string("NVIDIA A100-SXM4-40GB")},
                 {"parentIndex", std::int64_t{0}},
                 {"architecture", std::string("Ampere")}},
                {{"memory", quantity_of("4864Mi")}, {"multiprocessors", quantity_of("14")}});
}

}  // namespace

TEST_CASE(
    "every selector of Kubernetes' own DRA CEL tests gives Kubernetes' result or says it is not evaluated",
    "[device_cel]") {
  // k8s.io/dynamic-resource-allocation v0.35.4, cel/compile_test.go, var testcases (the rows in its order;
  // the name is Kubernetes' key). Rows whose feature the subset leaves out expect kNotEvaluated.
  const std::vector<Row> rows{
      {"true", "true", {}, kMatch},
      {"false", "false", {}, kNoMatch},
      {"syntax-error", "?!", {}, error("Syntax error")},
      {"type-error", "1", {}, error("must evaluate to bool or the unknown type, not int")},
      {"runtime-error-lookup-identifier",
       R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))",
       {},
       error("no such key: noSuchAttr")},
      {"runtime-error-lookup-map",
       R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))",
       {},
       error("no such key: noSuchAttr")},
      {"domain-check-negative", R"("no-such-domain" in device.attributes)", {}, kNoMatch},
      {"domain-check-positive", R"("dra.example.com" in device.attributes)",
       device("", {{"dra.example.com/something", true}}), kMatch},
      {"empty-driver-name", R"(device.driver == "")", {}, kMatch},
      {"real-driver-name", R"(device.driver == "dra.example.com")", device("dra.example.com"), kMatch},
      {"driver-name-qualifier", R"(device.attributes["dra.example.com"].name)",
       device("dra.example.com", {{"name", true}}), kMatch},
      {"driver-name-qualifier-map-lookup", R"(device.attributes["dra.example.com"]["name"])",
       device("dra.example.com", {{"name", true}}), kMatch},
      {"bind", R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))",
       device("dra.example.com", {{"name", true}}), kMatch},
      {"qualified-attribute-name", R"(device.attributes["other.example.com"].name)",
       device("dra.example.com", {{"other.example.com/name", true}}), kMatch},
      {"bool", R"(device.attributes["dra.example.com"].name)", device("dra.example.com", {{"name", true}}),
       kMatch},
      {"int", R"(device.attributes["dra.example.com"].name > 0)",
       device("dra.example.com", {{"name", std::int64_t{1}}}), kMatch},
      {"string", R"(device.attributes["dra.example.com"].name == "fish")",
       device("dra.example.com", {{"name", std::string("fish")}}), kMatch},
      {"version", R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1")))",
       device("dra.example.com", {{"name", VersionText{"1.0.0"}}}), kMatch},
      {"version_v",
       R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true))",
       device("dra.example.com", {{"name", VersionText{"1.0.0"}}}), kMatch},
      {"quantity", R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       device("dra.example.com", {}, {{"name", quantity_of("1Mi")}}), kMatch},
      {"check-positive",
       R"("name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       device("dra.example.com", {}, {{"name", quantity_of("1Mi")}}), kMatch},
      {"check-negative",
       R"(!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       {},
       kMatch},
      {"all", R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
)",
       device("dra.example.com",
              {{"bool", true},
               {"int", std::int64_t{1}},
               {"string", std::string("fish")},
               {"version", VersionText{"1.0.0"}}},
              {{"quantity", quantity_of("1Mi")}}),
       kMatch},
      {"many",
       R"(device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c)",
       device("dra.example.com", {{"a", true}, {"b", true}, {"c", true}}), kMatch},
      {"check_attribute_domains", R"(device.attributes.exists_one(x, x == "dra.example.com"))",
       device("dra.example.com", {{"services", std::string("some_example_value")}}),
       not_evaluated("macro 'exists_one'")},
      {"check_attribute_ids", R"(device.attributes["dra.example.com"].exists_one(x, x == "services"))",
       device("dra.example.com", {{"services", std::string("some_example_value")}}),
       not_evaluated("macro 'exists_one'")},
      {"split_attribute", R"(device.attributes["dra.example.com"].services.split("example").size() >= 2)",
       device("dra.example.com", {{"services", std::string("some_example_value")}}),
       not_evaluated("function 'split'")},
      {"regexp_attribute", R"(device.attributes["dra.example.com"].services.matches("[^a]?sym"))",
       device("dra.example.com", {{"services", std::string("asymetric")}}), kMatch},
      {"check_capacity_domains", R"(device.capacity.exists_one(x, x == "dra.example.com"))",
       device("dra.example.com", {}, {{"memory", quantity_of("1Mi")}}), not_evaluated("macro 'exists_one'")},
      {"check_capacity_ids", R"(device.capacity["dra.example.com"].exists_one(x, x == "memory"))",
       device("dra.example.com", {}, {{"memory", quantity_of("1Mi")}}), not_evaluated("macro 'exists_one'")},
      // Kubernetes: "actual cost limit exceeded".
      {"expensive",
       R"([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
       device("dra.example.com"), not_evaluated("macro 'all'")},
      {"allow_multiple_allocations", "device.allowMultipleAllocations == true",
       [] {
         auto d = device("dra.example.com");
         d.allow_multiple_allocations = true;
         return d;
       }(),
       kMatch},
      {"allow_multiple_allocations_default", "device.allowMultipleAllocations == false",
       device("dra.example.com"), kMatch},
  };
  for (const auto& row : rows) check(row);
}

TEST_CASE("the selectors of NVIDIA's k8s-dra-driver-gpu demo specs pick the devices they were written for",
          "[device_cel]") {
  // github.com/NVIDIA/k8s-dra-driver-gpu demo/specs (gpu-test*.yaml, mig, quickstart) and its README.
  const std::vector<Row> rows{
      {"product name regex, A100",
       R"(device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$'))", a100(),
       kMatch},
      {"product name regex, MIG slice of an A100",
       R"(device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$'))", mig_1g5gb(),
       kMatch},
      {"product name regex, H100 pattern",
       R"(device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*h100.*$'))", a100(),
       kNoMatch},
      {"architecture", R"(device.attributes["gpu.nvidia.com"].architecture == "Ampere")", a100(), kMatch},
      {"architecture, other", R"(device.attributes["gpu.nvidia.com"].architecture == "Hopper")", a100(),
       kNoMatch},
      {"memory at least 40Gi", R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)",
       a100(), kMatch},
      {"memory at least 40Gi, MIG slice",
       R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)", mig_1g5gb(), kNoMatch},
      {"type mig", R"(device.attributes['gpu.nvidia.com'].type == 'mig')", mig_1g5gb(), kMatch},
      {"type gpu", R"(device.attributes['gpu.nvidia.com'].type == 'gpu')", a100(), kMatch},
      {"mig profile", R"(device.attributes['gpu.nvidia.com'].profile == '1g.5gb')", mig_1g5gb(), kMatch},
      {"mig profile on a full GPU has no such key",
       R"(device.attributes['gpu.nvidia.com'].profile == '1g.5gb')", a100(), error("no such key: profile")},
      {"driver", R"(device.driver == 'gpu.nvidia.com')", a100(), kMatch},
      {"compute capability",
       R"(device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('7.5.0')))", a100(),
       kMatch},
      {"driver version major", R"(device.attributes['gpu.nvidia.com'].driverVersion.major() >= 550)", a100(),
       kMatch},
      {"pcie root from the standard domain",
       R"(device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:00')", a100(), kMatch},
      {"index in a list", R"(device.attributes['gpu.nvidia.com'].index in [0, 1])", a100(), kMatch},
  };
  for (const auto& row : rows) check(row);
}

TEST_CASE("selectors follow cel-go's semantics where they surprise people", "[device_cel]") {
  const DeviceView gpu = a100();
  const std::vector<Row> rows{
      // Missing attributes: cel-go's text, whichever domain.
      {"missing attribute", R"(device.attributes["gpu.nvidia.com"].gpuModel == "A100")", gpu,
       error("no such key: gpuModel")},
      {"missing attribute by index", R"(device.attributes["gpu.nvidia.com"]["gpuModel"] == "A100")", gpu,
       error("no such key: gpuModel")},
      {"missing capacity", R"(device.capacity["gpu.nvidia.com"].cores.isGreaterThan(quantity("1")))", gpu,
       error("no such key: cores")},
      // && and || are commutative over errors.
      {"error || true", R"(device.attributes["gpu.nvidia.com"].gpuModel == "x" || true)", gpu, kMatch},
      {"true || error", R"(true || device.attributes["gpu.nvidia.com"].gpuModel == "x")", gpu, kMatch},
      {"error && false", R"(device.attributes["gpu.nvidia.com"].gpuModel == "x" && false)", gpu, kNoMatch},
      {"false && error", R"(false && device.attributes["gpu.nvidia.com"].gpuModel == "x")", gpu, kNoMatch},
      {"error || false", R"(device.attributes["gpu.nvidia.com"].gpuModel == "x" || false)", gpu,
       error("no such key: gpuModel")},
      {"error && true", R"(device.attributes["gpu.nvidia.com"].gpuModel == "x" && true)", gpu,
       error("no such key: gpuModel")},
      {"first error of several",
       R"(device.attributes["gpu.nvidia.com"].a || device.attributes["gpu.nvidia.com"].b)", gpu,
       error("no such key: a")},
      {"has() guards a missing attribute",
       R"(has(device.attributes["gpu.nvidia.com"].gpuModel) && device.attributes["gpu.nvidia.com"].gpuModel == "x")",
       gpu, kNoMatch},
      {"has() sees a present attribute", R"(has(device.attributes["gpu.nvidia.com"].architecture))", gpu,
       kMatch},
      {"has() on the domain map always finds (Kubernetes' default map)", R"(has(device.attributes.nothing))",
       gpu, kMatch},
      {"in on the domain map does not", R"("nothing" in device.attributes)", gpu, kNoMatch},
      {"key membership", R"("architecture" in device.attributes["gpu.nvidia.com"])", gpu, kMatch},
      // Types.
      {"int attribute against a string is false, not an error",
       R"(device.attributes["gpu.nvidia.com"].index == "0")", gpu, kNoMatch},
      {"ordering an int attribute against a string is an error",
       R"(device.attributes["gpu.nvidia.com"].index < "1")", gpu, error("no such overload")},
      {"ordering a version names the operator", R"(device.attributes["gpu.nvidia.com"].driverVersion < "1")",
       gpu, error("no such overload: _<_")},
      {"a library function on the wrong type names the overload",
       R"(device.attributes["gpu.nvidia.com"].productName.isGreaterThan(semver("1.0.0")))", gpu,
       error("no such overload: isGreaterThan(string, kubernetes.Semver)")},
      {"x in [] is false without evaluating x (a constant set in cel-go)",
       R"(device.attributes["gpu.nvidia.com"].gpuModel in [])", gpu, kNoMatch},
      {"list literals are homogeneous, dyn included",
       R"(device.driver in [device.attributes["gpu.nvidia.com"].brand, "x"])", gpu,
       error("expected type 'any' but found 'string'")},
      {"ternary branches agree", R"(device.driver == "" ? 1 : true)", gpu,
       error("found no matching overload for '_?_:_'")},
      {"version attribute == string is an error",
       R"(device.attributes["gpu.nvidia.com"].driverVersion == "560.35.3")", gpu, error("no such overload")},
      {"version attribute != string is true",
       R"(device.attributes["gpu.nvidia.com"].driverVersion != "560.35.3")", gpu, kMatch},
      {"string == version attribute is false",
       R"("560.35.3" == device.attributes["gpu.nvidia.com"].driverVersion)", gpu, kNoMatch},
      {"version equality ignores build metadata", R"(semver("1.2.3+abc") == semver("1.2.3"))", gpu, kMatch},
      {"version pre-releases order below releases", R"(semver("1.0.0-rc.1").isLessThan(semver("1.0.0")))",
       gpu, kMatch},
      {"numeric pre-release identifiers order as numbers",
       R"(semver("1.0.0-rc.10").compareTo(semver("1.0.0-rc.9")) == 1)", gpu, kMatch},
      {"semver parts", R"(semver("12.6.0").minor() == 6 && semver("v12", true).major() == 12)", gpu, kMatch},
      {"bad semver literal", R"(semver("12.6") == semver("12.6.0"))", gpu,
       error("No Major.Minor.Patch elements found")},
      {"int equals double", R"(device.attributes["gpu.nvidia.com"].minor == 0.0)", gpu, kMatch},
      {"int attribute below a double", R"(device.attributes["gpu.nvidia.com"].minor < 0.5)", gpu, kMatch},
      {"bool attribute used as a condition needs a bool",
       R"(device.attributes["gpu.nvidia.com"].index ? true : false)", gpu, error("no such overload")},
      {"non-bool term of ||", R"(device.attributes["gpu.nvidia.com"].brand || false)", gpu,
       error("no such overload")},
      {"non-bool result", R"(device.attributes["gpu.nvidia.com"].brand)", gpu,
       error("CEL result of type string could not be converted to bool: unsupported native conversion from "
             "string to 'bool'")},
      {"static type mismatch is a compile error", R"(device.driver == 1)", gpu,
       error("found no matching overload")},
      {"list literals compare level by level: an attribute fits a scalar, not a list",
       R"([device.attributes["gpu.nvidia.com"].index] == [1] && [[]] == [[1]])", gpu, kNoMatch},
      {"a list of lists of attributes is no list of ints",
       R"([1] == [[device.attributes["gpu.nvidia.com"].index]])", gpu,
       error("found no matching overload for '_==_'")},
      {"an empty inner list is no int", R"([[]] != [1])", gpu,
       error("found no matching overload for '_!=_'")},
      {"membership compares the element types level by level",
       R"([[device.attributes["gpu.nvidia.com"].index]] in [[1]])", gpu,
       error("found no matching overload for '@in'")},
      {"quantities do not order with <", R"(device.capacity["gpu.nvidia.com"].memory > quantity("1Gi"))", gpu,
       error("found no matching overload for '_>_'")},
      {"undefined device field", R"(device.name == "gpu-0")", gpu, error("undefined field 'name'")},
      {"quantity equality is by value",
       R"(device.capacity["gpu.nvidia.com"].memory == quantity("42949672960"))", gpu, kMatch},
      {"quantity asInteger", R"(device.capacity["gpu.nvidia.com"].memory.asInteger() == 42949672960)", gpu,
       kMatch},
      {"quantity asInteger of a fraction", R"(quantity("1.5").asInteger() == 1)", gpu,
       error("cannot convert value to integer")},
      {"bad quantity literal", R"(sign(quantity("40GB")) == 1)", gpu,
       error("quantities must match the regular expression")},
      {"sign is a global function", R"(quantity("1").sign() == 1)", gpu,
       not_evaluated("function 'sign' with 0 arguments")},
      {"isQuantity", R"(isQuantity("40Gi") && !isQuantity("40GB"))", gpu, kMatch},
      // Strings.
      {"escapes and quotes", R"("a\"b\x41\u00e9\101" == 'a"bAéA' && r"\n" == "\\n" && '''x'y''' == "x'y")",
       gpu, kMatch},
      {"size counts code points", R"(size("é") == 1 && "abc".size() == 3)", gpu, kMatch},
      {"string functions",
       R"(device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA") && device.attributes["gpu.nvidia.com"].productName.endsWith("40GB") && device.attributes["gpu.nvidia.com"].productName.upperAscii().contains("A100-SXM4"))",
       gpu, kMatch},
      {"string function on an int attribute", R"(device.attributes["gpu.nvidia.com"].index.startsWith("0"))",
       gpu, error("no such overload")},
      {"strings order bytewise", R"("B" < "a" && "a" < "ab")", gpu, kMatch},
      {"ternary",
       R"(device.attributes["gpu.nvidia.com"].type == "mig" ? false : device.attributes["gpu.nvidia.com"].index == 0)",
       gpu, kMatch},
      {"negative literals", R"(-9223372036854775808 < -1 && -1.5 < 0.0)", gpu, kMatch},
      {"uint literal", R"(1u < 2 && 2u > 1 && 3u == 3u)", gpu, kMatch},
      {"comments and newlines", "// pick GPUs\ndevice.driver == 'gpu.nvidia.com' // the driver\n", gpu,
       kMatch},
      {"list index", R"([1, 2][1] == 2)", gpu, kMatch},
      {"list index out of bounds", R"([1, 2][2] == 2)", gpu, error("index out of bounds: 2")},
      {"heterogeneous list literal is a compile error", R"(1 in [1, "a"])", gpu,
       error("expected type 'int'")},
      {"cel.bind shadows nothing outside",
       R"(cel.bind(g, device.attributes["gpu.nvidia.com"], g.type == "gpu" && g.index == 0))", gpu, kMatch},
      {"unqualified attribute of another driver is in that driver's domain",
       R"(device.attributes["gpu.nvidia.com"].type == "gpu")",
       device("other.example.com", {{"type", std::string("gpu")}}), error("no such key: type")},
      {"bad version attribute fails the whole device", "true",
       device("gpu.nvidia.com", {{"driverVersion", VersionText{"560.35"}}}),
       error("attribute driverVersion: parse semantic version: No Major.Minor.Patch elements found")},
      {"regex with (?i)", R"(device.attributes["gpu.nvidia.com"].productName.matches("(?i)a100"))", gpu,
       kMatch},
      {"regex classes and counts",
       R"(device.attributes["gpu.nvidia.com"].uuid.matches("^GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$"))",
       gpu, kMatch},
      {"regex dot does not cross a newline", R"("a\nb".matches("a.b"))", gpu, kNoMatch},
      {"regex dot crosses a carriage return as RE2 does", R"("a\rb".matches("a.b"))", gpu, kMatch},
      {"regex alternation", R"(device.attributes["gpu.nvidia.com"].productName.matches("H100|A100"))", gpu,
       kMatch},
      {"global matches", R"(matches(device.attributes["gpu.nvidia.com"].productName, "SXM[45]"))", gpu,
       kMatch},
  };
  for (const auto& row : rows) check(row);
}

TEST_CASE("what the subset leaves out comes back as not evaluated, never as false or an error",
          "[device_cel]") {
  const DeviceView gpu = a100();
  const std::vector<Row> rows{
      {"macro", R"(device.attributes["gpu.nvidia.com"].exists(k, k == "type"))", gpu,
       not_evaluated("macro 'exists'")},
      {"arithmetic", R"(device.attributes["gpu.nvidia.com"].index + 1 == 1)", gpu,
       not_evaluated("arithmetic")},
      {"map literal", R"("a" in {"a": 1})", gpu, not_evaluated("map literals")},
      {"other library function", R"(device.attributes["gpu.nvidia.com"].productName.indexOf("A") > 0)", gpu,
       not_evaluated("function 'indexOf'")},
      {"asApproximateFloat", R"(device.capacity["gpu.nvidia.com"].memory.asApproximateFloat() > 1.0)", gpu,
       not_evaluated("function 'asApproximateFloat'")},
      {"unknown identifier", R"(request.name == "x")", gpu,
       not_evaluated("undeclared reference to 'request'")},
      {"null", R"(device.driver != null)", gpu, not_evaluated("null")},
      {"bytes", R"(b"abc" == b"abc")", gpu, not_evaluated("bytes")},
      {"optional syntax", R"(device.attributes["gpu.nvidia.com"].?type == "gpu")", gpu,
       not_evaluated("optional")},
      {"regex look-ahead", R"x("abc".matches("a(?=b)"))x", gpu, not_evaluated("look-around")},
      {"regex back reference", R"("aa".matches("(a)\\1"))", gpu, not_evaluated("escape \\1")},
      {"regex unicode class", R"("a".matches("\\pL"))", gpu, not_evaluated("escape \\p")},
      {"regex on non-ASCII text", R"("é".matches("^.$"))", gpu, not_evaluated("non-ASCII")},
      {"regex RE2 rejects", R"("a".matches("*a"))", gpu, not_evaluated("missing argument")},
      {"regex huge repeat", R"("a".matches("(a{1000}){1000}"))", gpu, not_evaluated("too large")},
      // An unsupported term still loses to a decisive one, as cel-go's unknowns do.
      {"a pattern computed at run time", R"x(cel.bind(p, "a(?=b)", "ab".matches(p)))x", gpu,
       not_evaluated("look-around")},
      {"not evaluated || true", R"x(cel.bind(p, "a(?=b)", "ab".matches(p) || true))x", gpu, kMatch},
      {"not evaluated && false", R"x(cel.bind(p, "a(?=b)", false && "ab".matches(p)))x", gpu, kNoMatch},
      {"not evaluated beats an error",
       R"x(cel.bind(p, "a(?=b)", device.attributes["gpu.nvidia.com"].x || "a".matches(p)))x", gpu,
       not_evaluated("look-around")},
      {"a version in a list", R"(device.attributes["gpu.nvidia.com"].driverVersion in [semver("560.35.3")])",
       gpu, not_evaluated("list membership")},
  };
  for (const auto& row : rows) check(row);
}

TEST_CASE("limits keep a hostile selector from holding admission", "[device_cel]") {
  const DeviceView gpu = a100();
  SECTION("an expression over 10 KiB is not evaluated") {
    const std::string long_expression = "true" + std::string(10 * 1024, ' ');
    CHECK(evaluate_selector(long_expression, gpu).kind == Kind::kNotEvaluated);
  }
  SECTION("nesting past the depth limit is not evaluated, without exhausting the stack") {
    for (const std::string open : {"(", "!", "[", "-"}) {
      const std::string close = open == "(" ? ")" : (open == "[" ? "]" : "");
      std::string deep;
      for (int i = 0; i < 5000; ++i) deep += open;
      deep += "true";
      for (int i = 0; i < 5000 && !close.empty(); ++i) deep += close;
      INFO(open);
      const auto got = evaluate_selector(deep, gpu);
      CHECK(got.kind == Kind::kNotEvaluated);
      CHECK_THAT(got.message, Catch::Matchers::Contains("nested deeper than 100"));
    }
    std::string chain = "device";
    for (int i = 0; i < 3000; ++i) chain += ".a";
    CHECK(evaluate_selector(chain, gpu).kind == Kind::kNotEvaluated);
  }
  SECTION("a long flat && chain is fine: it is one node") {
    std::string chain = "true";
    for (int i = 0; i < 1000; ++i) chain += " && true";
    CHECK(evaluate_selector(chain, gpu).kind == Kind::kTrue);
  }
  SECTION("quadratic string work runs out of steps and is not evaluated") {
    const std::string big(3800, 'a');
    std::string expression = "cel.bind(s, \"" + big + "b\", s.contains(\"" + big + "c\")";
    for (int i = 0; i < 150; ++i) expression += " || s.contains(s)";
    expression += ")";
    REQUIRE(expression.size() < 10 * 1024);
    const auto got = evaluate_selector(expression, gpu);
    CHECK(got.kind == Kind::kTrue);  // s.contains(s) is true: the first || term that finishes decides
    std::string budget = "cel.bind(s, \"" + big + "\", false";
    for (int i = 0; i < 50; ++i) budget += "||s.contains(s)==false";
    const auto spent = evaluate_selector(budget + ")", gpu);
    CHECK(spent.kind == Kind::kNotEvaluated);
    CHECK_THAT(spent.message, Catch::Matchers::Contains("step budget of 1000000"));
    CHECK(spent.steps > 1'000'000);
    CHECK(spent.steps < 1'300'000);  // it stops at the first step past the budget
  }
  SECTION("a regex that backtracks exponentially elsewhere runs in linear time here") {
    const std::string subject(3000, 'a');
    const auto got = evaluate_selector("\"" + subject + "\".matches(\"^(a|aa)*(a*)*b$\")", gpu);
    CHECK(got.kind == Kind::kFalse);
  }
}

TEST_CASE("a selector compiles once and evaluates against many devices", "[device_cel]") {
  auto compiled = compile_selector(R"(device.attributes['gpu.nvidia.com'].type == 'mig')");
  REQUIRE(compiled.ok());
  CHECK(compiled->not_evaluated().empty());
  CHECK(evaluate(*compiled, mig_1g5gb()).kind == Kind::kTrue);
  CHECK(evaluate(*compiled, a100()).kind == Kind::kFalse);
  const auto copy = *compiled;
  CHECK(evaluate(copy, a100()).kind == Kind::kFalse);

  auto broken = compile_selector("device.driver ==");
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(broken.error().message, Catch::Matchers::Contains("Syntax error"));

  auto unsupported = compile_selector("device.attributes.exists(d, true)");
  REQUIRE(unsupported.ok());
  CHECK_THAT(unsupported->not_evaluated(), Catch::Matchers::StartsWith("not evaluated: macro 'exists'"));
  CHECK(evaluate(*unsupported, a100()).kind == Kind::kNotEvaluated);
}

TEST_CASE("a selector is pinned to a string only where CEL's && makes the equality decide", "[device_cel]") {
  // The pin lets a claim that picks one GPU by uuid skip the other 39,999 devices of 5,000 nodes.
  auto [expression, pin] = GENERATE(table<std::string, std::string>({
      {R"(device.attributes["gpu.nvidia.com"].uuid == "GPU-1")", "gpu.nvidia.com uuid GPU-1"},
      {R"("GPU-1" == device.attributes['gpu.nvidia.com']['uuid'])", "gpu.nvidia.com uuid GPU-1"},
      {R"(device.driver == "gpu.nvidia.com" && (device.attributes["gpu.nvidia.com"].uuid == "GPU-1"))",
       "gpu.nvidia.com uuid GPU-1"},
      {R"(device.attributes["gpu.nvidia.com"].uuid == "GPU-1" || device.driver == "x")", ""},
      {R"(!(device.attributes["gpu.nvidia.com"].uuid == "GPU-1"))", ""},
      {R"(device.attributes["gpu.nvidia.com"].uuid != "GPU-1")", ""},
      {R"(device.attributes["gpu.nvidia.com"].index == 1)", ""},
      {R"(device.attributes["gpu.nvidia.com"].uuid == device.attributes["gpu.nvidia.com"].serial)", ""},
      {R"(cel.bind(d, device.attributes["gpu.nvidia.com"], d.uuid == "GPU-1"))", ""},
      {R"(device.attributes["gpu.nvidia.com"].uuid.lowerAscii() == "gpu-1")", ""},
  }));
  CAPTURE(expression);
  auto compiled = compile_selector(expression);
  REQUIRE(compiled);
  const auto found = gpuadmit::policy::attribute_pin(*compiled);
  CHECK((found ? found->domain + " " + found->name + " " + found->value : "") == pin);
}

TEST_CASE("a pin excludes a device only where evaluating the selector says false", "[device_cel]") {
  using gpuadmit::k8s::Device;
  const auto device = [](const std::string& driver, std::map<std::string, AttributeValue> shared,
                         std::map<std::string, AttributeValue> own) {
    Device d;
    d.name = "gpu-0";
    d.view = std::make_shared<const DeviceView>(DeviceView{driver, false, std::move(shared), {}});
    d.own_attributes = std::move(own);
    return d;
  };
  const std::string nv = "gpu.nvidia.com";
  const std::vector<std::pair<Device, bool>> devices{
      {device(nv, {}, {{"uuid", std::string("GPU-1")}}), false},
      {device(nv, {}, {{"uuid", std::string("GPU-2")}}), true},
      {device(nv, {{"uuid", std::string("GPU-2")}}, {}), true},
      {device(nv, {}, {{"uuid", std::int64_t{7}}}), false},
      {device(nv, {}, {}), false},
      {device(nv, {}, {{"gpu.nvidia.com/uuid", std::string("GPU-2")}}), true},
      // Both keys: the later in key order ("uuid" after "gpu.nvidia.com/uuid") is what the selector reads.
      {device(nv, {{"gpu.nvidia.com/uuid", std::string("GPU-2")}}, {{"uuid", std::string("GPU-1")}}), false},
      {device(nv, {{"gpu.nvidia.com/uuid", std::string("GPU-1")}}, {{"uuid", std::string("GPU-2")}}), true},
      // Another driver's bare uuid is in its own domain; a qualified one is in NVIDIA's.
      {device("other.example.com", {}, {{"uuid", std::string("GPU-2")}}), false},
      {device("other.example.com", {}, {{"gpu.nvidia.com/uuid", std::string("GPU-2")}}), true},
  };
  const auto expression =
      GENERATE(as<std::string>{}, R"(device.attributes["gpu.nvidia.com"].uuid == "GPU-1")",
               R"("GPU-1" == device.attributes["gpu.nvidia.com"]["uuid"])",
               R"(device.attributes["gpu.nvidia.com"].missing > 1 &&
                                      device.attributes["gpu.nvidia.com"].uuid == "GPU-1")");
  CAPTURE(expression);
  auto compiled = compile_selector(expression);
  REQUIRE(compiled);
  const auto pin = gpuadmit::policy::attribute_pin(*compiled);
  REQUIRE(pin);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    CAPTURE(i);
    const bool excluded = gpuadmit::policy::pin_excludes(*pin, devices[i].first);
    CHECK(excluded == devices[i].second);
    if (excluded) CHECK(evaluate(*compiled, devices[i].first.full_view()).kind == Kind::kFalse);
  }
}
