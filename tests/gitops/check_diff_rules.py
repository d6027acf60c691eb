#!/usr/bin/env python3
"""Checks the diff rules of docs/gitops.md against what gpuadmit really patches (issue #54, item 4).

Usage: check_diff_rules.py --gpuadmit BIN --gojq GOJQ [--helm HELM] [--root DIR]

The doc's fenced YAML blocks that start with a `# gitops-test: NAME` line are read:

- argocd-application: an Argo CD Application whose spec.ignoreDifferences must cover every field gpuadmit
  patches. For every manifest of tests/truth/manifests, under each policy that patches (the embedded default,
  deploy/policies/kubeflow.yaml, deploy/policies/strict.yaml), without a cluster view and with each profile of
  tests/truth/clusters, `gpuadmit check -o json` gives each object's RFC 6902 patch; applied to the object it
  gives the live object. Desired (the manifest) and live are normalized as Argo CD normalizes them for
  ignoreDifferences (util/argo/normalizers/diff_normalizer.go: per matching entry, each jsonPointers path is
  an RFC 6902 remove, each jqPathExpressions EXPR runs as gojq's `del(EXPR)`; a patch that fails leaves the
  object as it was) and must then be equal. Then each pointer and expression is dropped in turn and at least
  one object must differ (no rule is dead weight), and a user's own changes (an image, a toleration with
  another key, a GPU count, a volume, the cpu of a CPU-only object) must still show.
- argocd-install and argocd-install-helm-certs: Applications for the chart itself. Two `helm template`
  renders with the Application's values (a new CA each time with Helm-generated certificates, as Argo CD
  renders without `lookup`) must be equal after their ignoreDifferences, with the caBundle that cert-manager's
  cainjector writes into the live webhook configurations; each of their rules must be needed.
- flux-helmrelease: a Flux HelmRelease for the chart; each driftDetection.ignore rule must name paths that
  exist in a rendered object its target selects.

Empty maps and lists (and lists of nothing but those) are dropped from both sides before comparing: a
normalization that removes gpuadmit's only toleration leaves `tolerations: []` where git has none, which no
Argo CD diff reports (the legacy diff keeps fields git never set; built-in kinds drop empty omitempty fields).
"""

import argparse
import concurrent.futures
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from argo_normalize import *  # noqa: E402,F401,F403
from corpus_cases import *  # noqa: E402,F401,F403

COUNTS = {"passed": 0, "failed": 0}


def passed(msg):
    COUNTS["passed"] += 1
    print("ok   " + msg)


def failed(msg):
    COUNTS["failed"] += 1
    print("FAIL " + msg)


# --------------------------------------------------------------------------------------------------------


