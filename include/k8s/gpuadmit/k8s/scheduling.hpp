// Scheduling predicates with Kubernetes' semantics: toleration ⇄ taint matching
// (k8s.io/api/core/v1 Toleration.ToleratesTaint) and node selector / required node affinity matching
// (component-helpers nodeaffinity): terms are ORed, expressions within a term ANDed, an empty term
// matches nothing, Gt/Lt compare integers and never match a label that is not one.
#pragma once

#include <span>
#include <string_view>

#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::k8s {

bool tolerates(const Toleration& toleration, const Taint& taint) noexcept;
bool tolerated_by_any(std::span<const Toleration> tolerations, const Taint& taint) noexcept;

// True when the taint keeps pods off the node for scheduling (NoSchedule, NoExecute).
bool blocks_scheduling(const Taint& taint) noexcept;

bool matches(const NodeSelectorRequirement& requirement, const StringMap& labels) noexcept;
bool matches_field(const NodeSelectorRequirement& requirement, std::string_view node_name) noexcept;
bool matches(const NodeSelectorTerm& term, const Node& node) noexcept;

// nodeSelector and required node affinity, as the scheduler's NodeAffinity filter applies them.
bool node_selector_matches(const Pod& pod, const Node& node) noexcept;

}  // namespace gpuadmit::k8s
