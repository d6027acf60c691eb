#include "manifests.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/scope.hpp"

namespace gpuadmit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Result<policy::ClusterSnapshot> load_cluster(const std::string& path) {
  auto objects = read_objects({path});
  if (!objects) return objects.error();
  auto snapshot = policy::snapshot_from_list({{"items", std::move(*objects)}});
  if (!snapshot) return make_error(path + ": " + snapshot.error().message);
  return snapshot;
}

// An object of a document and where it is in it (a JSON Pointer: "" for the document, "/items/3").
struct DocumentObject {
  const json* object;
  std::string pointer;
};

// The objects of a document: a List's items (kubectl accepts a List in one document; so do we), else the
// document itself.
std::vector<DocumentObject> objects_of(const json& document) {
  std::vector<DocumentObject> objects;
  if (document.is_object() && document.value("kind", std::string()) == "List" && document.contains("items") &&
      document["items"].is_array()) {
    const json& items = document["items"];
    for (std::size_t i = 0; i < items.size(); ++i)
      objects.push_back({&items[i], "/items/" + std::to_string(i)});
  } else {
    objects.push_back({&document, ""});
  }
  return objects;
}

// "file:line" of an object; "file:line:column" of the field an error is about, when it names one.
std::string location(const Source& source, const config::Document& doc, const std::string& pointer,
                     bool with_column) {
  const config::Mark mark = config::mark_of(doc, pointer);
  return source.name + ":" + std::to_string(mark.line) +
         (with_column ? ":" + std::to_string(mark.column) : "");
}

}  // namespace

Result<std::vector<Source>> read_sources(const std::vector<std::string>& paths) {
  std::vector<Source> sources;
  const auto read_file = [&](const fs::path& path) -> Result<bool> {
    std::ifstream file(path, std::ios::binary);
    if (!file) return make_error(path.string() + ": cannot open");
    constexpr std::size_t kCap = 8 * 1024 * 1024 + 1;  // one past the limit, so the reader reports it
    std::string text(kCap, '\0');
    file.read(text.data(), static_cast<std::streamsize>(kCap));
    text.resize(static_cast<std::size_t>(file.gcount()));
    sources.push_back({path.string(), std::move(text)});
    return true;
  };
  for (const std::string& path : paths) {
    if (path == "-") {
      std::string text;
      std::array<char, 65536> chunk{};
      std::size_t n = 0;
      while ((n = std::fread(chunk.data(), 1, chunk.size(), stdin)) > 0 &&
             text.size() <= std::size_t{8} * 1024 * 1024) {
        text.append(chunk.data(), n);
      }
      sources.push_back({"<stdin>", std::move(text)});
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
          files.push_back(entry.path());
      }
      if (ec) return make_error(path + ": " + ec.message());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) {
        if (auto r = read_file(f); !r) return r.error();
      }
      continue;
    }
    if (!fs::exists(path, ec)) return make_error(path + ": no such file or directory");
    if (auto r = read_file(path); !r) return r.error();
  }
  return sources;
}

namespace {

// The one object of a policy object file (a ClusterGPUPolicy or GPUPolicy), or null when the file holds
// something else (a Policy: the policy loader reads those, with lines).
Result<std::optional<nlohmann::json>> policy_object_in(const std::string& path) {
  auto sources = read_sources({path});
  if (!sources) return sources.error();
  auto documents = config::read_documents(sources->front().text, path);
  if (!documents) return documents.error();
  if (documents->size() != 1 || !documents->front().object.is_object())
    return std::optional<nlohmann::json>();
  const nlohmann::json& object = documents->front().object;
  const std::string kind = object.value("kind", std::string());
  if (kind != "ClusterGPUPolicy" && kind != "GPUPolicy") return std::optional<nlohmann::json>();
  return std::optional<nlohmann::json>(object);
}

}  // namespace