def check_workloads(root, args, app, jq, report):
    ignore = app["spec"]["ignoreDifferences"]
    opts = app["spec"].get("syncPolicy", {}).get("syncOptions") or []
    ok = True
    if "RespectIgnoreDifferences=true" not in opts:
        failed("argocd-application: syncPolicy.syncOptions lacks RespectIgnoreDifferences=true")
        ok = False
    for _, kind, val in patches_of(ignore):
        if kind == "jq":
            jq.compile_check(val)
        else:
            split_pointer(val)
    policies = [None, "deploy/policies/kubeflow.yaml", "deploy/policies/strict.yaml"]
    clusters = [None] + sorted(os.path.join("tests/truth/clusters", n) for n in os.listdir(
        os.path.join(root, "tests/truth/clusters")) if n.endswith(".yaml"))
    t = time.time()
    sources, runs, njobs = gpuadmit_runs(root, args.gpuadmit, "tests/truth/manifests", policies, clusters)
    report["gpuadmit check runs"] = "%d (%d policies x %d cluster views), %.1fs" % (
        njobs, len(policies), len(clusters), time.time() - t)

    cases = {}  # (source, patch) -> case
    checked = patched = 0
    per_rule = {}
    for pol, clu, results in runs:
        for r in results:
            if not r.get("checked"):
                continue
            checked += 1
            src = r["source"]
            if src not in sources:
                raise SystemExit("no object parsed at %s (gpuadmit's source)" % src)
            patch = r.get("patch") or []
            if patch:
                patched += 1
            key = (src, json.dumps(patch, sort_keys=True))
            c = cases.get(key)
            if c is None:
                desired = sources[src]
                c = cases[key] = {"src": src, "kind": r["kind"], "name": r.get("name"), "desired": desired,
                                  "live": apply_patch(desired, patch) if patch else desired, "patch": patch,
                                  "where": []}
            c["where"].append("%s, %s" % (pol, clu))
            for op in patch:
                rule = rule_of_path(op["path"], r.get("fixes") or [])
                per_rule.setdefault(rule, {}).setdefault(norm_path(op["path"]), set()).add(r["kind"])
    case_list = list(cases.values())
    patched_cases = [c for c in case_list if c["patch"]]
    report["objects checked"] = "%d (%d distinct objects and patches)" % (checked, len(case_list))
    report["objects patched"] = "%d (%d distinct patches)" % (patched, len(patched_cases))
    paths = {p for rules in per_rule.values() for p in rules}
    report["distinct patched paths"] = len(paths)
    report["rules (ignoreDifferences entries x pointers + expressions)"] = "%d entries, %d pointers + expressions" % (
        len(ignore), len({(k, v) for _, k, v in patches_of(ignore)}))

    def failures(ign, cases_):
        d = normalize_all([c["desired"] for c in cases_], ign, jq)
        lv = normalize_all([c["live"] for c in cases_], ign, jq)
        return [(c, dd, ll) for c, dd, ll in zip(cases_, d, lv) if canon(dd) != canon(ll)]

    # 1. Covered: desired == live after normalization, for every object.
    bad = failures(ignore, case_list)
    for c, dd, ll in bad[:5]:
        print("  %s %s %s (%s): not covered after normalization:" % (c["src"], c["kind"], c["name"],
                                                                         c["where"][0]))
        for p in diff_paths(canon(dd), canon(ll))[:20]:
            print("    " + p)
        print("  the object gpuadmit patched (live):")
        print("    " + json.dumps(c["live"], sort_keys=True)[:3000])
    if bad:
        failed("%d of %d objects differ after normalization" % (len(bad), len(case_list)))
        ok = False
    else:
        passed("all %d objects: desired == live after the Application's ignoreDifferences" % len(case_list))

    # 2. Needed: without any one pointer or expression, some object differs.
    distinct = []
    for _, kind, val in patches_of(ignore):
        if (kind, val) not in distinct:
            distinct.append((kind, val))
    for kind, val in distinct:
        ign = [dict(e, **{"jsonPointers": [p for p in e.get("jsonPointers") or [] if not (kind == "ptr" and p == val)],
                          "jqPathExpressions": [x for x in e.get("jqPathExpressions") or []
                                                if not (kind == "jq" and x == val)]}) for e in ignore]
        b = failures(ign, patched_cases)
        short = val if len(val) < 90 else val[:87] + "..."
        if not b:
            failed("rule not needed by any object (dead or shadowed): %s" % short)
            ok = False
        else:
            passed("without %-92s %4d objects differ" % (short, len(b)))

    # 3. Not over-ignoring: a user's own edits in git still differ from live after normalization.
    edits = {}
    for c in patched_cases:
        for name, o in user_changes(c["desired"]):
            edits.setdefault(name, []).append((c, o))
    cpu_only = [c for c in case_list if not c["patch"] and not is_gpu_object(c["desired"])]
    for c in cpu_only:
        o = cpu_edit(c["desired"])
        if o is not None:
            edits.setdefault("cpu of a CPU-only object", []).append((c, o))
    for name in sorted(edits):
        pairs = edits[name]
        d = normalize_all([o for _, o in pairs], ignore, jq)
        lv = normalize_all([c["live"] for c, _ in pairs], ignore, jq)
        hidden = [c for (c, _), dd, ll in zip(pairs, d, lv) if canon(dd) == canon(ll)]
        if hidden:
            ok = False
            failed("user edit '%s' hidden by the rules in %d of %d objects, e.g. %s %s" % (
                name, len(hidden), len(pairs), hidden[0]["src"], hidden[0]["kind"]))
        else:
            passed("user edit %-34s still shows in all %d objects" % ("'%s'" % name, len(pairs)))
    for name in ("image", "toleration example.com/dedicated", "GPU count", "cpu of a CPU-only object"):
        if not edits.get(name):
            failed("no object to try the user edit '%s' on" % name)
            ok = False

    if args.paths_out:
        with open(args.paths_out, "w", encoding="utf-8") as f:
            json.dump({r: {p: sorted(k) for p, k in sorted(v.items())} for r, v in sorted(per_rule.items())},
                      f, indent=1)
    report["patched paths per rule"] = ", ".join("%s %d" % (r, len(v)) for r, v in sorted(per_rule.items()))
    return ok


