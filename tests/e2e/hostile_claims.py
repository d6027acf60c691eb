#!/usr/bin/env python3
"""The objects of faults.sh's hostile-claim row (#47 items 2 and 7), written as JSON into OUT_DIR:

  fleet.json      NODES fake DRA-only nodes (tainted, never scheduled on), the DeviceClass gpu.nvidia.com
                  and one ResourceSlice per node of DEVICES GPUs, each with its own uuid (the attribute a
                  device carries alone, so a selector naming it is evaluated on every device)
  counted-repeats.json, costly-uuid.json
                  tenants' ResourceClaimTemplates "hostile" (one file each; the row applies each and keeps
                  the ones the API server accepts): security-review-2026-12.md H2's 32 selectors of counted
                  repeats on uuid and productName, and bench/dra_review_bench.cpp's 32 selectors of 50
                  backtracking matches() each, both with allocationMode All
  hostile-pod.json
                  a pod of one container using the claim made from the template "hostile"

Usage: tests/e2e/hostile_claims.py OUT_DIR [NODES] [DEVICES]
"""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 40
devices = int(sys.argv[3]) if len(sys.argv) > 3 else 64
out.mkdir(parents=True, exist_ok=True)

fleet = []
for n in range(nodes):
    name = f"hostile-dra-{n}"
    fleet.append({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "gpuadmit.io/faults": "hostile-claim"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "64", "memory": "512Gi", "pods": "110"},
                   "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    })
fleet.append({
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com", "labels": {"gpuadmit.io/faults": "hostile-claim"}},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]},
})
for n in range(nodes):
    node = f"hostile-dra-{n}"
    fleet.append({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu.nvidia.com", "labels": {"gpuadmit.io/faults": "hostile-claim"}},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{k}",
                              "attributes": {"type": {"string": "gpu"},
                                             "uuid": {"string": f"GPU-{n}-{k}"},
                                             "productName": {"string": "NVIDIA H100 80GB HBM3"},
                                             "driverVersion": {"version": "580.95.5"}},
                              "capacity": {"memory": {"value": "80Gi"}}} for k in range(devices)]},
    })
(out / "fleet.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": fleet}))


def template(selectors):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "hostile"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "allocationMode": "All",
                "selectors": [{"cel": {"expression": s}} for s in selectors]}}]}}}}


repeat = "matches('^([A-Za-z0-9 -]{1,64}){1,16}$')"
counted = (f"device.attributes['gpu.nvidia.com'].uuid.{repeat} && "
           f"device.attributes['gpu.nvidia.com'].productName.{repeat}")
(out / "counted-repeats.json").write_text(json.dumps(template([counted] * 32)))
costly = "cel.bind(uuid, \"" + "a" * 3800 + "\", false" + "||uuid.matches('(a|aa)*b')" * 50 + ")"
(out / "costly-uuid.json").write_text(json.dumps(template([costly] * 32)))

(out / "hostile-pod.json").write_text(json.dumps({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "hostile-"},
    "spec": {"schedulerName": "gpuadmit-faults-nobody", "terminationGracePeriodSeconds": 0,
             "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
             "containers": [{"name": "main", "image": "registry.invalid/train:1",
                             "resources": {"claims": [{"name": "gpu"}]}}],
             "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "hostile"}]}}))