Result<policy::RuleSet> load_rules(const std::optional<std::string>& policy_path) {
  if (!policy_path) return config::default_rule_set();
  auto object = policy_object_in(*policy_path);
  if (object && *object && (**object)["kind"] == "ClusterGPUPolicy") {
    auto loaded = config::load_policy_object(**object);
    if (!loaded) return make_error("invalid policy:\n" + *policy_path + ": " + loaded.error().message);
    return loaded;
  }
  auto loaded = config::load_policy_file(*policy_path);
  if (!loaded) return make_error("invalid policy:\n" + loaded.error().message);
  return loaded;
}

Result<policy::PolicySet> load_policy_set(policy::RuleSet cluster, const std::vector<std::string>& files,
                                          const std::string& default_namespace,
                                          std::vector<NamespacePolicy>* applied) {
  policy::PolicySet set{std::make_shared<const policy::RuleSet>(std::move(cluster)), {}};
  for (const std::string& file : files) {
    auto object = policy_object_in(file);
    if (!object) return object.error();
    if (!*object || (**object)["kind"] != "GPUPolicy") {
      return make_error(file + ": --namespace-policy takes a file with one GPUPolicy (gpuadmit.io/v1alpha1)");
    }
    nlohmann::json& team = **object;
    if (!team["metadata"].is_object()) team["metadata"] = nlohmann::json::object();
    const std::string ns = team["metadata"].value("namespace", default_namespace);
    team["metadata"]["namespace"] = ns;
    if (set.namespaces.contains(ns)) {
      return make_error(file + ": a second GPUPolicy for namespace " + ns +
                        "; one GPUPolicy per namespace applies (gpuadmit serve keeps the oldest)");
    }
    auto loaded = config::load_policy_object(team, set.cluster.get());
    if (!loaded) return make_error("invalid GPUPolicy:\n" + file + ": " + loaded.error().message);
    set.namespaces[ns] = std::make_shared<const policy::RuleSet>(std::move(*loaded));
    if (applied != nullptr) {
      const nlohmann::json spec = team.value("spec", nlohmann::json::object());
      applied->push_back({ns, team["metadata"].value("name", std::string()),
                          spec.is_object() ? spec.value("rules", nlohmann::json::object()).dump() : "{}"});
    }
  }
  return set;
}

// --cluster's snapshot as the policy sees it; without it, a view with no snapshot.
Result<std::vector<nlohmann::json>> read_objects(const std::vector<std::string>& paths) {
  auto sources = read_sources(paths);
  if (!sources) return sources.error();
  std::vector<nlohmann::json> objects;
  for (const Source& source : *sources) {
    auto documents = config::read_documents(source.text, source.name);
    if (!documents) return documents.error();
    for (config::Document& doc : *documents) {
      if (doc.object.is_object() && doc.object.contains("items") && doc.object["items"].is_array()) {
        for (auto& item : doc.object["items"]) objects.push_back(std::move(item));
      } else {
        objects.push_back(std::move(doc.object));
      }
    }
  }
  return objects;
}

Result<policy::ClusterView> view_of(const nlohmann::json& objects, const std::string& path) {
  auto snapshot = policy::snapshot_from_list({{"items", objects}});
  if (!snapshot) return make_error(path + ": " + snapshot.error().message);
  policy::ClusterView view;
  view.snapshot = std::make_shared<const policy::ClusterSnapshot>(std::move(*snapshot));
  return view;
}

Result<policy::ClusterView> load_view(const std::optional<std::string>& cluster_path) {
  policy::ClusterView view;
  if (!cluster_path) return view;
  auto loaded = load_cluster(*cluster_path);
  if (!loaded) return loaded.error();
  view.snapshot = std::make_shared<const policy::ClusterSnapshot>(std::move(*loaded));
  return view;
}

Result<std::optional<ClusterInput>> load_cluster_input(const std::optional<std::string>& cluster_path) {
  if (!cluster_path) return std::optional<ClusterInput>();
  auto objects = read_objects({*cluster_path});
  if (!objects) return objects.error();
  auto view = view_of(json(*objects), *cluster_path);
  if (!view) return view.error();
  return std::optional<ClusterInput>(ClusterInput{*cluster_path, std::move(*objects), std::move(*view)});
}

