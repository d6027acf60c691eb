#!/usr/bin/env python3
"""The chart's webhook lists agree with the default policy, so matchConditions never hide from gpuadmit
an object the policy would fix or deny:
- webhooks.workloads sends every workload kind of the policy's spec.workloads, with the same template paths
  (the policy entry's `template`, or each of its `pods[].template`; the chart entry's `template`, or its
  `templates`; entries naming the same group and resource pool their paths, as the chart's CEL does) and the
  same podSpec sites: path, containers members, the containers' resources member, and the fields and
  metadata refs (the policy's `podSpec`, `containers`, `resources`, `fields` and `metadata`, in the entry or in
  its `pods`; the chart entry's `podSpecs[]` with the same keys), compared after the policy's defaults
  (containers [], resources "resources", fields ["@"], an empty list too, metadata []); `partial` and
  `partialIf` do not change what is sent and have no chart key;
- matchConditions.resourcePrefixes cover spec.gpuResources, imageSubstrings cover gpu-intent's
  imagePatterns, labelKeys its labels, tolerationKeys stray-gpu-toleration's taintKeys, and
  annotationPrefixes checkpoint-pvc's marker.
Usage: check_match_conditions.py CHART_DIR POLICY (the embedded default: `gpuadmit policy default`)"""
import sys

import yaml

chart = sys.argv[1]
values = yaml.safe_load(open(f"{chart}/values.yaml"))
policy = yaml.safe_load(open(sys.argv[2]))["spec"]
webhooks = values["webhooks"]
mc = webhooks["matchConditions"]
rules = policy["rules"]
problems = []


def plural(kind):
    return kind.lower() + "s"


def site(path, p):
    """A podSpec site (the policy's pods[] item or the chart's podSpecs[] item p): its path, the set of its
    containers members, its resources member, and the sets of its fields and metadata refs (which source
    comes first matters to the policy, not to what is sent: the chart tests them all)."""
    return (path, tuple(sorted(set(p.get("containers") or []))), p.get("resources") or "resources",
            tuple(sorted(set(p.get("fields") or ["@"]))), tuple(sorted(set(p.get("metadata") or []))))


sent = {}  # (group, resource) -> (set of template paths, set of podSpec sites)
for w in webhooks["workloads"]:
    if w.get("templates") or w.get("template"):
        paths = w.get("templates") or [w["template"]]
    else:
        paths = [] if w.get("podSpecs") else ["spec.template"]
    sites = {site(p["path"], p) for p in w.get("podSpecs") or []}
    for r in w["resources"]:
        entry = sent.setdefault((w["apiGroup"], r), (set(), set()))
        entry[0].update(paths)
        entry[1].update(sites)
judged = {}  # (group, resource) -> (kind, set of template paths, set of podSpec sites)
for w in policy["workloads"]:
    paths, sites = set(), set()
    for p in [w] if ("template" in w or "podSpec" in w) else w.get("pods", []):
        if "podSpec" in p:
            sites.add(site(p["podSpec"], p))
        elif "template" in p:
            paths.add(p["template"])
    for kind in w["kinds"]:
        key = (w["apiGroup"], plural(kind))
        entry = judged.setdefault(key, (kind, set(), set()))
        entry[1].update(paths)
        entry[2].update(sites)


def show(sites):
    return sorted(f"{path}" + (f" containers [{', '.join(c)}]" if c else "") +
                  (f" resources {r}" if r != "resources" else "") +
                  (f" fields [{', '.join(f)}]" if f != ("@",) else "") +
                  (f" metadata [{', '.join(m)}]" if m else "") for path, c, r, f, m in sites)


for (group, resource), (kind, paths, sites) in judged.items():
    if (group, resource) not in sent:
        problems.append(f"policy workload {group}/{kind} is not in webhooks.workloads (resource {resource})")
        continue
    sent_paths, sent_sites = sent[(group, resource)]
    if sent_paths != paths:
        problems.append(f"{group}/{kind}: webhooks.workloads templates {sorted(sent_paths)}, policy {sorted(paths)}")
    if sent_sites != sites:
        problems.append(f"{group}/{kind}: webhooks.workloads podSpecs {show(sent_sites)}, policy {show(sites)}")

for resource in policy["gpuResources"]:
    name = resource.rstrip("*")
    if not any(name.startswith(p) or p.startswith(name) for p in mc["resourcePrefixes"]):
        problems.append(f"gpuResources {resource}: no matchConditions.resourcePrefixes entry covers it")
for pattern in rules["gpu-intent"]["imagePatterns"]:
    literal = pattern.replace("*", "")
    if not any(s in literal for s in mc["imageSubstrings"]):
        problems.append(f"gpu-intent imagePatterns {pattern}: no matchConditions.imageSubstrings entry is in it")
for label in rules["gpu-intent"].get("labels", {}):
    if label not in mc["labelKeys"]:
        problems.append(f"gpu-intent label {label}: not in matchConditions.labelKeys")
for key in rules["stray-gpu-toleration"]["taintKeys"]:
    if key not in mc["tolerationKeys"]:
        problems.append(f"stray-gpu-toleration taintKeys {key}: not in matchConditions.tolerationKeys")
marker = rules["checkpoint-pvc"]["marker"]
if not any(marker.startswith(p) for p in mc["annotationPrefixes"]):
    problems.append(f"checkpoint-pvc marker {marker}: no matchConditions.annotationPrefixes entry covers it")

for p in problems:
    print(f"FAIL {p}")
print(f"{len(judged)} workload kinds of the policy ({len(sent)} resources sent; "
      f"{sum(len(j[1]) for j in judged.values())} template paths, {sum(len(j[2]) for j in judged.values())} podSpec "
      f"sites) and the matchConditions lists "
      f"checked against the default policy: "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
