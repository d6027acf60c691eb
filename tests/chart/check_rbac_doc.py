#!/usr/bin/env python3
"""The chart's ClusterRole rules equal the RBAC manifest documented (and tested by the cluster e2e suite)
in docs/cluster.md under <!-- rbac -->, followed, when the server runs with --policy-objects, by the rules
under <!-- rbac-policy-objects -->; and its Role (only with --renew-secret) has the rules under
<!-- rbac-certificate-renewal -->, the Secret named being the one --renew-secret names. With --audit-interval
(the chart's default values, whose webhooks.workloads the documented rules list), the audit's ClusterRole and
Role, named as the --audit-lease Lease, have the rules under <!-- rbac-audit -->, the Lease named being that
one; without it there are none.
Usage: check_rbac_doc.py RENDERED.yaml docs/cluster.md"""
import re
import sys
import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
# The server's ClusterRole and Role; the uninstall hook's (helm.sh/hook) is checked by check_manifests.py.
server_docs = [d for d in docs if "helm.sh/hook" not in d["metadata"].get("annotations", {})]
args = [a for d in docs if d["kind"] == "Deployment" for c in d["spec"]["template"]["spec"]["containers"]
        for a in c.get("args", [])]
policy_objects = "--policy-objects" in args
renew_secret = next((a.split("=", 1)[1] for a in args if a.startswith("--renew-secret=")), None)
audit_lease = next((a.split("=", 1)[1] for a in args if a.startswith("--audit-lease=")), None)
audit_name = audit_lease.split("/", 1)[-1] if audit_lease else None
# The background audit's ClusterRole and Role carry its Lease's name (<fullname>-audit).
rendered = [d for d in server_docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] != audit_name]
roles = [d for d in server_docs if d["kind"] == "Role" and d["metadata"]["name"] != audit_name]
audit_roles = {k: [d["rules"] for d in server_docs if d["kind"] == k and d["metadata"]["name"] == audit_name]
               for k in ("ClusterRole", "Role")}
doc = open(sys.argv[2]).read()


def documented_rules(marker, kind):
    m = re.search(r"<!-- " + marker + r" -->\s*```yaml\n(.*?)```", doc, re.S)
    if not m:
        sys.exit(f"no <!-- {marker} --> yaml block in {sys.argv[2]}")
    found = [d for d in yaml.safe_load_all(m.group(1)) if d and d["kind"] == kind]
    if len(found) != 1:
        sys.exit(f"want one {kind} under <!-- {marker} -->, got {len(found)}")
    return found[0]["rules"]


want = documented_rules("rbac", "ClusterRole") + (documented_rules("rbac-policy-objects", "ClusterRole") if policy_objects else [])
if len(rendered) != 1:
    sys.exit(f"want one ClusterRole in the chart, got {len(rendered)}")
if rendered[0]["rules"] != want:
    sys.exit(f"chart ClusterRole rules {rendered[0]['rules']} != docs/cluster.md {want} (--policy-objects: {policy_objects})")
print(f"ClusterRole rules = docs/cluster.md (--policy-objects: {policy_objects}):", rendered[0]["rules"])

want_roles = []
if renew_secret is not None:
    # The documented Role names release gpuadmit's Secret; the rendering's is <fullname>-tls.
    rules = documented_rules("rbac-certificate-renewal", "Role")
    for r in rules:
        if "resourceNames" in r:
            r["resourceNames"] = [renew_secret.split("/", 1)[1]]
    want_roles = [rules]
if [r["rules"] for r in roles] != want_roles:
    sys.exit(f"chart Roles {[r['rules'] for r in roles]} != docs/cluster.md {want_roles} (--renew-secret: {renew_secret})")
print(f"Roles = docs/cluster.md (--renew-secret: {renew_secret}):", want_roles)

want_audit = {"ClusterRole": [], "Role": []}
if audit_lease is not None:
    # The documented Role names release gpuadmit's Lease; the rendering's is <fullname>-audit.
    lease_rules = documented_rules("rbac-audit", "Role")
    for r in lease_rules:
        if "resourceNames" in r:
            r["resourceNames"] = [audit_name]
    want_audit = {"ClusterRole": [documented_rules("rbac-audit", "ClusterRole")], "Role": [lease_rules]}
if audit_roles != want_audit:
    sys.exit(f"chart audit ClusterRole and Role {audit_roles} != docs/cluster.md {want_audit} (--audit-lease: {audit_lease})")
print(f"audit ClusterRole and Role = docs/cluster.md (--audit-lease: {audit_lease}):", audit_roles)
