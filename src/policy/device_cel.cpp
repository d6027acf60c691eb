// Device selectors: the public entry points (gpuadmit/policy/device_cel.hpp), and the device as
// k8s.io/dynamic-resource-allocation/cel's DeviceMatches hands it to CEL: parseQualifiedName puts a name
// without "domain/" in the driver's domain, and the two outer maps find every domain (an empty map for an
// unknown one).
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "device_cel_ast.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy {
namespace cel {
namespace {

std::pair<std::string, std::string> split_qualified(const std::string& name, const std::string& driver) {
  const std::size_t slash = name.find('/');
  if (slash == std::string::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

// As DeviceMatches builds its input: a version attribute that does not parse fails the whole device.
Result<bool> load(const DeviceView& view, DeviceData& data) {
  data.driver = view.driver;
  data.allow_multiple_allocations = view.allow_multiple_allocations;
  for (const auto& [name, attribute] : view.attributes) {
    Value value;
    if (const auto* i = std::get_if<std::int64_t>(&attribute)) {
      value.v = *i;
    } else if (const auto* b = std::get_if<bool>(&attribute)) {
      value.v = *b;
    } else if (const auto* s = std::get_if<std::string>(&attribute)) {
      value.v = *s;
    } else {
      auto version = parse_semver(std::get<VersionText>(attribute).text, false);
      if (!version)
        return make_error("attribute " + name + ": parse semantic version: " + version.error().message);
      value.v = *std::move(version);
    }
    auto [domain, id] = split_qualified(name, view.driver);
    data.attributes[domain][id] = std::move(value);
  }
  for (const auto& [name, quantity] : view.capacity) {
    auto [domain, id] = split_qualified(name, view.driver);
    data.capacity[domain][id] = Value{quantity};
  }
  for (const auto& [domain, map] : data.attributes)
    data.attributes_by_domain[domain] = Value{MapRef{&map, false}};
  for (const auto& [domain, map] : data.capacity)
    data.capacity_by_domain[domain] = Value{MapRef{&map, false}};
  return true;
}

// What one selector makes of one device, in at most `limit` steps.
SelectorOutcome run_selector(const Program& program, const DeviceView& device, std::int64_t limit) {
  using Kind = SelectorOutcome::Kind;
  cel::DeviceData data;
  if (auto loaded = load(device, data); !loaded) return {Kind::kError, loaded.error().message, 0};
  Evaluation result = run(program, data, limit);
  switch (result.state) {
    case Evaluation::State::kError:
      return {Kind::kError, std::move(result.message), result.steps};
    case Evaluation::State::kNotEvaluated:
      return {Kind::kNotEvaluated, std::move(result.message), result.steps};
    case Evaluation::State::kValue:
      break;
  }
  if (const auto* b = std::get_if<bool>(&result.value.v))
    return {*b ? Kind::kTrue : Kind::kFalse, {}, result.steps};
  // DeviceMatches adds ConvertToNative's error, worded by each type (seen through tests/differential/dracel).
  const std::string type = type_name(result.value);
  std::string why;
  if (type == "int" || type == "uint") {
    why = "unsupported type conversion from '" + type + "' to bool";
  } else if (type == "double") {
    why = "type conversion error from Double to 'bool'";
  } else if (type == "string") {
    why = "unsupported native conversion from string to 'bool'";
  } else if (type == "kubernetes.Quantity" || type == "kubernetes.Semver") {
    why = "type conversion error from '" + type.substr(11) + "' to 'bool'";
  } else {
    why = "type conversion error from " + type + " to 'bool'";
  }
  return {Kind::kError, "CEL result of type " + type + " could not be converted to bool: " + why,
          result.steps};
}

}  // namespace
}  // namespace cel

Result<CompiledSelector> compile_selector(std::string_view expression) {
  CompiledSelector out;
  out.expression_ = std::string(expression);
  if (expression.size() > kMaxSelectorLength) {
    // The API server rejects the object; nothing this webhook says about it matters.
    out.not_evaluated_ = "not evaluated: longer than " + std::to_string(kMaxSelectorLength) + " bytes";
    return out;
  }
  auto compiled = cel::compile_program(expression);
  if (auto* stop = std::get_if<cel::CompileStop>(&compiled)) {
    if (!stop->unsupported) return make_error(stop->message);
    out.not_evaluated_ = stop->message;
    return out;
  }
  out.program_ = std::make_shared<const cel::Program>(std::get<cel::Program>(std::move(compiled)));
  return out;
}

CompiledSelector not_compiled(std::string_view expression, std::string why) {
  CompiledSelector out;
  out.expression_ = std::string(expression);
  out.not_evaluated_ = std::move(why);
  return out;
}

SelectorOutcome evaluate(const CompiledSelector& selector, const DeviceView& device) {
  return evaluate(selector, device, nullptr);
}

SelectorOutcome evaluate(const CompiledSelector& selector, const DeviceView& device, ReviewBudget* review) {
  using Kind = SelectorOutcome::Kind;
  if (!selector.program_)
    return {Kind::kNotEvaluated,
            selector.not_evaluated_.empty() ? "not evaluated: not compiled" : selector.not_evaluated_, 0};
  std::int64_t limit = kSelectorStepBudget;
  if (review != nullptr) {
    const std::int64_t left = review->allowance();
    if (left <= 0) return {Kind::kNotEvaluated, review->exhausted(), 0};
    limit = std::min(limit, left);
  }
  SelectorOutcome out = cel::run_selector(*selector.program_, device, limit);
  if (review != nullptr) {
    review->spend(out.steps);
    // Stopped by what was left of the review's budget, not by its own: the review's reason is the true one.
    if (out.kind == Kind::kNotEvaluated && limit < kSelectorStepBudget && out.steps > limit)
      out.message = review->exhausted();
  }
  return out;
}

SelectorOutcome evaluate_selector(std::string_view expression, const DeviceView& device) {
  auto compiled = compile_selector(expression);
  if (!compiled) return {SelectorOutcome::Kind::kError, compiled.error().message, 0};
  return evaluate(*compiled, device);
}

}  // namespace gpuadmit::policy
