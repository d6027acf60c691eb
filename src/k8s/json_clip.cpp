#include "gpuadmit/k8s/json_clip.hpp"

namespace gpuadmit::k8s {
namespace {

// The position just past the string that starts at `at` (a '"'), or npos when it does not end.
std::size_t past_string(std::string_view text, std::size_t at) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// The position just past the container that opens at `at`, counting brackets outside strings (whether they
// pair up is the parser's to judge), or npos when it does not close.
std::size_t past_container(std::string_view text, std::size_t at) {
  std::size_t depth = 0;
  for (std::size_t i = at; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = past_string(text, i);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return std::string_view::npos;
}

// Where the first container deeper than `max_depth` opens, or npos.
std::size_t first_too_deep(std::string_view text, std::size_t from, std::size_t depth,
                           std::size_t max_depth) {
  for (std::size_t i = from; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = past_string(text, i);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      if (++depth > max_depth) return i;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
    ++i;
  }
  return std::string_view::npos;
}

}  // namespace

Clipped clip_deep(std::string_view text, std::size_t max_depth) {
  Clipped out;
  std::size_t at = first_too_deep(text, 0, 0, max_depth);
  if (at == std::string_view::npos) {
    out.text.assign(text);
    return out;
  }
  out.text.reserve(text.size());
  std::size_t copied = 0;  // text before this is in out.text
  std::size_t depth = 0;   // of the text copied so far
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = past_string(text, i);
      if (end == std::string_view::npos) break;
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth + 1 > max_depth) {
        const std::size_t end = past_container(text, i);
        if (end == std::string_view::npos) break;  // unterminated: the parser says so
        out.text.append(text.substr(copied, i - copied)).append("null");
        ++out.subtrees;
        copied = i = end;
        continue;
      }
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
    ++i;
  }
  out.text.append(text.substr(copied));
  return out;
}

}  // namespace gpuadmit::k8s
