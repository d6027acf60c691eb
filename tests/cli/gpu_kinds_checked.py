#!/usr/bin/env python3
"""Every GPU workload of the truth corpus (public manifests from the projects GPU users run) is judged by
`gpuadmit check`: no object that asks for a GPU is "not checked", for want of its kind or because its kind's
paths found no pod in it.

Usage: gpu_kinds_checked.py GPUADMIT MANIFEST_DIR"""
import json
import subprocess
import sys

import yaml

# Kinds that mention GPUs but run no pod: a PodDefault is a patch Kubeflow applies to other pods.
NOT_WORKLOADS = {"PodDefault"}
GPU_MARKERS = ("nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-", "habana.ai/", "gpu.intel.com/")

binary, manifests = sys.argv[1], sys.argv[2]
out = subprocess.run([binary, "check", "-f", manifests, "-o", "json"], capture_output=True, text=True)
if out.returncode not in (0, 1):
    sys.exit(f"gpuadmit check exited {out.returncode}: {out.stderr}")
problems = []
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
    if any(m in json.dumps(doc) for m in GPU_MARKERS):
        problems.append(f"{r['source']}: {r['kind']} {r['name']} asks for a GPU but is not checked: {reason}")
for p in problems:
    print("FAIL", p)
print(f"{len(results)} objects, {len(problems)} GPU workloads not checked")
sys.exit(1 if problems else 0)
