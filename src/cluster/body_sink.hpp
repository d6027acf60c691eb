// The HTTPS transport's response body: a watch's 200 stream cut into lines for its handler, anything else
// kept whole, each within its limit. Private to https_transport.cpp; apart so that each file holds one thing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

// Where a response's body goes: a watch's 200 stream, line by line, to its handler; any other body (a get's,
// or a watch's error) into the response, bounded.
class BodySink {
 public:
  BodySink(ApiResponse& response, const WatchCallbacks* watch, std::size_t max_body, std::size_t max_line,
           std::string url)
      : response_(response),
        watch_(watch),
        streaming_(watch != nullptr && response.status == 200),
        max_body_(max_body),
        max_line_(max_line),
        url_(std::move(url)) {}

  [[nodiscard]] bool streaming() const { return streaming_; }
  // The watch's handler asked to stop reading.
  [[nodiscard]] bool handler_stopped() const { return handler_stopped_; }

  Result<bool> consume(const char* data, std::size_t size) {
    return streaming_ ? split_lines(std::string_view(data, size)) : append_body(data, size);
  }

  // Hands the handler a last line that had no '\n'.
  void finish() {
    if (streaming_ && !handler_stopped_ && !line_.empty()) watch_->line(line_);
  }

 private:
  Result<bool> append_body(const char* data, std::size_t size) {
    if (response_.body.size() + size > max_body_) {
      if (watch_ != nullptr) return true;  // an error body: a bounded prefix is enough to report it
      return make_error("response body from " + url_ + " is larger than " + std::to_string(max_body_) +
                        " bytes");
    }
    response_.body.append(data, size);
    return true;
  }

  Result<bool> split_lines(std::string_view rest) {
    while (!rest.empty() && !handler_stopped_) {
      const std::size_t newline = rest.find('\n');
      const std::string_view piece = rest.substr(0, newline);
      if (line_.size() + piece.size() > max_line_) {
        return make_error("watch event from " + url_ + " is larger than " + std::to_string(max_line_) +
                          " bytes");
      }
      line_.append(piece);
      if (newline == std::string_view::npos) break;
      rest.remove_prefix(newline + 1);
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      if (!line_.empty() && !watch_->line(line_)) handler_stopped_ = true;
      line_.clear();
    }
    return true;
  }

  ApiResponse& response_;
  const WatchCallbacks* watch_;
  bool streaming_;
  std::size_t max_body_;
  std::size_t max_line_;
  std::string url_;
  std::string line_;  // the watch event read so far
  bool handler_stopped_ = false;
};

}  // namespace gpuadmit::cluster
