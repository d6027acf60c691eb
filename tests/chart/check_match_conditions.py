#!/usr/bin/env python3
"""The chart's webhook lists agree with the default policy, so matchConditions never hide from gpuadmit
an object the policy would fix or deny:
- webhooks.workloads sends every workload kind of the policy's spec.workloads, with the same template path;
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


sent = {}  # (group, resource) -> template
for w in webhooks["workloads"]:
    for r in w["resources"]:
        sent[(w["apiGroup"], r)] = w.get("template", "spec.template")
for w in policy["workloads"]:
    for kind in w["kinds"]:
        key = (w["apiGroup"], plural(kind))
        if key not in sent:
            problems.append(f"policy workload {w['apiGroup']}/{kind} is not in webhooks.workloads")
        elif sent[key] != w["template"]:
            problems.append(f"{w['apiGroup']}/{kind}: webhooks.workloads template {sent[key]!r}, policy {w['template']!r}")

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
print(f"{len(sent)} workload resources and the matchConditions lists checked against the default policy: "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