def render(helm, root, release, namespace, values):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(values or {}, f)
        vals = f.name
    try:
        r = subprocess.run([helm, "template", release, os.path.join(root, "charts/gpuadmit"), "-n", namespace,
                            "-f", vals], capture_output=True, text=True)
    finally:
        os.unlink(vals)
    if r.returncode != 0:
        raise SystemExit("helm template failed: %s" % r.stderr[-2000:])
    return [d for d in yaml.load_all(r.stdout, Loader=Loader) if isinstance(d, dict)]


def inject_ca(objs):
    """What cert-manager's cainjector does to the live webhook configurations."""
    out = copy.deepcopy(objs)
    for o in out:
        if o.get("kind") in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for w in o.get("webhooks") or []:
                w.setdefault("clientConfig", {})["caBundle"] = "Y2FpbmplY3RvcidzIENB"
    return out


def check_install(root, args, name, app, jq):
    src = app["spec"].get("source") or {}
    helm_spec = src.get("helm") or {}
    release = helm_spec.get("releaseName") or app["metadata"]["name"]
    ns = app["spec"]["destination"]["namespace"]
    values = helm_spec.get("valuesObject") or {}
    ignore = app["spec"].get("ignoreDifferences") or []
    for _, kind, val in patches_of(ignore):
        if kind == "jq":
            jq.compile_check(val)
    live = inject_ca(render(args.helm, root, release, ns, values))
    desired = render(args.helm, root, release, ns, values)
    key = lambda o: (o.get("kind"), (o.get("metadata") or {}).get("name"))  # noqa: E731
    live_by = {key(o): o for o in live}
    pairs = [(d, live_by[key(d)]) for d in desired if key(d) in live_by]
    if len(pairs) != len(desired):
        failed("%s: the two renders hold different objects" % name)
        return False

    def differing(ign):
        dd = normalize_all([d for d, _ in pairs], ign, jq)
        ll = normalize_all([lv for _, lv in pairs], ign, jq)
        return [(d, diff_paths(canon(a), canon(b))) for (d, _), a, b in zip(pairs, dd, ll) if canon(a) != canon(b)]

    ok = True
    raw = differing([])
    bad = differing(ignore)
    for d, paths in bad:
        ok = False
        failed("%s: %s %s differs between two renders after ignoreDifferences: %s" % (
            name, d["kind"], d["metadata"]["name"], ", ".join(paths[:6])))
    if not bad:
        passed("%s: two renders (%d objects; %d differ before normalization: %s) equal after ignoreDifferences" % (
            name, len(pairs), len(raw), ", ".join(sorted({d["kind"] for d, _ in raw}))))
    for i, e in enumerate(ignore):
        for kind, field in (("ptr", "jsonPointers"), ("jq", "jqPathExpressions")):
            for val in e.get(field) or []:
                ign = copy.deepcopy(ignore)
                ign[i][field] = [x for x in ign[i][field] if x != val]
                if not differing(ign):
                    ok = False
                    failed("%s: rule not needed: %s %s %s" % (name, e.get("kind"), field, val))
    opts = app["spec"].get("syncPolicy", {}).get("syncOptions") or []
    if any(e.get("kind") == "Secret" for e in ignore) and "RespectIgnoreDifferences=true" not in opts:
        ok = False
        failed("%s: ignores the Secret but lacks RespectIgnoreDifferences=true" % name)
    return ok


