#!/usr/bin/env python3
"""Every GPU workload of the truth corpus (public manifests from the projects GPU users run) is judged by
`gpuadmit check`: no object that asks for a GPU is "not checked", for want of its kind or because its kind's
paths found no pod in it.

Usage: gpu_kinds_checked.py GPUADMIT MANIFEST_DIR"""
import json
import subprocess
import sys

import yaml

# Kinds that mention GPUs but run no pod: a PodDefault is a patch Kubeflow applies to other pods, a Kueue
# ClusterQueue a quota, a Node (KWOK's fake one) or a DeviceClass what pods are placed on, llmaz's OpenModel a
# model's metadata (its Playground makes the pods).
NOT_WORKLOADS = {"PodDefault", "ClusterQueue", "Node", "DeviceClass", "OpenModel"}
# Workload kinds of 2026 the default policy does not know yet: issue #51 adds them (a default entry for those
# with pod templates, GPU demand in their own terms for the others). Listed, so that the test still fails on
# any other kind, and printed, so that the gap stays visible.
KNOWN_GAPS = {
    "DynamoGraphDeployment": "NVIDIA Dynamo (v1beta1 spec.components[name=*].podTemplate; v1alpha1 its own terms)",
    "Workspace": "KAITO (inference.template, top level; presets by instanceType)",
    "StormService": "AIBrix (spec.template.spec.roles[name=*].template)",
    "Service": "llmaz's inference.llmaz.io Service (leader and worker templates)",
    "PodCliqueSet": "Grove (spec.template.cliques[name=*].spec.podSpec)",
    "Experiment": "Katib (spec.trialTemplate.trialSpec, with ${trialParameters.*} placeholders)",
    "ClusterServingRuntime": "OME's ome.io ClusterServingRuntime (engine and decoder configs)",
    "SparkApplication": "Spark operator (driver/executor gpu: {name, quantity})",
    "VLLMRuntime": "vLLM production-stack operator (its own resource fields)",
}
GPU_MARKERS = ("nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-", "habana.ai/", "gpu.intel.com/")

binary, manifests = sys.argv[1], sys.argv[2]
out = subprocess.run([binary, "check", "-f", manifests, "-o", "json"], capture_output=True, text=True)
if out.returncode not in (0, 1):
    sys.exit(f"gpuadmit check exited {out.returncode}: {out.stderr}")
problems, gaps = [], []
results = json.loads(out.stdout)["results"]
for r in results:
    reason = r.get("skippedReason", "")
    # Excluded namespaces (kube-system's device plugins) are the policy's choice, not a kind left out.
    if r["checked"] or "is excluded by the policy" in reason or r["kind"] in NOT_WORKLOADS:
        continue
    path, line = r["source"].rsplit(":", 1)
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]
    doc = next((d for d in docs if d.get("kind") == r["kind"] and d.get("metadata", {}).get("name") == r["name"]), {})
    if not any(m in json.dumps(doc) for m in GPU_MARKERS):
        continue
    if r["kind"] in KNOWN_GAPS:
        gaps.append(f"{r['source']}: {r['kind']} {r['name']}: {KNOWN_GAPS[r['kind']]}")
    else:
        problems.append(f"{r['source']}: {r['kind']} {r['name']} asks for a GPU but is not checked: {reason}")
for g in gaps:
    print("GAP (#51)", g)
for p in problems:
    print("FAIL", p)
print(f"{len(results)} objects, {len(problems)} GPU workloads not checked, {len(gaps)} of kinds #51 adds")
sys.exit(1 if problems else 0)
