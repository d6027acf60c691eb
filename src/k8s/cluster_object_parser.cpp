// The cluster's objects the policy reads: Node, ResourceQuota, StorageClass, PersistentVolumeClaim (a
// claim is also an object under review) and Karpenter's NodePool. They arrive as nlohmann::json (the cluster
// view's cache, the
// --cluster file, a claim under review), so unlike the pod they are read in that form only.
#include "gpuadmit/k8s/cluster_object_parser.hpp"

#include <nlohmann/json.hpp>

#include "field_readers.hpp"

namespace gpuadmit::k8s {
namespace fields {
namespace {

using nlohmann::json;

// `taints` of a Node's spec or of a NodePool's node template.
std::vector<Taint> taints_at(const json& spec, const Path& spec_path) {
  std::vector<Taint> out;
  if (const json* taints = array_at(spec, "taints", spec_path)) {
    for (std::size_t i = 0; i < taints->size(); ++i) {
      const Path p = (spec_path / "taints")[i];
      out.push_back({string_at((*taints)[i], "key", p), string_at((*taints)[i], "value", p),
                     string_at((*taints)[i], "effect", p)});
    }
  }
  return out;
}

Node parse_node_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "node", "an object", object);
  Node node;
  const ObjectMeta meta = parse_meta(object, root);
  node.name = meta.name;
  node.labels = meta.labels;
  if (const json* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    if (const json* unschedulable = member(*spec, "unschedulable", spec_path)) {
      if (!is_boolean(*unschedulable)) fail(spec_path / "unschedulable", "a boolean", *unschedulable);
      node.unschedulable = boolean(*unschedulable);
    }
    node.taints = taints_at(*spec, spec_path);
  }
  if (const json* status = object_at(object, "status", root)) {
    const Path status_path = root / "status";
    node.allocatable =
        resource_list(object_at(*status, "allocatable", status_path), status_path / "allocatable");
    if (const json* conditions = array_at(*status, "conditions", status_path)) {
      for (std::size_t i = 0; i < conditions->size(); ++i) {
        const Path conditions_path = status_path / "conditions";
        const Path p = conditions_path[i];
        if (string_at((*conditions)[i], "type", p) == "Ready")
          node.ready = string_at((*conditions)[i], "status", p) == "True";
      }
    }
  }
  return node;
}

ResourceQuota parse_quota_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "resourcequota", "an object", object);
  ResourceQuota quota;
  const ObjectMeta meta = parse_meta(object, root);
  quota.namespace_ = meta.namespace_;
  quota.name = meta.name;
  if (const json* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    quota.hard = resource_list(object_at(*spec, "hard", spec_path), spec_path / "hard");
    quota.scopes = string_list(array_at(*spec, "scopes", spec_path), spec_path / "scopes");
    if (const json* selector = object_at(*spec, "scopeSelector", spec_path)) {
      const Path selector_path = spec_path / "scopeSelector";
      if (const json* list = array_at(*selector, "matchExpressions", selector_path)) {
        for (std::size_t i = 0; i < list->size(); ++i) {
          const Path p = (selector_path / "matchExpressions")[i];
          quota.scope_selector.push_back({string_at((*list)[i], "scopeName", p),
                                          string_at((*list)[i], "operator", p),
                                          string_list(array_at((*list)[i], "values", p), p / "values")});
        }
      }
    }
  }
  if (const json* status = object_at(object, "status", root)) {
    if (const json* hard = object_at(*status, "hard", root / "status")) {
      quota.hard = resource_list(hard, root / "status" / "hard");  // the enforced values, when reported
    }
    quota.used = resource_list(object_at(*status, "used", root / "status"), root / "status" / "used");
  }
  return quota;
}

StorageClass parse_storage_class_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "storageclass", "an object", object);
  const ObjectMeta meta = parse_meta(object, root);
  StorageClass sc;
  sc.name = meta.name;
  sc.provisioner = string_at(object, "provisioner", root);
  for (const char* key :
       {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"}) {
    const auto it = meta.annotations.find(key);
    if (it != meta.annotations.end() && it->second == "true") sc.is_default = true;
  }
  return sc;
}

PersistentVolumeClaim parse_claim_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "persistentvolumeclaim", "an object", object);
  PersistentVolumeClaim claim;
  claim.meta = parse_meta(object, root);
  if (const json* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    if (const json* sc = member(*spec, "storageClassName", spec_path)) {
      if (!sc->is_string()) fail(spec_path / "storageClassName", "a string", *sc);
      claim.storage_class = std::string(text(*sc));
    }
    if (const json* resources = object_at(*spec, "resources", spec_path)) {
      const ResourceRequirements r = requirements(resources, spec_path / "resources");
      if (const auto it = r.requests.find("storage"); it != r.requests.end()) claim.request = it->second;
    }
  }
  if (const json* status = object_at(object, "status", root)) {
    claim.phase = string_at(*status, "phase", root / "status");
    const ResourceList capacity =
        resource_list(object_at(*status, "capacity", root / "status"), root / "status" / "capacity");
    if (const auto it = capacity.find("storage"); it != capacity.end()) claim.capacity = it->second;
  }
  return claim;
}

// Karpenter's v1 schema; v1beta1 had the same template fields. Requirements' minValues (how many instance
// types to keep in reserve) does not change whether a node could carry the pod.
NodePool parse_node_pool_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "nodepool", "an object", object);
  NodePool pool;
  pool.name = parse_meta(object, root).name;
  if (const json* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    pool.limits = resource_list(object_at(*spec, "limits", spec_path), spec_path / "limits");
    if (const json* tmpl = object_at(*spec, "template", spec_path)) {
      const Path tmpl_path = spec_path / "template";
      if (const json* meta = object_at(*tmpl, "metadata", tmpl_path))
        pool.labels =
            string_map(object_at(*meta, "labels", tmpl_path / "metadata"), tmpl_path / "metadata" / "labels");
      if (const json* node = object_at(*tmpl, "spec", tmpl_path)) {
        const Path node_path = tmpl_path / "spec";
        pool.requirements =
            requirements_list(array_at(*node, "requirements", node_path), node_path / "requirements");
        pool.taints = taints_at(*node, node_path);
      }
    }
  }
  if (const json* status = object_at(object, "status", root))
    pool.used =
        resource_list(object_at(*status, "resources", root / "status"), root / "status" / "resources");
  return pool;
}

}  // namespace
}  // namespace fields

using nlohmann::json;

Result<ResourceQuota> parse_resource_quota(const json& object) {
  return fields::guarded<ResourceQuota>([&] { return fields::parse_quota_or_throw(object); });
}

Result<StorageClass> parse_storage_class(const json& object) {
  return fields::guarded<StorageClass>([&] { return fields::parse_storage_class_or_throw(object); });
}

Result<PersistentVolumeClaim> parse_persistent_volume_claim(const json& object) {
  return fields::guarded<PersistentVolumeClaim>([&] { return fields::parse_claim_or_throw(object); });
}

Result<Node> parse_node(const json& object) {
  return fields::guarded<Node>([&] { return fields::parse_node_or_throw(object); });
}

Result<NodePool> parse_node_pool(const json& object) {
  return fields::guarded<NodePool>([&] { return fields::parse_node_pool_or_throw(object); });
}

Result<ResourceList> parse_resource_list(const json& list, const std::string& path) {
  return fields::guarded<ResourceList>([&] {
    return fields::resource_list(&list, fields::Path{nullptr, path});
  });
}

}  // namespace gpuadmit::k8s
