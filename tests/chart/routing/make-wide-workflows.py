#!/usr/bin/env python3
"""Writes DIR/wide-cpu-workflow.yaml and DIR/wide-gpu-workflow.yaml: Argo Workflows of 500 templates, each a
podSpec site with a container, two sidecars, an init container, tolerations and metadata (labels and
annotations), beside a workflow-level podMetadata, tolerations and templateDefaults, none of which is
GPU-related, so the matchConditions must look at every part of every template and every fields and metadata
source. In the second one the last template's container asks for a GPU. They show that the CEL's cost on
such an object stays within the API server's limits (a condition over them is an error, and failurePolicy
Fail refuses the object), as make-wide-rayclusters.py does for pod templates.
About 0.5 MB each, so tests/chart/run.sh writes them to its work directory rather than the repository.
Usage: make-wide-workflows.py DIR"""
import json
import os
import sys

TEMPLATES = 500


def template(i, gpu):
    limits = {"cpu": "4", "memory": "8Gi"}
    if gpu:
        limits["nvidia.com/gpu"] = "1"
    small = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}}
    return {
        "name": f"t{i:03d}",
        "metadata": {"labels": {"step": f"t{i:03d}", "team": "data"},
                     "annotations": {"example.com/owner": "data", "example.com/tier": "batch"}},
        "container": {"image": "registry.invalid/step:1", "command": ["run"],
                      "resources": {"requests": {"cpu": "4", "memory": "8Gi"}, "limits": limits}},
        "sidecars": [{"name": "log", "image": "registry.invalid/fluent-bit:3", "resources": small},
                     {"name": "proxy", "image": "registry.invalid/proxy:1", "resources": small}],
        "initContainers": [{"name": "wait", "image": "registry.invalid/busybox:1", "resources": small}],
        "tolerations": [{"key": "example.com/spot", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "example.com/pool", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
    }


def write(name, gpu_last):
    tolerations = [{"key": "example.com/pool", "operator": "Exists"}, {"key": "example.com/zone", "operator": "Exists"}]
    lines = [f"# Written by tests/chart/routing/make-wide-workflows.py: an Argo Workflow of {TEMPLATES} templates,",
             "# " + ("the last of which asks for a GPU." if gpu_last else "none of which asks for a GPU."),
             "apiVersion: argoproj.io/v1alpha1", "kind: Workflow",
             f"metadata: {{name: {'wide-gpu-workflow' if gpu_last else 'wide-cpu-workflow'}}}", "spec:",
             "  entrypoint: t000",
             f"  tolerations: {json.dumps(tolerations)}",
             f"  templateDefaults: {json.dumps({'tolerations': tolerations})}",
             f"  podMetadata: {json.dumps({'labels': {'app': 'wide'}, 'annotations': {'example.com/owner': 'data'}})}",
             "  templates:"]
    lines += [f"  - {json.dumps(template(i, gpu_last and i == TEMPLATES - 1))}" for i in range(TEMPLATES)]
    with open(os.path.join(sys.argv[1], name), "w") as f:
        f.write("\n".join(lines) + "\n")


write("wide-cpu-workflow.yaml", False)
write("wide-gpu-workflow.yaml", True)
