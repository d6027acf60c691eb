// gpuadmit's side of the DRA CEL differential test (run.sh): per case line on stdin (dracelref's input,
// {"expression": ..., "device": {...}} with resource.k8s.io/v1 JSON for attributes and capacity), one JSON
// line: {"compile_error": ...}, {"result": bool}, {"error": ...} or {"not_evaluated": ...}.
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace {

using gpuadmit::policy::AttributeValue;
using gpuadmit::policy::DeviceView;
using gpuadmit::policy::SelectorOutcome;
using gpuadmit::policy::VersionText;

DeviceView device_of(const nlohmann::json& j) {
  DeviceView d;
  d.driver = j.value("driver", "");
  d.allow_multiple_allocations = j.value("allowMultipleAllocations", false);
  const nlohmann::json attributes = j.value("attributes", nlohmann::json::object());
  const nlohmann::json capacity = j.value("capacity", nlohmann::json::object());
  for (const auto& [name, a] : attributes.items()) {
    AttributeValue v;
    if (a.contains("int")) {
      v = a["int"].get<std::int64_t>();
    } else if (a.contains("bool")) {
      v = a["bool"].get<bool>();
    } else if (a.contains("string")) {
      v = a["string"].get<std::string>();
    } else {
      v = VersionText{a["version"].get<std::string>()};
    }
    d.attributes.emplace(name, std::move(v));
  }
  for (const auto& [name, c] : capacity.items()) {
    auto q = gpuadmit::k8s::Quantity::parse(c["value"].get<std::string>());
    if (!q) throw std::runtime_error("bad capacity " + name);
    d.capacity.emplace(name, *q);
  }
  return d;
}

}  // namespace

int main() {
  for (std::string line; std::getline(std::cin, line);) {
    const auto c = nlohmann::json::parse(line);
    const std::string expression = c["expression"].get<std::string>();
    nlohmann::json out = nlohmann::json::object();
    auto compiled = gpuadmit::policy::compile_selector(expression);
    if (!compiled) {
      out["compile_error"] = compiled.error().message;
    } else {
      const auto got =
          gpuadmit::policy::evaluate(*compiled, device_of(c.value("device", nlohmann::json::object())));
      switch (got.kind) {
        case SelectorOutcome::Kind::kTrue:
          out["result"] = true;
          break;
        case SelectorOutcome::Kind::kFalse:
          out["result"] = false;
          break;
        case SelectorOutcome::Kind::kError:
          out["error"] = got.message;
          break;
        case SelectorOutcome::Kind::kNotEvaluated:
          out["not_evaluated"] = got.message;
          break;
      }
    }
    std::cout << out.dump() << '\n';
  }
  return 0;
}
