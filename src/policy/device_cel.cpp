// Device selectors: the public entry points (gpuadmit/policy/device_cel.hpp), and the device as
// k8s.io/dynamic-resource-allocation/cel's DeviceMatches hands it to CEL: parseQualifiedName puts a name
// without "domain/" in the driver's domain, and the two outer maps find every domain (an empty map for an
// unknown one).
#include <algorithm>
#include <optional>
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

namespace {

const std::string* string_literal(const cel::Node& n) {
  return n.kind == cel::NodeKind::kLiteral ? std::get_if<std::string>(&n.literal.v) : nullptr;
}

// `device.attributes[<domain>].<name>` or `device.attributes[<domain>][<name>]`, with literal strings: the
// (domain, name) it reads, or nullopt. The term is not inside a cel.bind (pins are top-level terms), so
// `device` is the device.
std::optional<std::pair<std::string, std::string>> attribute_read(const cel::Node& n) {
  const cel::Node* by_domain = nullptr;
  std::string name;
  if (n.kind == cel::NodeKind::kSelect && n.children.size() == 1) {
    by_domain = n.children[0].get();
    name = n.name;
  } else if (n.kind == cel::NodeKind::kIndex && n.children.size() == 2 && string_literal(*n.children[1])) {
    by_domain = n.children[0].get();
    name = *string_literal(*n.children[1]);
  } else {
    return std::nullopt;
  }
  if (by_domain->kind != cel::NodeKind::kIndex || by_domain->children.size() != 2) return std::nullopt;
  const std::string* domain = string_literal(*by_domain->children[1]);
  const cel::Node& attributes = *by_domain->children[0];
  if (domain == nullptr || attributes.kind != cel::NodeKind::kSelect || attributes.name != "attributes" ||
      attributes.children.size() != 1 || attributes.children[0]->kind != cel::NodeKind::kIdent ||
      attributes.children[0]->name != "device")
    return std::nullopt;
  return std::pair{*domain, std::move(name)};
}

std::optional<AttributePin> pin_of(const cel::Node& n) {
  if (n.kind == cel::NodeKind::kAnd) {
    for (const auto& term : n.children) {
      if (auto pin = pin_of(*term)) return pin;
    }
    return std::nullopt;
  }
  if (n.kind != cel::NodeKind::kEquals || n.children.size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const std::string* value = string_literal(*n.children[1 - side]);
    if (value == nullptr) continue;
    if (auto read = attribute_read(*n.children[side]))
      return AttributePin{std::move(read->first), std::move(read->second), *value};
  }
  return std::nullopt;
}

}  // namespace

std::optional<AttributePin> attribute_pin(const CompiledSelector& selector) {
  if (!selector.program_ || !selector.program_->root) return std::nullopt;
  return pin_of(*selector.program_->root);
}

bool pin_excludes(const AttributePin& pin, const k8s::Device& device) {
  // A domain with a slash is not one load() makes ("a/b/c" is domain "a"): no shortcut then.
  if (device.view == nullptr || pin.domain.find('/') != std::string::npos) return false;
  // As the selector reads it (load, above): "domain/name", or "name" of the driver's domain; of two keys
  // that both say it, the later in key order, and a device's own value over its view's. (load() also fails
  // a device whose version attribute does not parse; the API server validates those, so none reach here.)
  const std::string qualified = pin.domain + "/" + pin.name;
  const k8s::AttributeValue* value = device.attribute(qualified);
  if (device.view->driver == pin.domain && pin.name.find('/') == std::string::npos) {
    const k8s::AttributeValue* bare = device.attribute(pin.name);
    if (bare != nullptr && (value == nullptr || pin.name > qualified)) value = bare;
  }
  const auto* text = value != nullptr ? std::get_if<std::string>(value) : nullptr;
  return text != nullptr && *text != pin.value;
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
