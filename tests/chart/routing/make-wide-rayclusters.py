#!/usr/bin/env python3
"""Writes DIR/wide-cpu-raycluster.yaml and DIR/wide-gpu-raycluster.yaml: RayClusters of 500 worker groups, each a
full pod template (two containers with requests and limits, an init container, tolerations, labels and
annotations) that asks for no GPU, so the matchConditions must look at every part of every group. In the
second one the last group asks for a GPU. They show that the CEL's cost on such an object stays within the
API server's limits (a condition over them is an error, and failurePolicy Fail refuses the object).
About 0.5 MB each, so tests/chart/run.sh writes them to its work directory rather than the repository.
Usage: make-wide-rayclusters.py DIR"""
import json
import os
import sys

GROUPS = 500


def group(i, gpu):
    limits = {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "20Gi"}
    if gpu:
        limits["nvidia.com/gpu"] = "1"
    worker = {"name": "ray-worker", "image": "registry.invalid/ray:2.9",
              "resources": {"requests": {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "20Gi"}, "limits": limits}}
    sidecar = {"name": "log", "image": "registry.invalid/fluent-bit:3",
               "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}}}
    init = {"name": "wait", "image": "registry.invalid/busybox:1", "resources": {"limits": {"cpu": "100m", "memory": "32Mi"}}}
    template = {
        "metadata": {"labels": {"app": "ray", "group": f"g{i:03d}", "team": "data"},
                     "annotations": {"example.com/owner": "data", "example.com/cost-center": "42", "example.com/tier": "batch"}},
        "spec": {"containers": [worker, sidecar], "initContainers": [init],
                 "tolerations": [{"key": "example.com/spot", "operator": "Exists", "effect": "NoSchedule"},
                                 {"key": "example.com/pool", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]},
    }
    return {"groupName": f"g{i:03d}", "replicas": 1, "minReplicas": 0, "maxReplicas": 4, "rayStartParams": {},
            "template": template}


def write(name, gpu_last):
    head = {"rayStartParams": {}, "template": {"spec": {"containers": [
        {"name": "ray-head", "image": "registry.invalid/ray:2.9", "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}}]}}}
    lines = [f"# Written by tests/chart/routing/make-wide-rayclusters.py: a RayCluster of {GROUPS} worker groups,",
             "# " + ("the last of which asks for a GPU." if gpu_last else "none of which asks for a GPU."),
             "apiVersion: ray.io/v1", "kind: RayCluster",
             f"metadata: {{name: {'wide-gpu-ray' if gpu_last else 'wide-cpu-ray'}}}", "spec:",
             f"  headGroupSpec: {json.dumps(head)}", "  workerGroupSpecs:"]
    lines += [f"  - {json.dumps(group(i, gpu_last and i == GROUPS - 1))}" for i in range(GROUPS)]
    with open(os.path.join(sys.argv[1], name), "w") as f:
        f.write("\n".join(lines) + "\n")


write("wide-cpu-raycluster.yaml", False)
write("wide-gpu-raycluster.yaml", True)
