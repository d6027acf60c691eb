#!/usr/bin/env python3
"""Safety invariants of a rendered gpuadmit chart (helm template output), the ones the incidents in
admission-protocol.md are about. Usage: check_manifests.py RENDERED.yaml RELEASE_NAMESPACE
Prints one line per violation and exits 1 if there is any."""
import re
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
    {"apiGroups": ["resource.k8s.io"], "resources": ["deviceclasses", "resourceslices", "resourceclaims",
                                                    "resourceclaimtemplates"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["karpenter.sh"], "resources": ["nodepools"], "verbs": ["get", "list", "watch"]},
]
# With `serve --policy-objects` (policyObjects.enabled): the policy objects are read, and only their status
# is written; the validating configuration gets one more webhook, for them alone.
POLICY_ROLE_RULES = [
    {"apiGroups": ["gpuadmit.io"], "resources": ["clustergpupolicies", "gpupolicies"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["gpuadmit.io"], "resources": ["clustergpupolicies/status", "gpupolicies/status"], "verbs": ["patch"]},
]
POLICY_WEBHOOK_RULES = [
    {"operations": ["CREATE", "UPDATE"], "apiGroups": ["gpuadmit.io"], "apiVersions": ["v1alpha1"],
     "resources": ["clustergpupolicies"], "scope": "Cluster"},
    {"operations": ["CREATE", "UPDATE"], "apiGroups": ["gpuadmit.io"], "apiVersions": ["v1alpha1"],
     "resources": ["gpupolicies"], "scope": "Namespaced"},
]
POLICY_CRDS = {"clustergpupolicies.gpuadmit.io", "gpupolicies.gpuadmit.io"}
# With `serve --audit-interval` (audit.enabled): list of pods and of every workload kind the webhooks route (one
# rule per API group, the webhook rules' resources in their order), the PolicyReports it keeps, and its Lease.
AUDIT_POD_RULE = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
AUDIT_REPORT_RULE = {"apiGroups": ["wgpolicyk8s.io"], "resources": ["policyreports"],
                     "verbs": ["get", "list", "create", "patch", "delete"]}
DURATION = re.compile(r"^([0-9]+[hms])+$")


def is_policy_webhook(w):
    return any("gpuadmit.io" in r.get("apiGroups", []) for r in w.get("rules", []))


def flag(args, name):
    """The value of --name=VALUE in args, or None."""
    for a in args:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


def check_client_auth_and_metrics(docs, bad):
    """--client-ca-file reads a file of a mounted ConfigMap or Secret (a directory, so its updates arrive);
    --metrics-listen has its container port `metrics`, which the Service, a ServiceMonitor and a NetworkPolicy
    use, and without it they use `https` and no `metrics` port exists (a Prometheus scraping the https port
    would get 404 from a server that has a metrics port)."""
    config_maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    metrics_port = None
    for d in docs:
        if d["kind"] != "Deployment":
            continue
        where = f"Deployment/{d['metadata']['name']}"
        spec = d["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        c = spec["containers"][0]
        args = c.get("args", [])
        ca_file = flag(args, "client-ca-file")
        if ca_file is not None:
            directory, _, base = ca_file.rpartition("/")
            mounts = [m for m in c.get("volumeMounts", []) if m["mountPath"] == directory]
            source = volumes.get(mounts[0]["name"], {}) if mounts else {}
            ref = source.get("configMap") or source.get("secret")
            if not mounts or not mounts[0].get("readOnly") or not ref:
                bad(f"{where}: --client-ca-file={ca_file}: no read-only ConfigMap or Secret volume mounted at {directory}")
            elif [i.get("path") for i in ref.get("items", [])] != [base]:
                bad(f"{where}: --client-ca-file={ca_file}: its volume must map exactly one key to {base}, got {ref.get('items')}")
            elif "configMap" in source and source["configMap"]["name"] in config_maps:
                # The chart's own ConfigMap (clientAuth.caBundle): it holds PEM under the mapped key.
                data = config_maps[source["configMap"]["name"]].get("data", {})
                if "-----BEGIN CERTIFICATE-----" not in data.get(ref["items"][0]["key"], ""):
                    bad(f"{where}: the client CA ConfigMap {source['configMap']['name']} holds no PEM certificate")
        listen = flag(args, "metrics-listen")
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        if listen is not None:
            metrics_port = int(listen.rsplit(":", 1)[1])
            if ports.get("metrics") != metrics_port or ports.get("https") == metrics_port:
                bad(f"{where}: --metrics-listen={listen} needs container port metrics = {metrics_port}, apart from https; got {ports}")
        elif "metrics" in ports:
            bad(f"{where}: container port metrics without --metrics-listen")
    want = "metrics" if metrics_port is not None else "https"
    for d in docs:
        where = f"{d['kind']}/{d['metadata']['name']}"
        if d["kind"] == "Service":
            names = {p["name"]: p for p in d["spec"]["ports"]}
            if metrics_port is not None and (names.get("metrics", {}).get("targetPort") != "metrics"):
                bad(f"{where}: --metrics-listen but no Service port metrics targeting the container port metrics")
            if metrics_port is None and "metrics" in names:
                bad(f"{where}: a port metrics without --metrics-listen")
        if d["kind"] == "ServiceMonitor":
            got = [e.get("port") for e in d["spec"]["endpoints"]]
            if got != [want]:
                bad(f"{where}: must scrape port {want} (--metrics-listen: {metrics_port is not None}), got {got}")
        if d["kind"] == "NetworkPolicy":
            allowed = {p.get("port") for rule in d["spec"].get("ingress", []) for p in rule.get("ports", [])}
            if not {"https", want} <= allowed:
                bad(f"{where}: must admit the ports https and {want}, got {sorted(map(str, allowed))}")


def check_certificate_renewal(docs, namespace, bad):
    """The serving certificate's volume projects tls.crt and tls.key only (a Secret may hold the CA's key, which
    must not be on the pod's disk). With --renew-secret NAMESPACE/NAME: that is the release namespace and the
    Secret the volume mounts; a chart-made Secret holds ca.key; and (when the chart makes RBAC) a Role lets the
    pod's ServiceAccount get and patch that Secret by name, nothing more. Without it: no Role, and a chart-made
    Secret holds no ca.key."""
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    # The audit's Role and RoleBinding (named as its Lease, with --audit-lease) are check_audit's.
    audit_name = (audit_lease(docs) or (None, None))[1]
    roles = [d for d in docs if d["kind"] == "Role" and not is_hook(d) and d["metadata"]["name"] != audit_name]
    bindings = [d for d in docs if d["kind"] == "RoleBinding" and not is_hook(d) and d["metadata"]["name"] != audit_name]
    rbac_rendered = any(d["kind"] == "ClusterRole" and "helm.sh/hook" not in d["metadata"].get("annotations", {}) for d in docs)
    for d in docs:
        if d["kind"] != "Deployment":
            continue
        where = f"Deployment/{d['metadata']['name']}"
        spec = d["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        c = spec["containers"][0]
        args = c.get("args", [])
        cert_dir = flag(args, "cert-dir")
        mounts = [m for m in c.get("volumeMounts", []) if m["mountPath"] == cert_dir]
        secret = volumes.get(mounts[0]["name"], {}).get("secret") if mounts else None
        if not secret:
            bad(f"{where}: --cert-dir={cert_dir}: no Secret volume mounted there")
            continue
        if secret.get("items") != [{"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}]:
            bad(f"{where}: the certificate volume must project exactly tls.crt and tls.key, got items {secret.get('items')}")
        name = secret["secretName"]
        renew = flag(args, "renew-secret")
        chart_secret = secrets.get(name)
        want_role = []
        if renew is not None:
            if renew != f"{namespace}/{name}":
                bad(f"{where}: --renew-secret={renew}, want {namespace}/{name} (the Secret the certificate volume mounts)")
            if flag(args, "renew-before") is None:
                bad(f"{where}: --renew-secret without --renew-before")
            if chart_secret is not None and "ca.key" not in chart_secret.get("data", {}):
                bad(f"Secret/{name}: no ca.key, which --renew-secret signs with")
            want_role = [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": [name], "verbs": ["get", "patch"]}]
        elif chart_secret is not None and "ca.key" in chart_secret.get("data", {}):
            bad(f"Secret/{name}: holds ca.key although the server does not renew (no --renew-secret)")
        if not rbac_rendered:  # rbac.create false: the admin grants it (the Role must not appear alone either)
            if roles or bindings:
                bad(f"{where}: Roles or RoleBindings without the chart's ClusterRole (rbac.create false)")
            continue
        if [r.get("rules") for r in roles] != ([want_role] if want_role else []):
            bad(f"{where}: the Roles must be {'one with rules ' + str(want_role) if want_role else 'none'} "
                f"(--renew-secret: {renew}), got {[r.get('rules') for r in roles]}")
        if want_role and roles:
            sa = spec.get("serviceAccountName")
            ok = [b for b in bindings if b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                          "name": roles[0]["metadata"]["name"]}
                  and b.get("subjects") == [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}]]
            if len(ok) != 1 or len(bindings) != 1:
                bad(f"{where}: one RoleBinding must bind Role/{roles[0]['metadata']['name']} to ServiceAccount {sa}, got {bindings}")
        elif bindings:
            bad(f"{where}: RoleBindings without --renew-secret: {[b['metadata']['name'] for b in bindings]}")


def is_hook(d):
    return "helm.sh/hook" in d["metadata"].get("annotations", {})


def audit_lease(docs):
    """(namespace, name) of the Deployment's --audit-lease, or None without one."""
    for d in docs:
        if d["kind"] == "Deployment":
            lease = flag(d["spec"]["template"]["spec"]["containers"][0].get("args", []), "audit-lease")
            if lease is not None:
                return tuple(lease.split("/", 1)) if "/" in lease else (None, lease)
    return None


def audit_rules(docs):
    """The audit ClusterRole's rules the webhook configurations call for: list of pods, of each workload kind
    the validating webhook routes (one rule per API group, resources in the order of its rules), and the
    PolicyReports' verbs."""
    groups = {}
    for d in docs:
        if d["kind"] != "ValidatingWebhookConfiguration":
            continue
        for w in d["webhooks"]:
            if is_policy_webhook(w):
                continue
            for r in w.get("rules", [])[1:]:  # the first is the pods-and-claims rule
                for g in r["apiGroups"]:
                    have = groups.setdefault(g, [])
                    have += [x for x in r["resources"] if x not in have]
            break  # one pod webhook's rules
    return [AUDIT_POD_RULE] + [{"apiGroups": [g], "resources": rs, "verbs": ["list"]} for g, rs in groups.items()] + \
        [AUDIT_REPORT_RULE]


def check_audit(docs, namespace, bad):
    """--audit-interval and --audit-lease come together: the interval an h/m/s duration of at least 10 s, the
    Lease <something>-audit in the release namespace, POD_NAME and POD_NAMESPACE from the downward API; and
    (when the chart makes RBAC) exactly one ClusterRole of the Lease's name with the audit's rules
    (audit_rules) and one Role of that name in the release namespace with create of leases and get/update of
    that Lease by name, each bound to the pod's ServiceAccount. Without the flags, no object of the audit."""
    rbac_rendered = any(d["kind"] == "ClusterRole" and not is_hook(d) for d in docs)
    for d in docs:
        if d["kind"] != "Deployment":
            continue
        where = f"Deployment/{d['metadata']['name']}"
        spec = d["spec"]["template"]["spec"]
        c = spec["containers"][0]
        args = c.get("args", [])
        interval, lease = flag(args, "audit-interval"), flag(args, "audit-lease")
        audit_objects = [f"{x['kind']}/{x['metadata']['name']}" for x in docs
                         if x["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding") and not is_hook(x)
                         and x["metadata"]["name"].endswith("-audit")]
        if interval is None and lease is None:
            if any(a.startswith("--audit") for a in args):
                bad(f"{where}: audit flags without --audit-interval: {[a for a in args if a.startswith('--audit')]}")
            if audit_objects:
                bad(f"{where}: audit RBAC without --audit-interval: {audit_objects}")
            continue
        if interval is None or lease is None:
            bad(f"{where}: --audit-interval and --audit-lease come together, got {interval!r} and {lease!r}")
            continue
        if not DURATION.match(interval):
            bad(f"{where}: --audit-interval={interval} is no h/m/s duration")
        elif sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"([0-9]+)([hms])", interval)) < 10:
            bad(f"{where}: --audit-interval={interval} is below 10s")
        lease_ns, _, lease_name = lease.partition("/")
        if lease_ns != namespace or not lease_name.endswith("-audit"):
            bad(f"{where}: --audit-lease={lease}, want {namespace}/<fullname>-audit")
        env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for e in c.get("env", [])}
        if env.get("POD_NAME") != "metadata.name" or env.get("POD_NAMESPACE") != "metadata.namespace":
            bad(f"{where}: --audit-lease needs POD_NAME and POD_NAMESPACE from metadata.name and metadata.namespace, got {env}")
        if not rbac_rendered:  # rbac.create false: the admin grants it
            if audit_objects:
                bad(f"{where}: audit RBAC without the chart's ClusterRole (rbac.create false): {audit_objects}")
            continue
        sa = {"kind": "ServiceAccount", "name": spec.get("serviceAccountName"), "namespace": namespace}
        want = {
            ("ClusterRole", lease_name): audit_rules(docs),
            ("Role", lease_name): [
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [lease_name],
                 "verbs": ["get", "update"]},
            ],
        }
        for (kind, name), rules in want.items():
            found = [x for x in docs if x["kind"] == kind and x["metadata"]["name"] == name and not is_hook(x)]
            if len(found) != 1 or found[0].get("rules") != rules:
                bad(f"{kind}/{name}: the audit's {kind} must have exactly {rules}, got {[x.get('rules') for x in found]}")
            elif kind == "Role" and found[0]["metadata"].get("namespace") != namespace:
                bad(f"Role/{name}: must be in the release namespace {namespace}")
            binding = [x for x in docs if x["kind"] == kind + "Binding" and x["metadata"]["name"] == name]
            if len(binding) != 1 or binding[0]["roleRef"] != {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name} \
                    or binding[0].get("subjects") != [sa]:
                bad(f"{kind}Binding/{name}: must bind {kind}/{name} to {sa}, got {binding}")


