#include "gpuadmit/cluster/log_sink.hpp"

#include <spdlog/spdlog.h>

namespace gpuadmit::cluster {

LogSink spdlog_sink() {
  return [](spdlog::level::level_enum level, std::string_view msg, const LogFields& fields) {
    if (fields.empty()) {
      spdlog::log(level, "{}", msg);
    } else {
      spdlog::log(level, "{} {}", msg, fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  };
}

LogSink null_sink() {
  return [](spdlog::level::level_enum, std::string_view, const LogFields&) {};
}

}  // namespace gpuadmit::cluster
