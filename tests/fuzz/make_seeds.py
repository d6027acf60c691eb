#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs into corpus/<target>/seed-*, from the repository's fixtures and the
truth harness's public manifests (tests/truth/manifests, sources in its SOURCES file). Deterministic: run
it again after a fixture changes and commit what differs. Findings (crash-*, timeout-*) are kept as they
are; only seed-* files are rewritten.

Usage: tests/fuzz/make_seeds.py"""
import base64
import glob
import json
import os
import re

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures")
POD_KINDS = {"Pod"}
WORKLOAD_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "PyTorchJob"}
KIND_GROUPS = {"Pod": ("", "v1", "pods"), "Deployment": ("apps", "v1", "deployments"),
               "ReplicaSet": ("apps", "v1", "replicasets"), "StatefulSet": ("apps", "v1", "statefulsets"),
               "DaemonSet": ("apps", "v1", "daemonsets"), "Job": ("batch", "v1", "jobs"),
               "CronJob": ("batch", "v1", "cronjobs"), "PyTorchJob": ("kubeflow.org", "v1", "pytorchjobs")}


def docs(pattern):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
        with open(path) as f:
            try:
                for d in yaml.safe_load_all(f):
                    if isinstance(d, dict) and d.get("kind"):
                        yield os.path.splitext(os.path.basename(path))[0], d
            except yaml.YAMLError:
                continue


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, "seed-" + re.sub(r"[^A-Za-z0-9.-]+", "-", name)), "wb") as f:
        f.write(data)


def review(obj, uid):
    group, version, resource = KIND_GROUPS[obj["kind"]]
    meta = obj.get("metadata") or {}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": group, "version": version, "kind": obj["kind"]},
                        "resource": {"group": group, "version": version, "resource": resource},
                        "namespace": meta.get("namespace", "default"), "operation": "CREATE",
                        "userInfo": {"username": "fuzz"}, "object": obj, "dryRun": False}}


def clear():
    for path in glob.glob(os.path.join(HERE, "corpus", "*", "seed-*")):
        os.remove(path)


def main():
    clear()
    sources = list(docs("tests/fixtures/pods/*.yaml")) + list(docs("tests/fixtures/workloads/*.yaml")) + \
        list(docs("tests/truth/manifests/*.yaml"))
    quantities = set()
    for i, (name, d) in enumerate(sources):
        kind = d["kind"]
        if kind in KIND_GROUPS:
            write("review", "%s-%s" % (name, kind.lower()), json.dumps(review(d, "fuzz-%d" % i), separators=(",", ":")))
        if kind in POD_KINDS:
            write("pod", name, json.dumps(d, indent=1))
        for q in re.findall(r'"(?:cpu|memory|ephemeral-storage|storage|[a-z0-9.-]+/[a-z0-9.-]+)": "([^"]+)"', json.dumps(d)):
            quantities.add(q)
        write("json", name + "-" + kind.lower(), json.dumps(d))
    for path in sorted(glob.glob(os.path.join(FIX, "fuzz", "quantity", "*.hex"))):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and re.fullmatch(r"[0-9a-fA-F]*", line) and len(line) % 2 == 0:
                    quantities.add(bytes.fromhex(line).decode("utf-8", "replace"))
    quantities |= {"1", "0.5", "500m", "1Ki", "1.5Gi", "100E", "9223372036854775807", "1e3", "-0.5", "1n", "999Ei"}
    for i, q in enumerate(sorted(quantities)):
        write("quantity", "%03d" % i, q)
    write("quantity", "pair", "16Gi\n3")

    for name, d in docs("tests/fixtures/cluster/*.yaml"):
        items = d.get("items") if d.get("kind", "").endswith("List") else [d]
        by_kind = {}
        for it in items or []:
            by_kind.setdefault(it.get("kind"), []).append(it)
        for index, kind in enumerate(["Node", "ResourceQuota", "StorageClass", "PersistentVolumeClaim"]):
            objs = by_kind.get(kind) or []
            if not objs:
                continue
            lines = []
            for j, o in enumerate(objs):
                o = json.loads(json.dumps(o))
                o.setdefault("metadata", {})["resourceVersion"] = str(10 + j)
                lines.append(json.dumps({"type": "ADDED", "object": o}, separators=(",", ":")))
            lines.append(json.dumps({"type": "MODIFIED", "object": objs[0]}, separators=(",", ":")))
            lines.append(json.dumps({"type": "BOOKMARK", "object": {"kind": kind, "metadata": {"resourceVersion": "99"}}}))
            lines.append(json.dumps({"type": "DELETED", "object": objs[-1]}, separators=(",", ":")))
            write("watch", "%s-%s" % (name, kind.lower()), bytes([index]) + "\n".join(lines).encode())
    write("watch", "error-410", bytes([0]) + b'{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}}')

    pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZmFrZQ==\n-----END CERTIFICATE-----\n"
    ca = base64.b64encode(pem.encode()).decode()
    base = ("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
            "    server: %s\n    certificate-authority-data: " + ca + "\n%s"
            "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n%s")
    write("kubeconfig", "token", base % ("https://127.0.0.1:6443", "", "    token: abc\n"))
    write("kubeconfig", "client-cert", base % ("https://[::1]:6443/prefix", "    tls-server-name: kubernetes\n",
                                               "    client-certificate-data: %s\n    client-key-data: %s\n" % (ca, ca)))
    write("kubeconfig", "token-file", base % ("https://api.example:443", "", "    tokenFile: token\n"))
    write("kubeconfig", "exec-refused", base % ("https://127.0.0.1:6443", "",
                                                "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1\n"))

    # YAML the loaders must survive: anchors and aliases (shared, not copied), flow style, several documents.
    with open(os.path.join(ROOT, "src", "config", "default_policy.yaml")) as f:
        write("policy", "default-policy", f.read())
    head = "apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nmetadata: {name: seed}\n"
    write("policy", "aliases", head + "spec:\n  rules:\n    shm-size: &d {action: warn}\n    memory-floor: *d\n")
    write("policy", "flow", head + "spec: {gpuResources: [nvidia.com/gpu], rules: {node-fit: {action: enforce}}}\n")
    write("policy", "documents", "---\nkind: Pod\n---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n")


if __name__ == "__main__":
    main()
