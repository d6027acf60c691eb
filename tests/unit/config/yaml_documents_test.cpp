#include <catch2/catch.hpp>

#include "gpuadmit/config/yaml_documents.hpp"

using gpuadmit::config::read_documents;
using gpuadmit::config::YamlLimits;

TEST_CASE("multi-document YAML yields one JSON object per non-empty document", "[yaml]") {
  auto docs = read_documents("a: 1\n---\n---\nb: two\n", "m.yaml");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  CHECK(docs->at(0).object["a"] == 1);
  CHECK(docs->at(1).object["b"] == "two");
}

TEST_CASE("a JSON Pointer into a document gives the line and column of its value", "[yaml]") {
  const char* text = R"(apiVersion: v1
kind: List
items:
  - kind: Pod
    spec:
      containers:
        - name: train
          resources:
            limits: {nvidia.com/gpu: [1], "a~b": 2}
---
{"kind": "Pod", "spec": {"containers": []}}
)";
  auto docs = read_documents(text, "m.yaml");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  auto [doc, pointer, line, column] = GENERATE(table<int, const char*, int, int>({
      {0, "", 1, 1},
      {0, "/items/0", 4, 5},
      {0, "/items/0/spec/containers/0/name", 7, 17},
      {0, "/items/0/spec/containers/0/resources/limits/nvidia.com~1gpu", 9, 38},
      {0, "/items/0/spec/containers/0/resources/limits/a~0b", 9, 50},
      // Missing members and indexes out of range stop at the deepest value that exists.
      {0, "/items/0/spec/containers/0/image", 7, 11},
      {0, "/items/7/spec", 4, 3},
      {0, "/items/x", 4, 3},
      {1, "/spec/containers", 11, 40},
  }));
  CAPTURE(pointer);
  const gpuadmit::config::Mark mark = gpuadmit::config::mark_of(docs->at(doc), pointer);
  CHECK(mark.line == line);
  CHECK(mark.column == column);
}

TEST_CASE("a document made without text marks every pointer at its first line", "[yaml]") {
  const gpuadmit::config::Document doc{nlohmann::json::object(), 3, nullptr};
  const gpuadmit::config::Mark mark = gpuadmit::config::mark_of(doc, "/spec");
  CHECK(mark.line == 3);
  CHECK(mark.column == 1);
}

TEST_CASE("scalars resolve as kubectl resolves them", "[yaml]") {
  auto docs = read_documents(
      "int: 2\nfrac: 0.5\nexp: 1e3\nquoted: \"2\"\nyes_word: yes\nnull_word: ~\nstr: 16Gi\nhex: 0x10\n",
      "s.yaml");
  REQUIRE(docs.ok());
  const auto& o = docs->front().object;
  CHECK(o["int"] == 2);
  CHECK(o["frac"] == 0.5);
  CHECK(o["exp"] == 1000.0);
  CHECK(o["quoted"] == "2");
  CHECK(o["yes_word"] == true);
  CHECK(o["null_word"].is_null());
  CHECK(o["str"] == "16Gi");
  CHECK(o["hex"] == 16);
}

TEST_CASE("hostile or broken YAML gets a clear error, never a crash", "[yaml]") {
  auto [text, fragment] = GENERATE(table<std::string, std::string>({
      {std::string(100000, '[') + std::string(100000, ']'), "nesting deeper than 64"},
      {"a: [1, 2\n", "y.yaml:"},
      {"a: 1\na: 2\n", "y.yaml:2:1: duplicate key \"a\""},
      {"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
       "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
       "more than 1000000 nodes"},
      {"? [a, b]\n: c\n", "mapping keys must be strings"},
      // yaml-cpp 0.7's LoadAll loops forever, allocating, on a stray ',' at document level (fuzz finding
      // tests/fuzz/corpus/policy/crash-yaml-cpp-*).
      {",", "y.yaml:1:1: unexpected token here"},
      {"- a\n,\n", "y.yaml:2:1: unexpected token here"},
      {std::string(",\0\0\0", 4), "y.yaml:1:1:"},
  }));
  auto docs = read_documents(text, "y.yaml");
  REQUIRE_FALSE(docs.ok());
  CHECK_THAT(docs.error().message, Catch::Contains(fragment));
}

TEST_CASE("documents over the size limit are refused with the limit", "[yaml]") {
  auto docs = read_documents(std::string(100, 'a'), "big.yaml", YamlLimits{64, 64, 1000});
  REQUIRE_FALSE(docs.ok());
  CHECK_THAT(docs.error().message, Catch::Contains("100 bytes exceeds the limit of 64 bytes"));
}

TEST_CASE("to_yaml output reads back to the same JSON", "[yaml]") {
  const nlohmann::json value = nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"gpu-training": "true", "n": "2"}, "annotations": {}},
    "spec": {"containers": [{"name": "a", "args": ["--x=1", "- y", "#z", ""], "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": 2}}}],
             "tolerations": [], "priority": null, "enabled": false}
  })");
  auto docs = read_documents(gpuadmit::config::to_yaml(value), "roundtrip.yaml");
  REQUIRE(docs.ok());
  CHECK(docs->front().object == value);
}

// An Argo workflow's steps are a list of lists of maps.
TEST_CASE("to_yaml writes lists of lists that read back to the same JSON", "[yaml]") {
  const nlohmann::json value = nlohmann::json::parse(R"({
    "steps": [[{"name": "train", "template": "train"}, {"name": "eval", "template": "eval"}], [{"name": "report"}]],
    "matrix": [[1, 2], [[3], []], [{}]]
  })");
  auto docs = read_documents(gpuadmit::config::to_yaml(value), "lists.yaml");
  REQUIRE(docs.ok());
  CHECK(docs->front().object == value);
}
