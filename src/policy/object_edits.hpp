// ObjectEdits: the fixes of one review, kept as edited copies of the few parts of the object they touch
// (a container's resources, the spec's tolerations, the annotations, ...). Private to the policy layer.
//
// Why parts and not a copy of the object: a pod spec with its env, probes and volumes is hundreds of
// values, and copying it, diffing it and re-reading it after every fix would touch all of them for a fix
// that changes one part. A part is copied when a rule first edits it, re-read into the typed view alone,
// and diffed alone; the patch is the one a whole-object diff would give, operation for operation and in
// the same order.
#pragma once

#include <algorithm>
#include <list>
#include <map>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "json_diff.hpp"

namespace gpuadmit::policy {

class ObjectEdits {
 public:
  // The object must outlive the edits.
  explicit ObjectEdits(const k8s::JsonValue& source) : source_(&source) {}
  // The index points into the parts: a copy would point into the original's.
  ObjectEdits(const ObjectEdits&) = delete;
  ObjectEdits& operator=(const ObjectEdits&) = delete;
  ObjectEdits(ObjectEdits&&) noexcept = default;
  ObjectEdits& operator=(ObjectEdits&&) noexcept = default;

  // The part's copy to edit: made from the source on first use (null when the source has no such member).
  // References stay valid while other parts are added.
  nlohmann::json& edit(const k8s::PodPart& address);
  // A new, null item at the end of a list part (a container's volumeMounts, the spec's tolerations or
  // volumes), to fill in before the next append to the same part. When the source has a list there, only the
  // new items are kept: the list is neither copied, nor re-read, nor diffed (each item is an "add …/-").
  // Otherwise the part is edited as a whole, starting from an empty list.
  nlohmann::json& append(const k8s::PodPart& address);
  // The part as it stands now: the edited copy, else the source's value, else null.
  [[nodiscard]] nlohmann::json current(const k8s::PodPart& address) const;

  [[nodiscard]] bool empty() const noexcept { return parts_.empty(); }
  // Whether a part was handed out for editing since the last refresh.
  [[nodiscard]] bool stale() const noexcept {
    return std::any_of(parts_.begin(), parts_.end(), [](const Part& part) { return part.stale; });
  }
  // Re-reads every part edited since the last refresh into `pod`, with parse_pod's checks.
  Result<bool> refresh(k8s::Pod& pod);

  // The JSON Patch from the source to the source with every part replaced.
  [[nodiscard]] nlohmann::json patch() const;
  // The source with every part replaced: what the patch produces (for checks, not the request path).
  [[nodiscard]] nlohmann::json applied() const;

 private:
  struct Part {
    k8s::PodPart address;
    nlohmann::json value;  // the whole part, or (appended_only) the items after the source's list
    bool stale = true;
    bool appended_only = false;
    std::size_t read_back = 0;  // appended_only: items already read into the typed pod
  };
  // The part's whole value: the source's list and the appended items, for an appended_only part.
  [[nodiscard]] nlohmann::json whole(const Part& part) const;
  // The part at `address`, or null; and a new one, indexed.
  [[nodiscard]] Part* find(const k8s::PodPart& address) const;
  Part& add(Part part);

  using Key = std::tuple<k8s::PodPart::Scope, std::string_view, std::size_t, std::string_view>;
  static Key key_of(const k8s::PodPart& a) { return {a.scope, a.array, a.index, a.member}; }

  const k8s::JsonValue* source_;
  std::list<Part> parts_;  // a list: edit() hands out references that must survive later additions
  // By address: a pod of 30,000 containers gets a part or more per container, and a linear search per edit
  // made /mutate quadratic (12.8 s at 30,000).
  std::map<Key, Part*> index_;
};

// Part addresses, as rules name them.
inline k8s::PodPart container_part(const k8s::Container& c, std::string_view member) {
  return {k8s::PodPart::Scope::kContainer, c.array_name(), c.index, member};
}
inline k8s::PodPart spec_part(std::string_view member) {
  return {k8s::PodPart::Scope::kSpec, {}, 0, member};
}
inline k8s::PodPart metadata_part(std::string_view member) {
  return {k8s::PodPart::Scope::kMetadata, {}, 0, member};
}

}  // namespace gpuadmit::policy
