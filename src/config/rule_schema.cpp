#include "rule_schema.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace gpuadmit::config::schema {
namespace {

using policy::Action;

Json toleration_values(const std::vector<k8s::Toleration>& tolerations) {
  Json out = Json::array();
  for (const k8s::Toleration& t : tolerations) {
    Json one = Json::object();
    if (!t.key.empty()) one["key"] = t.key;
    one["operator"] = t.op.empty() ? "Equal" : t.op;
    if (!t.value.empty()) one["value"] = t.value;
    if (!t.effect.empty()) one["effect"] = t.effect;
    if (t.toleration_seconds) one["tolerationSeconds"] = *t.toleration_seconds;
    out.push_back(std::move(one));
  }
  return out;
}

// A ParameterReader that records what it is asked for instead of reading it: each key becomes a property
// with the type of the call that asked, and the value it was handed (the default) as its default.
class SchemaParameters final : public policy::ParameterReader {
 public:
  SchemaParameters(const PolicyDescriptions& docs, std::string path) : docs_(docs), path_(std::move(path)) {}
  SchemaParameters(const SchemaParameters&) = delete;
  SchemaParameters& operator=(const SchemaParameters&) = delete;
  SchemaParameters(SchemaParameters&&) = delete;
  SchemaParameters& operator=(SchemaParameters&&) = delete;
  ~SchemaParameters() override = default;

  [[nodiscard]] Json schema() const {
    Json properties = properties_;
    for (const auto& [key, section] : sections_) properties[key] = section->schema();
    return described(closed_object(std::move(properties)), docs_, path_);
  }

  void action(std::string_view key, Action& out) override {
    add(key, {{"type", "string"},
              {"enum", Json::array({"enforce", "warn", "audit", "off"})},
              {"default", policy::to_string(out)}});
  }
  void quantity(std::string_view key, k8s::Quantity& out) override {
    Json s = schema::quantity();
    s["default"] = out.to_string();
    add(key, std::move(s));
  }
  void integer(std::string_view key, std::int64_t min, std::int64_t max, std::int64_t& out) override {
    add(key, {{"type", "integer"}, {"minimum", min}, {"maximum", max}, {"default", out}});
  }
  void string(std::string_view key, std::string& out) override {
    add(key, {{"type", "string"}, {"default", out}});
  }
  void strings(std::string_view key, std::vector<std::string>& out) override {
    Json s = string_list();
    s["default"] = out;
    add(key, std::move(s));
  }
  void string_map(std::string_view key, std::string_view /*what*/, k8s::StringMap& out) override {
    Json s = schema::string_map();
    Json values = Json::object();
    for (const auto& [k, v] : out) values[k] = v;
    s["default"] = std::move(values);
    add(key, std::move(s));
  }
  void string_lists(std::string_view key, std::string_view /*what*/, policy::StringLists& out) override {
    Json s = {{"type", "object"}, {"additionalProperties", string_list()}};
    Json values = Json::object();
    for (const auto& [k, v] : out) values[k] = v;
    s["default"] = std::move(values);
    add(key, std::move(s));
  }
  void tolerations(std::string_view key, std::vector<k8s::Toleration>& out) override {
    Json s = schema::tolerations();
    s["default"] = toleration_values(out);
    add(key, std::move(s));
  }
  std::optional<std::size_t> one_of(std::string_view key, std::span<const std::string_view> names) override {
    Json choices = Json::array();
    for (const std::string_view name : names) choices.push_back(name);
    add(key, {{"type", "string"}, {"enum", std::move(choices)}});
    return std::nullopt;
  }
  ParameterReader* section(std::string_view key) override {
    auto& section =
        sections_.emplace_back(std::string(key), std::make_unique<SchemaParameters>(docs_, path_of(key)));
    return section.second.get();
  }
  // A check across settings (shm-size's minimum below its maximum): the loader's, not the schema's.
  void error(std::string /*what*/) override {}

 private:
  [[nodiscard]] std::string path_of(std::string_view key) const { return path_ + "." + std::string(key); }
  void add(std::string_view key, Json schema) {
    properties_[std::string(key)] = described(std::move(schema), docs_, path_of(key));
  }

  const PolicyDescriptions& docs_;
  std::string path_;
  Json properties_ = Json::object();
  std::vector<std::pair<std::string, std::unique_ptr<SchemaParameters>>> sections_;
};

}  // namespace

Json rule_schema(const policy::RuleEntry& rule, const policy::RuleSet& defaults,
                 const PolicyDescriptions& docs) {
  SchemaParameters parameters(docs, "spec.rules." + std::string(rule.id));
  policy::RuleSet values = defaults;  // the readers write what they read into it; nothing is read here
  rule.read(parameters, values);
  return parameters.schema();
}

}  // namespace gpuadmit::config::schema
