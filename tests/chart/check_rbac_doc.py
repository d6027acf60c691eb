#!/usr/bin/env python3
"""The chart's ClusterRole rules equal the RBAC manifest documented (and tested by the cluster e2e suite)
in docs/cluster.md under <!-- rbac -->. Usage: check_rbac_doc.py RENDERED.yaml docs/cluster.md"""
import re
import sys
import yaml

# The server's ClusterRole; the uninstall hook's (helm.sh/hook) is checked by check_manifests.py.
rendered = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole"
            and "helm.sh/hook" not in d["metadata"].get("annotations", {})]
doc = open(sys.argv[2]).read()
m = re.search(r"<!-- rbac -->\s*```yaml\n(.*?)```", doc, re.S)
if not m:
    sys.exit("no <!-- rbac --> yaml block in " + sys.argv[2])
documented = [d for d in yaml.safe_load_all(m.group(1)) if d and d["kind"] == "ClusterRole"]
if len(rendered) != 1 or len(documented) != 1:
    sys.exit(f"want one ClusterRole each, got chart {len(rendered)}, doc {len(documented)}")
if rendered[0]["rules"] != documented[0]["rules"]:
    sys.exit(f"chart ClusterRole rules {rendered[0]['rules']} != docs/cluster.md {documented[0]['rules']}")
print("ClusterRole rules = docs/cluster.md:", rendered[0]["rules"])