SHELLS = {"sh", "bash", "ash", "dash", "busybox"}


def pod_spec(d):
    if d["kind"] == "Pod":
        return d["spec"]
    if d["kind"] in ("Deployment", "Job", "DaemonSet", "StatefulSet"):
        return d["spec"]["template"]["spec"]
    return None


# Every container, the hooks' and the helm test's included, runs in exec form: upstream images (kubectl's
# among them) have shipped with and without a shell, and a hook that needs one fails `helm uninstall`.
def check_exec_form(docs, bad):
    for d in docs:
        spec = pod_spec(d)
        for c in (spec or {}).get("containers", []) + (spec or {}).get("initContainers", []):
            argv = c.get("command", []) + c.get("args", [])
            if argv and argv[0].rsplit("/", 1)[-1] in SHELLS:
                bad(f"{d['kind']}/{d['metadata']['name']}: container {c['name']} runs a shell ({argv[0]}); "
                    "use the exec form")


def main(path, namespace):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    problems = []
    kinds = [d["kind"] for d in docs]
    # Whether the server runs with --policy-objects: RBAC and the policy webhook must follow it.
    policy_objects = any("--policy-objects" in c.get("args", []) for d in docs if d["kind"] == "Deployment"
                         for c in d["spec"]["template"]["spec"]["containers"])
    role_rules = ROLE_RULES + (POLICY_ROLE_RULES if policy_objects else [])
    # The audit's ClusterRole (its Lease's name, with --audit-lease) is check_audit's.
    audit_name = (audit_lease(docs) or (None, None))[1]

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
                # With a metrics listener the probes go there (its own connection cap; the review port
                # can then be closed to all but the API server), else to the https port.
                probe_port = "metrics" if flag(c.get("args", []), "metrics-listen") is not None else "https"
                for probe, path_ in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                    g = c.get(probe, {}).get("httpGet", {})
                    if g.get("path") != path_ or g.get("scheme") != "HTTPS" or g.get("port") != probe_port:
                        bad(f"{where}: {probe} must GET {path_} over HTTPS on the {probe_port} port, got {g}")
                # The serving key is readable by the pod's fsGroup alone when the chart sets one.
                fs_group = spec.get("securityContext", {}).get("fsGroup")
                for v in spec.get("volumes", []):
                    if v["name"] == "tls" and "secret" in v and fs_group is not None \
                            and v["secret"].get("defaultMode") != 0o440:
                        bad(f"{where}: with fsGroup {fs_group} the tls volume needs defaultMode 0440, got {v['secret'].get('defaultMode')}")
                for m in c.get("volumeMounts", []):
                    if m.get("subPath"):
                        bad(f"{where}: subPath mount {m['name']} never sees Secret/ConfigMap updates")
        hook = d["metadata"].get("annotations", {}).get("helm.sh/hook")
        if kind == "ClusterRole" and hook is None and name != audit_name and d.get("rules") != role_rules:
            bad(f"{where}: rules must be exactly {role_rules} (--policy-objects: {policy_objects}), got {d.get('rules')}")
        if kind == "CustomResourceDefinition":
            # Deleting a CRD deletes every policy object: helm uninstall must leave them.
            if name not in POLICY_CRDS or d["metadata"].get("annotations", {}).get("helm.sh/resource-policy") != "keep":
                bad(f"{where}: only the two policy CRDs, each with helm.sh/resource-policy: keep")
        if kind == "ClusterRole" and hook is not None:
            # The uninstall hook: delete (and get) the release's two webhook configurations, nothing else.
            names = {w["metadata"]["name"] for w in docs if w["kind"].endswith("WebhookConfiguration")}
            rules = d.get("rules", [])
            if hook != "pre-delete" or len(rules) != 2 or any(
                    r.get("apiGroups") != ["admissionregistration.k8s.io"] or sorted(r.get("verbs", [])) != ["delete", "get"]
                    or len(r.get("resourceNames", [])) != 1 or r["resourceNames"][0] not in names for r in rules):
                bad(f"{where}: a hook ClusterRole may only get and delete the release's webhook configurations {sorted(names)}, got {rules}")
        if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            policy_hooks = [w for w in d["webhooks"] if is_policy_webhook(w)]
            want_policy_hooks = 1 if policy_objects and kind == "ValidatingWebhookConfiguration" else 0
            if len(policy_hooks) != want_policy_hooks:
                bad(f"{where}: {len(policy_hooks)} webhooks for the policy objects, want {want_policy_hooks} (--policy-objects: {policy_objects})")
            for w in d["webhooks"]:
                wn = f"{where} webhook {w['name']}"
                if is_policy_webhook(w):
                    # Policy edits only, always checked: Fail, no selector or condition that could skip one.
                    if w.get("rules") != POLICY_WEBHOOK_RULES:
                        bad(f"{wn}: rules must be exactly {POLICY_WEBHOOK_RULES}, got {w.get('rules')}")
                    if w.get("failurePolicy") != "Fail":
                        bad(f"{wn}: failurePolicy must be Fail (a policy edit must not slip in unchecked)")
                    for skip in ("namespaceSelector", "objectSelector", "matchConditions"):
                        if w.get(skip):
                            bad(f"{wn}: no {skip}: every policy object must reach gpuadmit, got {w[skip]}")
                    cc = w.get("clientConfig", {})
                    if not (cc.get("service", {}).get("path") == "/validate" or cc.get("url", "").endswith("/validate")):
                        bad(f"{wn}: must call /validate, got {cc}")
                    if cc != d["webhooks"][0]["clientConfig"]:
                        bad(f"{wn}: clientConfig must be {d['webhooks'][0]['name']}'s (same server and CA)")
                    for k, want in (("sideEffects", "None"), ("admissionReviewVersions", ["v1"])):
                        if w.get(k) != want:
                            bad(f"{wn}: {k} must be {want}")
                    if not 1 <= int(w.get("timeoutSeconds", 0)) <= 10:
                        bad(f"{wn}: timeoutSeconds must be set and at most 10")
                    continue
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
    check_client_auth_and_metrics(docs, bad)
    check_certificate_renewal(docs, namespace, bad)
    check_audit(docs, namespace, bad)
    check_exec_form(docs, bad)
    for need in ("Deployment", "Service", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        if need not in kinds:
            bad(f"missing {need}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
