#!/usr/bin/env python3
"""Safety invariants of a rendered gpuadmit chart (helm template output), the ones the incidents in
admission-protocol.md are about. Usage: check_manifests.py RENDERED.yaml RELEASE_NAMESPACE
Prints one line per violation and exits 1 if there is any."""
import sys
import yaml

ALWAYS_EXCLUDED = {"kube-system", "kube-node-lease"}
# /mutate: pods; /validate: pods and claims (gpuadmit never changes a claim, it only denies).
CORE_RULE = {
    "MutatingWebhookConfiguration": {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["pods"], "scope": "Namespaced"},
    "ValidatingWebhookConfiguration": {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                       "resources": ["pods", "persistentvolumeclaims"], "scope": "Namespaced"},
}
ROLE_RULES = [
    {"apiGroups": [""], "resources": ["nodes", "resourcequotas", "persistentvolumeclaims"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
]


def main(path, namespace):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    problems = []
    kinds = [d["kind"] for d in docs]

    def bad(msg):
        problems.append(msg)

    for d in docs:
        kind, name = d["kind"], d["metadata"]["name"]
        where = f"{kind}/{name}"
        if kind == "Deployment":
            spec = d["spec"]["template"]["spec"]
            psc = spec.get("securityContext", {})
            if not psc.get("runAsNonRoot") or psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
                bad(f"{where}: pod securityContext needs runAsNonRoot and seccomp RuntimeDefault")
            for c in spec["containers"]:
                sc = c.get("securityContext", {})
                if not sc.get("readOnlyRootFilesystem") or sc.get("allowPrivilegeEscalation") is not False \
                        or sc.get("capabilities", {}).get("drop") != ["ALL"]:
                    bad(f"{where}: container {c['name']}: read-only root fs, no privilege escalation, drop ALL")
                res = c.get("resources", {})
                if not res.get("requests") or res.get("requests") != res.get("limits"):
                    bad(f"{where}: container {c['name']}: requests must equal limits, got {res}")
                for probe, path_ in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                    g = c.get(probe, {}).get("httpGet", {})
                    if g.get("path") != path_ or g.get("scheme") != "HTTPS" or g.get("port") != "https":
                        bad(f"{where}: {probe} must GET {path_} over HTTPS on the https port, got {g}")
                for m in c.get("volumeMounts", []):
                    if m.get("subPath"):
                        bad(f"{where}: subPath mount {m['name']} never sees Secret/ConfigMap updates")
        hook = d["metadata"].get("annotations", {}).get("helm.sh/hook")
        if kind == "ClusterRole" and hook is None and d.get("rules") != ROLE_RULES:
            bad(f"{where}: rules must be exactly {ROLE_RULES}, got {d.get('rules')}")
        if kind == "ClusterRole" and hook is not None:
            # The uninstall hook: delete (and get) the release's two webhook configurations, nothing else.
            names = {w["metadata"]["name"] for w in docs if w["kind"].endswith("WebhookConfiguration")}
            rules = d.get("rules", [])
            if hook != "pre-delete" or len(rules) != 2 or any(
                    r.get("apiGroups") != ["admissionregistration.k8s.io"] or sorted(r.get("verbs", [])) != ["delete", "get"]
                    or len(r.get("resourceNames", [])) != 1 or r["resourceNames"][0] not in names for r in rules):
                bad(f"{where}: a hook ClusterRole may only get and delete the release's webhook configurations {sorted(names)}, got {rules}")
        if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for w in d["webhooks"]:
                wn = f"{where} webhook {w['name']}"
                if w.get("sideEffects") != "None":
                    bad(f"{wn}: sideEffects must be None")
                if w.get("admissionReviewVersions") != ["v1"]:
                    bad(f"{wn}: admissionReviewVersions must be [v1]")
                if w.get("failurePolicy") not in ("Ignore", "Fail"):
                    bad(f"{wn}: failurePolicy missing")
                if not 1 <= int(w.get("timeoutSeconds", 0)) <= 10:
                    bad(f"{wn}: timeoutSeconds must be set and at most 10 (lease renewals use 10 s deadlines)")
                if kind == "MutatingWebhookConfiguration" and w.get("reinvocationPolicy") != "IfNeeded":
                    bad(f"{wn}: reinvocationPolicy must be IfNeeded")
                rules = w.get("rules", [])
                if not rules or rules[0] != CORE_RULE[kind]:
                    bad(f"{wn}: first rule must be {CORE_RULE[kind]}")
                for r in rules:
                    if "*" in str(r):
                        bad(f"{wn}: wildcard rule {r}")
                    if set(r.get("resources", [])) & {"leases", "endpoints", "events", "namespaces", "nodes", "configmaps"}:
                        bad(f"{wn}: must never match control-plane kinds: {r}")
                    if "DELETE" in r["operations"] or "CONNECT" in r["operations"]:
                        bad(f"{wn}: only CREATE/UPDATE: {r}")
                excluded = set()
                for e in w.get("namespaceSelector", {}).get("matchExpressions", []):
                    if e["key"] == "kubernetes.io/metadata.name" and e["operator"] == "NotIn":
                        excluded |= set(e["values"])
                missing = (ALWAYS_EXCLUDED | {namespace}) - excluded
                if missing:
                    bad(f"{wn}: namespaceSelector does not exclude {sorted(missing)}")
                cc = w.get("clientConfig", {})
                if "service" in cc and not cc.get("caBundle") and "cert-manager.io/inject-ca-from" not in d["metadata"].get("annotations", {}):
                    bad(f"{wn}: no caBundle and no cert-manager CA injection")
    # A critical priority class needs a ResourceQuota scoped to it, or GKE admits no gpuadmit pod.
    quota_classes = set()
    for d in docs:
        if d["kind"] == "ResourceQuota":
            for e in d["spec"].get("scopeSelector", {}).get("matchExpressions", []):
                if e.get("scopeName") == "PriorityClass" and e.get("operator") == "In":
                    quota_classes |= set(e.get("values", []))
    for d in docs:
        if d["kind"] == "Deployment":
            pc = d["spec"]["template"]["spec"].get("priorityClassName", "")
            if pc in ("system-cluster-critical", "system-node-critical") and pc not in quota_classes:
                bad(f"Deployment/{d['metadata']['name']}: priorityClassName {pc} without a ResourceQuota scoped to it")
    for need in ("Deployment", "Service", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        if need not in kinds:
            bad(f"missing {need}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
