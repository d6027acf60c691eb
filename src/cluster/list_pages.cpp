// The paged LIST (reflector.hpp's list_pages, list_pages_at, list_all) and api_text.hpp.
#include <algorithm>
#include <cctype>

#include "api_text.hpp"
#include "gpuadmit/cluster/reflector.hpp"
#include "gpuadmit/k8s/json_clip.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::cluster {

using nlohmann::json;

std::string percent_encode(std::string_view text) {
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((std::isalnum(u) != 0) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4U]);
      out.push_back(kHex[u & 0xFU]);
    }
  }
  return out;
}

Result<json> parse_api_json(std::string_view text, std::size_t& clipped) {
  k8s::Clipped shallow = k8s::clip_deep(text, kMaxJsonDepth);
  clipped += shallow.subtrees;
  return k8s::parse_json(shallow.text, {shallow.text.size(), kMaxJsonDepth});
}

std::string describe_status(int status, const std::string& body) {
  std::string out = "HTTP " + std::to_string(status);
  auto parsed = k8s::parse_json(body, {1U << 20U, kMaxJsonDepth});
  if (parsed && parsed->is_object()) {
    const auto message = parsed->find("message");
    if (message != parsed->end() && message->is_string()) return out + ": " + message->get<std::string>();
  }
  if (!body.empty()) out += ": " + body.substr(0, kLoggedLineBytes);
  return out;
}

Result<std::string> list_pages(ApiTransport& transport, Kind kind, std::size_t page_size,
                               std::stop_token stop, const std::function<void(json&& item)>& on_item,
                               int* status, std::size_t max_pages, std::size_t* clipped) {
  const std::size_t cap = info(kind).max_page_size;
  return list_pages_at(transport, info(kind).path, info(kind).resource,
                       cap != 0 ? std::min(page_size, cap) : page_size, std::move(stop), on_item, status,
                       max_pages, clipped);
}

Result<std::string> list_pages_at(ApiTransport& transport, std::string_view path,
                                  std::string_view resource_name, std::size_t page_size, std::stop_token stop,
                                  const std::function<void(json&& item)>& on_item, int* status,
                                  std::size_t max_pages, std::size_t* clipped) {
  std::size_t deep = 0;
  const std::string resource(resource_name);
  std::string continue_token;
  for (std::size_t page = 0; page < max_pages; ++page) {
    std::string target = std::string(path) + "?limit=" + std::to_string(page_size);
    if (!continue_token.empty()) target += "&continue=" + percent_encode(continue_token);
    auto response = transport.get(target, stop);
    if (!response) return make_error("LIST " + resource + ": " + response.error().message);
    if (status != nullptr) *status = response->status;
    if (response->status != 200) {
      return make_error("LIST " + resource + ": " + describe_status(response->status, response->body));
    }
    auto body = parse_api_json(response->body, deep);
    if (clipped != nullptr) *clipped = deep;
    response->body = std::string();  // the text is not needed once parsed
    if (!body || !body->is_object()) {
      return make_error("LIST " + resource + ": not a JSON object" +
                        (body ? std::string() : ": " + body.error().message));
    }
    const auto items = body->find("items");
    if (items != body->end() && !items->is_null() && !items->is_array()) {
      return make_error("LIST " + resource + ": items is not a list");
    }
    std::string resource_version;
    std::string next;
    if (const auto meta = body->find("metadata"); meta != body->end() && meta->is_object()) {
      resource_version = meta->value("resourceVersion", std::string());
      next = meta->value("continue", std::string());
    }
    if (items != body->end() && items->is_array()) {
      for (json& item : *items) on_item(std::move(item));
    }
    if (next.empty()) return resource_version;
    continue_token = std::move(next);
  }
  return make_error("LIST " + resource + ": more than " + std::to_string(max_pages) + " pages");
}

Result<ListResult> list_all(ApiTransport& transport, Kind kind, std::size_t page_size, std::stop_token stop,
                            int* status) {
  ListResult out;
  auto rv = list_pages(
      transport, kind, page_size, stop, [&](json&& item) { out.items.push_back(std::move(item)); }, status);
  if (!rv) return rv.error();
  out.resource_version = std::move(*rv);
  return out;
}

}  // namespace gpuadmit::cluster
