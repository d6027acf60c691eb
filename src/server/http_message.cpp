#include "gpuadmit/server/http_message.hpp"

#include <algorithm>
#include <cctype>

namespace gpuadmit::server {

Response text_response(int status, std::string body) {
  if (!body.empty() && body.back() != '\n') body += '\n';
  return Response{status, "text/plain; charset=utf-8", std::move(body), {}};
}

std::string_view path_of(std::string_view target) noexcept {
  return target.substr(0, target.find_first_of("?#"));
}

bool is_json_media_type(std::string_view content_type) noexcept {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  constexpr std::string_view kJson = "application/json";
  return media.size() == kJson.size() &&
         std::equal(media.begin(), media.end(), kJson.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace gpuadmit::server
