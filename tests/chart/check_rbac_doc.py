#!/usr/bin/env python3
"""The chart's ClusterRole rules equal the RBAC manifest documented (and tested by the cluster e2e suite)
in docs/cluster.md under <!-- rbac -->, followed, when the server runs with --policy-objects, by the rules
under <!-- rbac-policy-objects -->. Usage: check_rbac_doc.py RENDERED.yaml docs/cluster.md"""
import re
import sys
import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
# The server's ClusterRole; the uninstall hook's (helm.sh/hook) is checked by check_manifests.py.
rendered = [d for d in docs if d["kind"] == "ClusterRole" and "helm.sh/hook" not in d["metadata"].get("annotations", {})]
policy_objects = any("--policy-objects" in c.get("args", []) for d in docs if d["kind"] == "Deployment"
                     for c in d["spec"]["template"]["spec"]["containers"])
doc = open(sys.argv[2]).read()


def documented_rules(marker):
    m = re.search(r"<!-- " + marker + r" -->\s*```yaml\n(.*?)```", doc, re.S)
    if not m:
        sys.exit(f"no <!-- {marker} --> yaml block in {sys.argv[2]}")
    roles = [d for d in yaml.safe_load_all(m.group(1)) if d and d["kind"] == "ClusterRole"]
    if len(roles) != 1:
        sys.exit(f"want one ClusterRole under <!-- {marker} -->, got {len(roles)}")
    return roles[0]["rules"]


want = documented_rules("rbac") + (documented_rules("rbac-policy-objects") if policy_objects else [])
if len(rendered) != 1:
    sys.exit(f"want one ClusterRole in the chart, got {len(rendered)}")
if rendered[0]["rules"] != want:
    sys.exit(f"chart ClusterRole rules {rendered[0]['rules']} != docs/cluster.md {want} (--policy-objects: {policy_objects})")
print(f"ClusterRole rules = docs/cluster.md (--policy-objects: {policy_objects}):", rendered[0]["rules"])
