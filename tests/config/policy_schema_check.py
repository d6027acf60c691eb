#!/usr/bin/env python3
"""The policy's JSON Schema agrees with the policy loader.

Usage: policy_schema_check.py GPUADMIT REPO_ROOT

For every policy in the repository (the embedded default, the examples, the test fixtures) and for a table
of broken ones, `gpuadmit policy validate` and the schema (`gpuadmit policy schema`) must give the same
verdict, except where the table says a schema cannot tell (a quantity of zero, one setting against
another). YAML is read as YAML 1.2 reads it, as yaml-language-server and yaml-cpp do (`off` is a string).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import yaml


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML reads YAML 1.1, where on/off/yes/no are booleans; YAML 1.2 has only true and false."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", __import__("re").compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"))

HEAD = "apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nmetadata: {name: t}\nspec:\n"

# (name, spec body indented by 2, loader accepts, schema accepts)
CASES = [
    ("an empty spec", "  rules: {}\n", True, True),
    ("action off is a string in YAML 1.2", "  rules:\n    memory-floor: {action: off}\n", True, True),
    ("a misspelt action", "  rules:\n    memory-floor: {action: enforced}\n", False, False),
    ("an unknown rule", "  rules:\n    memory-flor: {action: warn}\n", False, False),
    ("an unknown parameter", "  rules:\n    memory-floor: {perGPU: 8Gi}\n", False, False),
    ("a quantity that is no quantity", "  rules:\n    memory-floor: {perGpu: eight}\n", False, False),
    ("a bare number as a quantity", "  rules:\n    memory-floor: {perGpu: 8}\n", True, True),
    ("an integer above its range", "  rules:\n    memory-floor: {safetyPercent: 1001}\n", False, False),
    ("an integer below its range", "  rules:\n    shm-size: {percentOfMemory: 0}\n", False, False),
    ("a strategy not among the choices", "  rules:\n    guaranteed-qos: {strategy: raise}\n", False, False),
    ("a section's unknown key", "  rules:\n    guaranteed-qos: {defaults: {cpu: 1}}\n", False, False),
    ("a section's quantity", "  rules:\n    guaranteed-qos: {defaults: {cpuPerGpu: 4}}\n", True, True),
    ("aliases map to lists", "  rules:\n    gpu-type: {aliases: {x: [\"*X*\"]}}\n", True, True),
    ("aliases that map to a string", "  rules:\n    gpu-type: {aliases: {x: X}}\n", False, False),
    ("a toleration with a bad operator",
     "  rules:\n    gpu-tolerations: {tolerations: [{key: a, operator: Is}]}\n", False, False),
    ("a GPU resource without a group", "  gpuResources: [gpu]\n", False, False),
    ("a GPU resource with a star inside", "  gpuResources: [nvidia.com/*-gpu]\n", False, False),
    ("a MIG prefix", "  gpuResources: [nvidia.com/mig-*]\n", True, True),
    ("onStale not among the choices", "  cluster: {onStale: ignore}\n", False, False),
    ("a workload without kinds", "  workloads: [{apiGroup: apps, template: spec.template}]\n", False, False),
    ("a workload that names Pod", "  workloads: [{kinds: [Pod], template: spec.template}]\n", False, False),
    ("a workload template with an empty step",
     "  workloads: [{kinds: [Job], template: spec..template}]\n", False, False),
    ("a list path with selectors",
     "  workloads: [{kinds: [RayCluster], template: \"spec.workerGroupSpecs[groupName=*].template\"}]\n", True, True),
    ("an unclosed list selector",
     "  workloads: [{kinds: [RayCluster], template: \"spec.workerGroupSpecs[*.template\"}]\n", False, False),
    ("a pods list with a replicas object",
     "  workloads:\n    - kinds: [LeaderWorkerSet]\n      pods:\n        - {name: leader, template: spec.a.t}\n"
     "        - template: spec.a.w\n          replicas: {count: $.spec.replicas, times: [$.spec.a.size - 1]}\n",
     True, True),
    ("both template and pods", "  workloads: [{kinds: [X], template: spec.t, pods: [{template: spec.t}]}]\n",
     False, False),
    ("a replicas object without count", "  workloads: [{kinds: [X], template: spec.t, replicas: {min: m}}]\n",
     False, False),
    ("a pods entry with an unknown key", "  workloads: [{kinds: [X], pods: [{template: spec.t, replica: 1}]}]\n",
     False, False),
    ("a preset without a name", "  presets: [{selector: {gpu: true}}]\n", False, False),
    ("a preset with an unknown key", "  presets: [{name: p, selector: {gpu: true}, envs: []}]\n", False, False),
    ("a preset env entry without a name", "  presets: [{name: p, selector: {gpu: true}, env: [{value: x}]}]\n",
     False, False),
    ("a preset", "  presets: [{name: p, selector: {gpu: true}, containers: all, "
     "resources: {limits: {ephemeral-storage: 50Gi}}}]\n", True, True),
    ("an unknown top-level key", "  gpuResource: [nvidia.com/gpu]\n", False, False),
    # What a schema cannot say: the loader is stricter, and the schema's description says so.
    ("a quantity of zero (positive is the loader's check)", "  rules:\n    memory-floor: {perGpu: 0}\n",
     False, True),
    ("shm-size's minimum above its maximum (one setting against another)",
     "  rules:\n    shm-size: {minimum: 8Gi, maximum: 1Gi}\n", False, True),
]


def loader_accepts(gpuadmit, path):
    run = subprocess.run([gpuadmit, "policy", "validate", path], capture_output=True, text=True)
    if run.returncode not in (0, 2):
        sys.exit(f"{path}: gpuadmit policy validate exited {run.returncode}: {run.stderr}")
    return run.returncode == 0, run.stderr.strip()


def schema_errors(validator, path):
    with open(path, encoding="utf-8") as f:
        document = yaml.load(f, Loader=Yaml12Loader)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def main():
    gpuadmit, root = sys.argv[1], sys.argv[2]
    schema = json.loads(subprocess.run([gpuadmit, "policy", "schema"], capture_output=True, text=True,
                                       check=True).stdout)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    failures = []

    files = [os.path.join(root, "src/config/default_policy.yaml"),
             os.path.join(root, "charts/gpuadmit/files/default-policy.yaml")]
    for pattern in ("deploy/policies/*.yaml", "tests/fixtures/policies/*.yaml", "tests/e2e/scenarios/*/policy.yaml"):
        files += sorted(glob.glob(os.path.join(root, pattern)))
    checked = [(os.path.relpath(f, root), f, None) for f in files]

    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, body, loader_ok, schema_ok) in enumerate(CASES):
            path = os.path.join(tmp, f"case{i}.yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(HEAD + body)
            checked.append((name, path, (loader_ok, schema_ok)))
        for name, path, expected in checked:
            loader_ok, loader_message = loader_accepts(gpuadmit, path)
            errors = schema_errors(validator, path)
            schema_ok = not errors
            want = expected if expected is not None else (loader_ok, loader_ok)
            if (loader_ok, schema_ok) != want:
                failures.append(f"{name}: loader {'accepts' if loader_ok else 'rejects'}, schema "
                                f"{'accepts' if schema_ok else 'rejects'}; expected "
                                f"{'accepts' if want[0] else 'rejects'} and "
                                f"{'accepts' if want[1] else 'rejects'}\n    loader: {loader_message}\n"
                                f"    schema: {errors}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{len(checked)} policies, {len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
