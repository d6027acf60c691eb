#include "yaml_load.hpp"

#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

namespace gpuadmit::config {

namespace {

// Sees only where each document starts: a document that starts where the one before it did means the
// parser made no progress, and would make none on the next call either.
class ProgressCheck final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (started_ && mark.pos == last_start_.pos) {
      throw YAML::ParserException(mark, "unexpected token here (a stray ','?); nothing can follow it");
    }
    started_ = true;
    last_start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {}
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {}
  void OnMapEnd() override {}

 private:
  bool started_ = false;
  YAML::Mark last_start_;
};

}  // namespace

std::vector<YAML::Node> load_all(const std::string& text) {
  // The events first (cheap: no nodes are built), then the nodes, once the events are known to end.
  std::istringstream events_in(text);
  YAML::Parser parser(events_in);
  ProgressCheck check;
  while (parser.HandleNextDocument(check)) {
  }
  return YAML::LoadAll(text);
}

}  // namespace gpuadmit::config
