// The body type the server reads requests into: a std::string, as boost::beast::http::string_body, except
// that its reader does not reserve what Content-Length promises. string_body reserves it all as soon as the
// header is read, so a client that promises 7 MiB (under the limit) and then sends a byte a second holds
// 7 MiB for the whole body deadline; with --max-connections such clients, that is gigabytes. Here the string
// grows as bytes arrive (geometrically, as std::string does), from at most kInitialReserve.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>

namespace gpuadmit::server {

struct RequestBody {
  using value_type = std::string;

  // An AdmissionReview of a typical pod is 5 to 20 kB: one or two allocations for most, and no more than
  // this held by a client that promises a large body and sends none of it.
  static constexpr std::uint64_t kInitialReserve = 16 * 1024;

  static std::uint64_t size(const value_type& body) noexcept { return body.size(); }

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>& /*header*/, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& length, boost::beast::error_code& ec) {
      if (length) body_.reserve(static_cast<std::size_t>(std::min(*length, kInitialReserve)));
      ec = {};
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      const std::size_t extra = boost::asio::buffer_size(buffers);
      const std::size_t size = body_.size();
      if (extra > body_.max_size() - size) {
        ec = boost::beast::http::error::buffer_overflow;
        return 0;
      }
      body_.resize(size + extra);
      char* out = body_.data() + size;
      for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
        std::memcpy(out, buffer.data(), buffer.size());
        out += buffer.size();
      }
      ec = {};
      return extra;
    }

    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace gpuadmit::server
