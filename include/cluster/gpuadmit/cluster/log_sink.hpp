// Where the cluster layer's log lines go. The composition root passes a sink that forwards to the
// server's JSON log; the cluster layer does not know that format (nor depend on the server).
#pragma once

#include <functional>
#include <string_view>

#include <spdlog/common.h>
#include <nlohmann/json.hpp>

namespace gpuadmit::cluster {

using LogFields = nlohmann::ordered_json;
using LogSink =
    std::function<void(spdlog::level::level_enum level, std::string_view msg, const LogFields& fields)>;

// Writes "msg {fields}" to spdlog's default logger (stderr for the CLI).
LogSink spdlog_sink();
// Drops everything (tests).
LogSink null_sink();

}  // namespace gpuadmit::cluster
