"""The cases of check_diff_rules.py: gpuadmit check over the truth corpus per policy and cluster profile,
and the users' own edits that must still show after normalization."""

import copy
import json
import os
import re
import subprocess
import concurrent.futures


from argo_normalize import *  # noqa: F401,F403


# --------------------------------------------------------------------------------------------------------
# The cases: gpuadmit check over the corpus, per policy and cluster profile.


# Kinds that gpuadmit's view holds: with --cluster, a file with one of them is checked alone, as the truth
# harness applies each manifest alone (`check -f DIR` is one apply: a Node or a claim of one file would reach
# the others' view).
VIEW_KINDS = {"Node", "PersistentVolumeClaim", "PersistentVolume", "ResourceClaim", "ResourceClaimTemplate",
              "DeviceClass", "ResourceSlice", "ResourceQuota", "StorageClass", "LimitRange", "PriorityClass",
              "Namespace"}


def gpuadmit_runs(root, gpuadmit, manifests_rel, policies, clusters):
    sources, alone, together = {}, [], []
    for name in sorted(os.listdir(os.path.join(root, manifests_rel))):
        if name.endswith((".yaml", ".yml", ".json")):
            rel = os.path.join(manifests_rel, name)
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                objs = load_sources(rel, f.read())
            sources.update(objs)
            (alone if any(o.get("kind") in VIEW_KINDS for o in objs.values()) else together).append(rel)
    jobs = []
    for pol in policies:
        for clu in clusters:
            base = [gpuadmit, "check", "-o", "json"]
            if pol:
                base += ["--policy", pol]
            if clu:
                base += ["--cluster", clu]
            # Without --cluster nothing is added to a view, so one invocation holds every file.
            files = [[f] for f in alone] + [together] if clu else [alone + together]
            for fs in files:
                cmd = list(base)
                for f in fs:
                    cmd += ["-f", f]
                jobs.append((pol or "default", clu or "no view", cmd))

    def run(job):
        r = subprocess.run(job[2], cwd=root, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            raise SystemExit("%s: exit %d\n%s" % (" ".join(job[2]), r.returncode, r.stderr[-2000:]))
        return job[0], job[1], json.loads(r.stdout)["results"]
    with concurrent.futures.ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as ex:
        runs = list(ex.map(run, jobs))
    return sources, runs, len(jobs)


def rule_of_path(path, fixes):
    """The rule id of a patch path: the fix whose field is the path or holds it, else the audit trail."""
    if path.endswith("gpuadmit.io~1mutated-by") or path.endswith("/annotations") or path.endswith("/metadata"):
        return "(audit trail: gpuadmit.io/mutated-by)"
    if path.endswith("gpuadmit.io~1applied"):
        return "presets"
    dotted = re.sub(r"/(\d+)(?=/|$)", r"[\1]", path.rstrip("-").rstrip("/")).strip("/").replace("/", ".")
    dotted = dotted.replace("~1", "/").replace("~0", "~")
    best = None
    for f in fixes:
        fld = f["field"]
        if dotted == fld or dotted.startswith(fld + ".") or dotted.startswith(fld + "[") or fld.startswith(dotted + "."):
            if best is None or len(fld) > len(best["field"]):
                best = f
    return best["rule"] if best else "(unattributed)"


# --------------------------------------------------------------------------------------------------------
# Users' own changes that must still show after normalization.


def walk(v, path=()):
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from walk(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk(x, path + (i,))


def get_in(v, path):
    for p in path:
        v = v[p]
    return v


GPU_KEY = re.compile(r"^(nvidia\.com/(gpu|mig-)|amd\.com/gpu)")


def user_changes(obj):
    """(name, changed copy) of git edits a user may make that gpuadmit never makes."""
    out = []
    nodes = list(walk(obj))
    for path, v in nodes:  # the first container image
        if isinstance(v, dict) and isinstance(v.get("image"), str) and "spec" in path:
            o = copy.deepcopy(obj)
            get_in(o, path)["image"] = v["image"] + "-user-edit"
            out.append(("image", o))
            break
    for path, v in nodes:  # a pod spec's own toleration with another key
        if isinstance(v, dict) and isinstance(v.get("containers"), list) and v["containers"]:
            o = copy.deepcopy(obj)
            spec = get_in(o, path)
            spec["tolerations"] = list(spec.get("tolerations") or []) + [
                {"key": "example.com/dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}]
            out.append(("toleration example.com/dedicated", o))
            o = copy.deepcopy(obj)
            spec = get_in(o, path)
            spec["volumes"] = list(spec.get("volumes") or []) + [{"name": "data", "emptyDir": {}}]
            out.append(("volume data", o))
            break
    for path, v in nodes:  # the GPU count
        if isinstance(v, dict) and path and path[-1] in ("requests", "limits"):
            keys = [k for k in v if GPU_KEY.match(str(k))]
            if keys:
                o = copy.deepcopy(obj)
                res = get_in(o, path[:-1])
                for side in ("requests", "limits"):
                    if isinstance(res.get(side), dict) and keys[0] in res[side]:
                        res[side][keys[0]] = "7"
                out.append(("GPU count", o))
                break
    return out


def cpu_edit(obj):
    for path, v in walk(obj):
        if isinstance(v, dict) and path and path[-1] in ("requests", "limits") and "cpu" in v:
            o = copy.deepcopy(obj)
            get_in(o, path)["cpu"] = "777m"
            return o
    return None


def is_gpu_object(obj):
    for path, v in walk(obj):
        if isinstance(v, dict) and path and path[-1] in ("requests", "limits"):
            if any(GPU_KEY.match(str(k)) for k in v):
                return True
        if path and path[-1] == "resourceClaims" and v:
            return True
    return False