namespace {

// The kinds a cluster view holds (policy::snapshot_from_list).
bool held_in_view(std::string_view kind) {
  static constexpr std::array<std::string_view, 9> kHeld{
      "Node",        "ResourceQuota", "StorageClass",  "PersistentVolumeClaim",
      "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
      "NodePool"};
  return std::find(kHeld.begin(), kHeld.end(), kind) != kHeld.end();
}

std::string key_of(const json& object) {
  const json* meta =
      object.contains("metadata") && object["metadata"].is_object() ? &object["metadata"] : nullptr;
  const auto text = [&](const char* member) {
    return meta != nullptr && meta->contains(member) && (*meta)[member].is_string()
               ? (*meta)[member].get<std::string>()
               : std::string();
  };
  return object.value("kind", std::string()) + "/" + text("namespace") + "/" + text("name");
}

// Adds `object` to the cluster as the API server creates it (in `ns` when it names no namespace and is not
// cluster-scoped), replacing an object of the same kind, namespace and name; false when the saved cluster
// cannot take it.
Result<bool> apply_to(ClusterInput& cluster, json object, const std::string& ns, const std::string& source) {
  const std::string kind = object.value("kind", std::string());
  // A saved cluster without the DRA kinds says nothing of them: one template of the input would make it
  // seem to say there are no device classes at all.
  const bool dra = kind == "DeviceClass" || kind == "ResourceSlice" || kind == "ResourceClaim" ||
                   kind == "ResourceClaimTemplate";
  if (dra && (cluster.view.snapshot == nullptr || !cluster.view.snapshot->dra_listed)) return false;
  json& meta = object["metadata"];
  if (meta.is_object() && !meta.contains("namespace") &&
      !k8s::is_cluster_scoped(policy::api_group(object.value("apiVersion", std::string())), kind))
    meta["namespace"] = ns;
  const std::string key = key_of(object);
  std::erase_if(cluster.objects, [&](const json& o) { return key_of(o) == key; });
  cluster.objects.push_back(std::move(object));
  auto view = view_of(json(cluster.objects), source);
  if (!view) {
    cluster.objects.pop_back();
    return view.error();
  }
  cluster.view = std::move(*view);
  return true;
}

}  // namespace

// Every object of every source, checked in order; the first that cannot be read or checked is the error.
Result<std::vector<Located>> check_sources(const std::vector<Source>& sources,
                                           const policy::PolicySet& policies,
                                           const std::string& default_namespace, ClusterInput* cluster) {
  std::vector<Located> results;
  for (const Source& source : sources) {
    auto documents = config::read_documents(source.text, source.name);
    if (!documents) return documents.error();
    for (const config::Document& doc : *documents) {
      for (const DocumentObject& item : objects_of(doc.object)) {
        const nlohmann::json* meta =
            item.object->contains("metadata") ? &(*item.object)["metadata"] : nullptr;
        const std::string ns = meta != nullptr && meta->is_object() && meta->contains("namespace") &&
                                       (*meta)["namespace"].is_string()
                                   ? (*meta)["namespace"].get<std::string>()
                                   : default_namespace;
        auto checked = admission::check_object(*item.object, policies.for_namespace(ns), default_namespace,
                                               cluster != nullptr ? &cluster->view : nullptr);
        if (!checked) {
          const Error& e = checked.error();
          return make_error(location(source, doc, item.pointer + e.pointer, !e.pointer.empty()) + ": " +
                            e.message);
        }
        const std::string at = location(source, doc, item.pointer, false);
        if (cluster != nullptr && item.object->is_object() &&
            held_in_view(item.object->value("kind", std::string()))) {
          auto applied = apply_to(*cluster, checked->fixed, ns, at);
          if (!applied) return applied.error();
          if (*applied && !checked->checked) {
            checked->skipped_reason +=
                "; added to the cluster view, so the objects after it are judged as "
                "kubectl apply -f meets them, with it created first";
          }
        }
        results.push_back({std::move(*checked), at});
      }
    }
  }
  return results;
}

}  // namespace gpuadmit::cli
