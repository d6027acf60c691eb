#include "gpuadmit/cluster/dump.hpp"

#include "gpuadmit/cluster/reflector.hpp"

namespace gpuadmit::cluster {

Result<Dump> dump_cluster(ApiTransport& transport, std::stop_token stop, std::size_t page_size) {
  Dump dump;
  nlohmann::json items = nlohmann::json::array();
  for (const Kind kind : kAllKinds) {
    int status = 0;
    auto listed = list_all(transport, kind, page_size, stop, &status);
    if (!listed && unavailable_answer(kind, status)) {
      dump.unavailable.push_back({kind, listed.error().message, status});
      continue;
    }
    if (!listed) return listed.error();
    for (nlohmann::json& item : listed->items) {
      if (!item.is_object()) continue;
      item["apiVersion"] = info(kind).api_version;
      item["kind"] = info(kind).kind;
      if (auto meta = item.find("metadata"); meta != item.end() && meta->is_object())
        meta->erase("managedFields");
      items.push_back(std::move(item));
      ++dump.counts[index(kind)];
    }
  }
  dump.list = {{"apiVersion", "v1"},
               {"kind", "List"},
               {"items", std::move(items)},
               {"metadata", {{"resourceVersion", ""}}}};
  return dump;
}

}  // namespace gpuadmit::cluster