def check_flux(root, args, hr):
    spec = hr["spec"]
    release = spec.get("releaseName") or hr["metadata"]["name"]
    ns = spec.get("targetNamespace") or hr["metadata"].get("namespace")
    objs = render(args.helm, root, release, ns, spec.get("values") or {})
    dd = spec.get("driftDetection") or {}
    ok = True
    if dd.get("mode") not in ("enabled", "warn"):
        failed("flux-helmrelease: driftDetection.mode is %r" % dd.get("mode"))
        ok = False
    for rule in dd.get("ignore") or []:
        tgt = rule.get("target") or {}

        def sel(o):
            api = str(o.get("apiVersion", ""))
            group, version = (api.rsplit("/", 1) if "/" in api else ("", api))
            meta = o.get("metadata") or {}
            for fld, val in (("group", group), ("version", version), ("kind", o.get("kind", "")),
                             ("name", meta.get("name", "")), ("namespace", meta.get("namespace") or ns)):
                if fld in tgt and re.fullmatch(tgt[fld], val or "") is None:
                    return False
            return True
        chosen = [o for o in objs if sel(o)]
        if not chosen:
            ok = False
            failed("flux-helmrelease: ignore target %s selects no rendered object" % tgt)
            continue
        for p in rule.get("paths") or []:
            toks = split_pointer(p)
            found = False
            for o in chosen:
                try:
                    get_in(o, [int(t) if isinstance(get_in(o, toks[:i]), list) else t for i, t in enumerate(toks)])
                    found = True
                except (KeyError, IndexError, ValueError, TypeError):
                    pass
            if found:
                passed("flux-helmrelease: %s exists in %s" % (p, ", ".join(
                    "%s/%s" % (o["kind"], o["metadata"]["name"]) for o in chosen)))
            else:
                ok = False
                failed("flux-helmrelease: %s is in no object the target %s selects" % (p, tgt))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuadmit", required=True)
    ap.add_argument("--gojq", required=True)
    ap.add_argument("--helm", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--paths-out", help="write the patched paths per rule (JSON) here")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    t0 = time.time()
    with open(os.path.join(root, "docs/gitops.md"), encoding="utf-8") as f:
        blocks = doc_blocks(f.read())
    need = ("argocd-application", "argocd-install", "argocd-install-helm-certs", "flux-helmrelease")
    missing = [b for b in need if b not in blocks]
    if missing:
        raise SystemExit("docs/gitops.md lacks the block(s): %s" % ", ".join(missing))
    jq = Gojq(args.gojq)
    report = {}
    ok = check_workloads(root, args, blocks["argocd-application"], jq, report)
    ok = check_install(root, args, "argocd-install", blocks["argocd-install"], jq) and ok
    ok = check_install(root, args, "argocd-install-helm-certs", blocks["argocd-install-helm-certs"], jq) and ok
    flux = blocks["flux-helmrelease"]
    flux = [d for d in (flux if isinstance(flux, list) else [flux]) if d.get("kind") == "HelmRelease"]
    if len(flux) != 1:
        raise SystemExit("docs/gitops.md: the flux-helmrelease block needs one HelmRelease")
    ok = check_flux(root, args, flux[0]) and ok
    print()
    print("gitops summary:")
    for k, v in report.items():
        print("  %-58s %s" % (k, v))
    print("  %-58s %d" % ("gojq runs", jq.calls))
    print("  %-58s %.1fs" % ("check time", time.time() - t0))
    print("gitops: %d passed, %d failed" % (COUNTS["passed"], COUNTS["failed"]))
    return 0 if ok and COUNTS["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
