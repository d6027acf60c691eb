#include "gpuadmit/k8s/json_output.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "json_chars.hpp"

namespace gpuadmit::k8s {
namespace {

using nlohmann::json;

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), result.ptr);
}

// A string that needs no escape, quoted: one resize and a copy, not three appends. Most strings (keys, names,
// quantities) are this.
void append_plain_string(std::string& out, std::string_view text) {
  const std::size_t at = out.size();
  out.resize(at + text.size() + 2);
  char* to = out.data() + at;
  to[0] = '"';
  if (!text.empty()) std::memcpy(to + 1, text.data(), text.size());
  to[text.size() + 1] = '"';
}

// The escape of an ASCII byte that skip_plain_ascii stops at: a quote, a backslash or a control character.
void append_escaped(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default: {  // the other control characters, as nlohmann prints them: \u001f
      constexpr std::string_view kHex = "0123456789abcdef";
      out += "\\u00";
      out.push_back(kHex[c >> 4U]);
      out.push_back(kHex[c & 0xFU]);
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view text, InvalidUtf8 invalid) {
  const char* p = text.data();
  const char* const end = p + text.size();
  if (skip_plain_ascii(p, end) == end) {
    append_plain_string(out, text);
    return;
  }
  out.push_back('"');
  while (p != end) {
    const char* run = p;
    p = skip_plain_ascii(p, end);
    out.append(run, p);
    if (p == end) {
      break;
    }
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x80) {
      append_escaped(out, c);
      ++p;
      continue;
    }
    const std::ptrdiff_t length = utf8_sequence_length(p, end);
    if (length > 0) {
      out.append(p, static_cast<std::size_t>(length));
      p += length;
      continue;
    }
    if (invalid == InvalidUtf8::kThrow) {
      (void)json(std::string(text)).dump();  // throws type_error 316 with nlohmann's own message
      return;                                // not reached: dump() throws on invalid UTF-8
    }
    out += "\\ufffd";
    ++p;
  }
  out.push_back('"');
}

void append_json(std::string& out, const nlohmann::json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const json::object_t&>()) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        append_json_string(out, key);
        out.push_back(':');
        append_json(out, member);
      }
      out.push_back('}');
      return;
    }
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const json& element : value.get_ref<const json::array_t&>()) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        append_json(out, element);
      }
      out.push_back(']');
      return;
    }
    case json::value_t::string:
      append_json_string(out, value.get_ref<const std::string&>());
      return;
    case json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case json::value_t::null:
      out += "null";
      return;
    case json::value_t::number_integer:
      append_integer(out, value.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      append_integer(out, value.get<std::uint64_t>());
      return;
    case json::value_t::number_float:
    case json::value_t::binary:
    case json::value_t::discarded:
      out += value.dump();
      return;
  }
}

std::string json_text(const nlohmann::json& value) {
  std::string out;
  append_json(out, value);
  return out;
}

void append_pointer_token(std::string& path, std::string_view token) {
  path.push_back('/');
  if (std::none_of(token.begin(), token.end(), [](char c) { return c == '~' || c == '/'; })) {
    path.append(token);  // most keys need no escape: one append, not a push_back per byte
    return;
  }
  for (const char c : token) {
    if (c == '~') {
      path += "~0";
    } else if (c == '/') {
      path += "~1";
    } else {
      path.push_back(c);
    }
  }
}

}  // namespace gpuadmit::k8s
