#!/usr/bin/env bash
# gpuadmit's install artifacts, tested: the Helm chart, deploy/, the Dockerfile.
#
#   tests/chart/run.sh GPUADMIT_BIN [static] [cluster] [e2e]     (default: all three)
#
# static   helm lint + template for every charts/gpuadmit/ci/*.yaml with the safety invariants
#          (check_manifests.py); misspelled and contradictory values fail with a clear message; every
#          value documented; default policy, deploy/gpuadmit.yaml and example policies in sync and valid;
#          the Dockerfile's pinned bases and staged libraries = ldd of GPUADMIT_BIN (check-dockerfile.sh); the policy CRDs are
#          `gpuadmit policy crds`'s, policyObjects' flags, RBAC and webhook agree, the chart's serve flags exist;
#          clientAuth's CA mount and metrics.port's ports agree with their flags; certificates.helm.renew's ca.key,
#          flags and Role come together and only with it; so do audit's flags, env and ClusterRole/Role; the
#          PolicyReport CRD in crds/ is the upstream file its header names
# cluster  on the e2e control plane (tests/e2e/cluster.sh, no gpuadmit): every ci/ rendering applied with
#          --dry-run=server; NOTES warnings; a real `helm install`, RBAC checked with `kubectl auth can-i
#          --as=system:serviceaccount:...`, certificate reused on upgrade, fail-open default, uninstall; the
#          policy CRDs (Established, upgraded, kept), policy edits fail closed, a live gpuadmit with the
#          Deployment's policy-object flags as the chart's ServiceAccount behind the installed policy webhook;
#          client authentication enforced when on (the API server's admission kubeconfig from cluster.sh);
#          an install without ca.key upgraded to renewal (caBundle with both CAs); a certificate near expiry
#          renewed by a live gpuadmit with the Deployment's --renew-secret while reviews flow, none failing
# e2e      tests/e2e/run.sh with the chart's own webhook configurations (clientConfig.url pointed at the
#          local gpuadmit): all scenarios with the default values, then the GPU scenarios again with
#          webhooks.matchConditions.enabled
#
# Helm is built from its Go module (build-helm.sh, cached in ~/.cache/gpuadmit). stdout: one PASS/FAIL
# line per check, details under failures, and last `chart: N passed, M failed`; exit 0 iff M is 0.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CHART=$ROOT/charts/gpuadmit
BIN=${1:?usage: tests/chart/run.sh GPUADMIT_BIN [static] [cluster] [e2e]}
shift
BIN=$(readlink -f "$BIN")
PHASES=("$@")
((${#PHASES[@]})) || PHASES=(static cluster e2e)
NS=gpuadmit

log() { printf '%s chart: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
[[ -x $BIN ]] || { echo "FAIL  setup: $BIN is not an executable"; echo "chart: 0 passed, 1 failed"; exit 1; }

WORK=$(mktemp -d /tmp/gpuadmit-chart-test.XXXXXX)
PASSED=0 FAILED=0
CLUSTER_UP=0
LIVE_PID=
LIVE_CHART_FLAGS=()
LIVE_AUTH_FLAGS=()   # the Deployment's client-authentication and metrics flags, mapped to files and ports here
LIVE_TLS_FLAGS=()    # the serving certificate: the dev pair of live_start, or (live_renewal) the chart's Secret as mounted
LIVE_CA=             # the CA that signed it, for this script's own calls
RENEW_LOOP_PID=      # live_renewal's loop of dry-run creates
cleanup() {
  if [[ -n $LIVE_PID ]]; then kill "$LIVE_PID" 2>/dev/null; wait "$LIVE_PID" 2>/dev/null; fi
  if [[ -n $RENEW_LOOP_PID ]]; then kill "$RENEW_LOOP_PID" 2>/dev/null; wait "$RENEW_LOOP_PID" 2>/dev/null; fi
  if ((CLUSTER_UP)); then GPUADMIT_E2E_STATE=$WORK/cp "$ROOT/tests/e2e/cluster.sh" down >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# check NAME CMD...: run CMD (output to a log), print PASS/FAIL with the time; on failure the log's tail.
check() {
  local name=$1 t0=$SECONDS rc=0; shift
  "$@" >"$WORK/check.log" 2>&1 || rc=$?
  if ((rc == 0)); then
    PASSED=$((PASSED + 1)); printf 'PASS  %-60s %3ss\n' "$name" $((SECONDS - t0))
  else
    FAILED=$((FAILED + 1)); printf 'FAIL  %-60s %3ss\n' "$name" $((SECONDS - t0))
    tail -n 40 "$WORK/check.log" | sed 's/^/      /'
  fi
}

# expect_fail NAME MESSAGE-REGEX HELM-ARGS...: `helm template` must fail and say MESSAGE.
expect_fail() {
  local out rc=0
  out=$("$HELM" template "$NS" "$CHART" -n "$NS" "${@:2}" 2>&1) && rc=0 || rc=$?
  if ((rc == 0)); then echo "helm template $* succeeded; it must fail"; return 1; fi
  grep -Eq -- "$1" <<<"$out" || { echo "helm template failed, but without /$1/:"; echo "$out"; return 1; }
  echo "$out"
}

render() { "$HELM" template "$NS" "$CHART" -n "$NS" "$@"; }

# webhooks.workloads podSpecs: the schema refuses a containers member that is no member path ($.model, a
# replicas reference), a resources member that is a path, fields and metadata refs that are no ref (a
# template path, $ without a path), and a site without its path.
podspecs_schema() {
  local w='{"apiGroup":"example.com","apiVersion":"v1","resources":["servers"],"podSpecs":[%s]}'
  expect_fail "at '/webhooks/workloads/0/podSpecs/0/containers/0'" \
    --set-json "webhooks.workloads=[$(printf "$w" '{"path":"spec.predictor","containers":["$.model"]}')]" &&
    expect_fail "at '/webhooks/workloads/0/podSpecs/0/resources'" \
      --set-json "webhooks.workloads=[$(printf "$w" '{"path":"spec","containers":["@"],"resources":"spec.resources"}')]" &&
    expect_fail "at '/webhooks/workloads/0/podSpecs/0/fields/1'" \
      --set-json "webhooks.workloads=[$(printf "$w" '{"path":"spec","fields":["@","spec.tasks[*]"]}')]" &&
    expect_fail "at '/webhooks/workloads/0/podSpecs/0/metadata/0'" \
      --set-json "webhooks.workloads=[$(printf "$w" '{"path":"spec","metadata":["$"]}')]" &&
    expect_fail "at '/webhooks/workloads/0/podSpecs/0': missing property 'path'" \
      --set-json "webhooks.workloads=[$(printf "$w" '{"containers":["model"]}')]"
}

lint_and_invariants() {
  local f=$1
  "$HELM" lint --strict "$CHART" -n "$NS" -f "$f" || return 1
  render -f "$f" >"$WORK/rendered.yaml" || return 1
  python3 "$HERE/check_manifests.py" "$WORK/rendered.yaml" "$NS"
}

policies_valid() {
  "$BIN" policy validate "$ROOT"/deploy/policies/*.yaml || return 1
  # Each preset's ConfigMap holds its file, and the chart's copies are deploy/policies' byte for byte.
  local preset file
  for preset in warn-only:warn-only-rollout strict:strict kubeflow:kubeflow; do
    file=${preset#*:}
    cmp "$CHART/files/policies/$file.yaml" "$ROOT/deploy/policies/$file.yaml" || return 1
    render --set policy.preset="${preset%%:*}" --show-only templates/configmap-policy.yaml |
      python3 -c 'import sys,yaml; print(yaml.safe_load(sys.stdin)["data"]["policy.yaml"], end="")' >"$WORK/policy.yaml" || return 1
    cmp "$WORK/policy.yaml" "$ROOT/deploy/policies/$file.yaml" || { echo "preset ${preset%%:*} is not $file.yaml"; return 1; }
  done
  [[ $(ls "$CHART"/files/policies/*.yaml | wc -l) == 3 ]] || { echo "files/policies holds a policy no preset names"; return 1; }
  # What the chart puts in its ConfigMap (default and from values) is a valid policy too.
  local f
  for f in "$CHART/ci/default-values.yaml" "$CHART/ci/single-replica-values.yaml"; do
    render -f "$f" --show-only templates/configmap-policy.yaml |
      python3 -c 'import sys,yaml; print(yaml.safe_load(sys.stdin)["data"]["policy.yaml"], end="")' >"$WORK/policy.yaml" || return 1
    "$BIN" policy validate "$WORK/policy.yaml" || return 1
  done
}

# The chart's default ConfigMap policy overrides nothing: `gpuadmit check` answers the same with it as
# with the embedded default, for the e2e scenarios' manifests (pods, claims).
default_policy_is_builtin() {
  local m a b rc=0
  for m in "$ROOT"/tests/e2e/scenarios/*/manifest.yaml; do
    a=$("$BIN" check -f "$m" 2>&1) || true
    b=$("$BIN" check -f "$m" --policy "$CHART/files/default-policy.yaml" 2>&1) || true
    [[ $a == "$b" ]] || { echo "$m: verdicts differ"; diff <(echo "$a") <(echo "$b"); rc=1; }
  done
  return "$rc"
}

# ci/other-clusters-values.yaml: no runAsUser/runAsGroup/fsGroup anywhere (the helm test and the uninstall
# hook included), the server on the host network with ClusterFirstWithHostNet, and the extra label and
# annotation on both webhook configurations.
other_clusters_rendered() {
  render -f "$CHART/ci/other-clusters-values.yaml" | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
text = yaml.safe_dump_all(docs)
problems = [k for k in ("runAsUser", "runAsGroup", "fsGroup") if k in text]
dep = [d for d in docs if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]
if dep.get("hostNetwork") is not True or dep.get("dnsPolicy") != "ClusterFirstWithHostNet":
    problems.append("hostNetwork/dnsPolicy")
if dep["containers"][0]["ports"][0]["containerPort"] != 9443:
    problems.append("port")
hooks = [d for d in docs if d["kind"].endswith("WebhookConfiguration")]
for h in hooks:
    if h["metadata"]["labels"].get("admissions.enforcer/disabled") != "true" or \
            "argocd.argoproj.io/compare-options" not in h["metadata"].get("annotations", {}):
        problems.append(h["kind"] + " labels/annotations")
print("problems:", problems or "none", "in", len(docs), "objects")
sys.exit(1 if problems or len(hooks) != 2 else 0)'
}

# The PrometheusRule, rendered for both failure policies, passes `promtool check rules` (PromQL and the
# annotation templates); its alerts pass the unit tests in prometheus/rules-test.yaml.
prometheus_rules() {
  local policy
  for policy in Ignore Fail; do
    render --set prometheusRule.enabled=true --set webhooks.validate.failurePolicy="$policy" \
      --show-only templates/prometheusrule.yaml |
      python3 -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(sys.stdin)["spec"], sys.stdout)' >"$WORK/rules.yaml" || return 1
    "$PROMTOOL" check rules "$WORK/rules.yaml" || return 1
  done
  mkdir -p "$WORK/promtest"
  render --set prometheusRule.enabled=true --show-only templates/prometheusrule.yaml | python3 -c '
import sys, yaml
spec = yaml.safe_load(sys.stdin)["spec"]
for group in spec["groups"]:
    for rule in group["rules"]:
        rule.pop("annotations", None)
yaml.safe_dump(spec, sys.stdout)' >"$WORK/promtest/rules.yaml" || return 1
  cp "$HERE/prometheus/rules-test.yaml" "$WORK/promtest/" && "$PROMTOOL" test rules "$WORK/promtest/rules-test.yaml"
}

# The dashboard is JSON whose every query is valid PromQL (checked as recording rules, Grafana's
# $__rate_interval and $namespace filled in), and every gpuadmit_* series the dashboard and the alerts
# name is one the server exports.
dashboard_and_metric_names() {
  render --set grafanaDashboard.enabled=true --set prometheusRule.enabled=true \
    --show-only templates/grafana-dashboard.yaml --show-only templates/prometheusrule.yaml >"$WORK/observability.yaml" || return 1
  python3 - "$WORK/observability.yaml" "$WORK/dashboard-rules.yaml" "$ROOT" <<'PY' || return 1
import json, pathlib, re, sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
dashboard = json.loads(docs["ConfigMap"]["data"]["gpuadmit.json"])
exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
rules = [{"record": f"dashboard_query_{i}", "expr": e.replace("$__rate_interval", "5m").replace("$namespace", "gpuadmit")}
         for i, e in enumerate(exprs)]
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(sys.argv[2], "w"))
text = "\n".join(exprs) + json.dumps(docs["PrometheusRule"]["spec"])
named = {re.sub(r"_(bucket|sum|count)$", "", m) for m in re.findall(r"\bgpuadmit_[a-z_]+", text)}
source = "".join(p.read_text() for d in ("src", "include") for p in pathlib.Path(sys.argv[3], d).rglob("*.[ch]pp"))
missing = sorted(n for n in named if not re.search(re.escape(n) + r"(?![a-z_])", source))
print(f"{len(exprs)} dashboard queries; gpuadmit series named: {sorted(named)}")
sys.exit(f"not exported by the server: {missing}" if missing else 0)
PY
  "$PROMTOOL" check rules "$WORK/dashboard-rules.yaml"
}

priority_quota_rendered() {
  local out
  out=$(render --show-only templates/resourcequota.yaml --set replicas=3) || return 1
  echo "$out"
  grep -q 'pods: "6"' <<<"$out" && grep -q 'values: \["system-cluster-critical"\]' <<<"$out" || return 1
  out=$(render --show-only templates/resourcequota.yaml --set priorityClassQuota.pods=9) && grep -q 'pods: "9"' <<<"$out" || return 1
  ! render --show-only templates/resourcequota.yaml --set priorityClassName= >/dev/null 2>&1 || { echo "rendered without a class"; return 1; }
  ! render --show-only templates/resourcequota.yaml --set priorityClassQuota.enabled=false >/dev/null 2>&1 || { echo "rendered when off"; return 1; }
}

# deploy/gpuadmit.yaml runs the background audit (--audit-interval), so deploy/ holds the PolicyReport CRD
# it writes to, the chart's crds/ file byte for byte, and gpuadmit.yaml's header says to create it.
deploy_ships_report_crd() {
  grep -q -- '--audit-interval' "$ROOT/deploy/gpuadmit.yaml" || return 0
  [[ -f $ROOT/deploy/policyreport-crd.yaml ]] || { echo "deploy/policyreport-crd.yaml is missing"; return 1; }
  cmp <(grep -v '^#' "$CHART/crds/policyreports.yaml") <(grep -v '^#' "$ROOT/deploy/policyreport-crd.yaml") || return 1
  grep -q 'kubectl create -f deploy/policyreport-crd.yaml' "$ROOT/deploy/gpuadmit.yaml" ||
    { echo "deploy/gpuadmit.yaml's header does not say to create the PolicyReport CRD"; return 1; }
}

# The policy CRDs have one source, `gpuadmit policy crds`: files/policy-crds.json is its output byte for
# byte (regenerate: BIN policy crds >charts/gpuadmit/files/policy-crds.json, then deploy/render.sh); the chart
# renders exactly its items, adding only the chart's labels and helm.sh/resource-policy: keep; crds.install=false
# renders none. deploy/policy-crds.yaml is checked by `deploy/render.sh --check`.
policy_crds_in_chart() {
  "$BIN" policy crds >"$WORK/policy-crds.json" || return 1
  cmp "$WORK/policy-crds.json" "$CHART/files/policy-crds.json" ||
    { echo "charts/gpuadmit/files/policy-crds.json differs from \`gpuadmit policy crds\`: run $BIN policy crds >charts/gpuadmit/files/policy-crds.json"; return 1; }
  render --show-only templates/crds.yaml >"$WORK/crds.yaml" || return 1
  python3 - "$WORK/crds.yaml" "$WORK/policy-crds.json" <<'PY' || return 1
import json, sys, yaml
rendered = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
want = json.load(open(sys.argv[2]))["items"]
problems = []
for r in rendered:
    meta = r["metadata"]
    if meta.get("annotations") != {"helm.sh/resource-policy": "keep"}:
        problems.append(f"{meta['name']}: annotations {meta.get('annotations')}")
    if meta.get("labels", {}).get("app.kubernetes.io/part-of") != "gpuadmit":
        problems.append(f"{meta['name']}: no chart labels")
    r["metadata"] = {k: v for k, v in meta.items() if k not in ("labels", "annotations")}
if rendered != want:
    problems.append("the rendered CRDs are not gpuadmit policy crds' items (less labels and annotations)")
print("rendered:", [r["metadata"]["name"] for r in rendered], "problems:", problems or "none")
sys.exit(1 if problems else 0)
PY
  ! render --set crds.install=false --show-only templates/crds.yaml >/dev/null 2>&1 || { echo "crds.install=false still renders CRDs"; return 1; }
}

# The Deployment passes `gpuadmit serve` only flags it knows (--help lists them): with policyObjects on and off,
# and with client authentication and the metrics port; each with the certificate renewal flags (the default).
serve_flags_known() {
  local help flags flag rc=0 values
  help=$("$BIN" serve --help 2>&1) || true
  for values in "policyObjects.enabled=true" "policyObjects.enabled=false" \
    "clientAuth.enabled=true,clientAuth.existingConfigMap=ca,metrics.port=9443"; do
    flags=$(render --set "$values" --set server.threads=2 --show-only templates/deployment.yaml | python3 -c '
import sys, yaml
d = yaml.safe_load(sys.stdin)
print("\n".join(a.split("=")[0] for a in d["spec"]["template"]["spec"]["containers"][0]["args"][1:]))') || return 1
    for flag in $flags; do
      grep -q -- "^ *$flag\b" <<<"$help" || { echo "$values: the chart passes $flag, which \`$(basename "$BIN") serve --help\` does not list"; rc=1; }
    done
  done
  ((rc == 0)) && echo "all flags listed by serve --help"
  return "$rc"
}

# policyObjects: on (default) the flags, the RBAC rules and the policy webhook; off none of them (check_manifests.py
# checks that the three agree); clusterPolicyName reaches the flag.
policy_objects_rendered() {
  local out
  render --set policyObjects.enabled=false >"$WORK/po-off.yaml" || return 1
  python3 "$HERE/check_manifests.py" "$WORK/po-off.yaml" "$NS" || return 1
  ! grep -q -- '--policy-objects' "$WORK/po-off.yaml" || { echo "policyObjects.enabled=false still passes --policy-objects"; return 1; }
  out=$(render --set policyObjects.clusterPolicyName=team-gpus --show-only templates/deployment.yaml) || return 1
  grep -q -- '- --cluster-policy-name=team-gpus$' <<<"$out" || { echo "clusterPolicyName not passed"; return 1; }
  # matchConditions and Fail on the pod webhooks do not reach the policy webhook (check_manifests.py).
  render --set webhooks.matchConditions.enabled=true --set webhooks.validate.failurePolicy=Fail \
    --set-string 'webhooks.namespaceSelector.matchLabels.pilot=true' --set 'webhooks.objectSelector.matchLabels.a=b' >"$WORK/po-mc.yaml" &&
    python3 "$HERE/check_manifests.py" "$WORK/po-mc.yaml" "$NS"
}

# clientAuth: off (default) no --client-ca-file, volume or ConfigMap; on, the flag reads ca.crt of a read-only
# volume from the chart's ConfigMap (holding caBundle's PEM as given), an existing ConfigMap or an existing
# Secret (the key mapped to ca.crt); check_manifests.py checks that flag, mount and volume agree.
client_auth_rendered() {
  local out source
  out=$(render) || return 1
  ! grep -Eq -- '--client-ca-file|client-ca' <<<"$out" || { echo "clientAuth off still renders client-ca"; return 1; }
  python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["clientAuth"]["caBundle"], end="")' \
    "$CHART/ci/client-auth-values.yaml" >"$WORK/client-ca.pem" || return 1
  for source in caBundle existingConfigMap existingSecret; do
    case $source in
      caBundle) render --set clientAuth.enabled=true --set-file clientAuth.caBundle="$WORK/client-ca.pem" >"$WORK/ca.yaml" ;;
      existingConfigMap) render --set clientAuth.enabled=true --set clientAuth.existingConfigMap=team-ca --set clientAuth.key=bundle.pem >"$WORK/ca.yaml" ;;
      existingSecret) render --set clientAuth.enabled=true --set clientAuth.existingSecret=apiserver-client-ca >"$WORK/ca.yaml" ;;
    esac || return 1
    python3 "$HERE/check_manifests.py" "$WORK/ca.yaml" "$NS" || return 1
    python3 - "$WORK/ca.yaml" "$source" "$WORK/client-ca.pem" <<'PY' || return 1
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
source, pem = sys.argv[2], open(sys.argv[3]).read()
spec = [d for d in docs if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]
vol = [v for v in spec["volumes"] if v["name"] == "client-ca"][0]
cms = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-client-ca")]
want = {
    "caBundle": {"configMap": {"name": "gpuadmit-client-ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    "existingConfigMap": {"configMap": {"name": "team-ca", "items": [{"key": "bundle.pem", "path": "ca.crt"}]}},
    "existingSecret": {"secret": {"secretName": "apiserver-client-ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
}[source]
vol = {k: v for k, v in vol.items() if k != "name"}
problems = []
if vol != want:
    problems.append(f"volume {vol}, want {want}")
if "--client-ca-file=/etc/gpuadmit/client-ca/ca.crt" not in spec["containers"][0]["args"]:
    problems.append("no --client-ca-file=/etc/gpuadmit/client-ca/ca.crt")
if source == "caBundle" and [c["data"]["ca.crt"].strip() for c in cms] != [pem.strip()]:
    problems.append("the chart's ConfigMap does not hold caBundle as given")
if source != "caBundle" and cms:
    problems.append("a client-ca ConfigMap rendered although an existing source is named")
print(source, "problems:", problems or "none")
sys.exit(1 if problems else 0)
PY
  done
}

# metrics.port: 0, /metrics and the probes on the https port (ServiceMonitor too); on (default 8444),
# --metrics-listen, a container port and a Service port named metrics, the probes, the ServiceMonitor scraping it
# and the NetworkPolicy admitting it from networkPolicy.metricsFrom (check_manifests.py checks the ports and
# probes; here the default, the flag and the sources).
metrics_port_rendered() {
  render >"$WORK/m-default.yaml" || return 1
  grep -q -- '--metrics-listen=0.0.0.0:8444' "$WORK/m-default.yaml" || { echo "the default does not pass --metrics-listen=0.0.0.0:8444"; return 1; }
  render --set serviceMonitor.enabled=true --set networkPolicy.enabled=true --set metrics.port=0 >"$WORK/m-off.yaml" &&
    python3 "$HERE/check_manifests.py" "$WORK/m-off.yaml" "$NS" || return 1
  ! grep -q -- '--metrics-listen' "$WORK/m-off.yaml" || { echo "metrics.port 0 still passes --metrics-listen"; return 1; }
  render -f "$CHART/ci/client-auth-values.yaml" >"$WORK/m-on.yaml" && python3 "$HERE/check_manifests.py" "$WORK/m-on.yaml" "$NS" || return 1
  python3 - "$WORK/m-on.yaml" <<'PY'
import sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
args = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
rules = docs["NetworkPolicy"]["spec"]["ingress"]
metrics_rule = [r for r in rules if r["ports"] == [{"port": "metrics", "protocol": "TCP"}]]
problems = []
if "--metrics-listen=0.0.0.0:9443" not in args:
    problems.append("no --metrics-listen=0.0.0.0:9443")
if len(metrics_rule) != 1 or metrics_rule[0].get("from") != [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]:
    problems.append(f"the metrics port's NetworkPolicy rule is not networkPolicy.metricsFrom: {metrics_rule}")
print("problems:", problems or "none")
sys.exit(1 if problems else 0)
PY
}

# optOutGuard: on by default, guarding webhooks.namespaceSelector.optOutLabel for allowedGroups and
# allowedUsers; nothing when off, without a label, or for a Kubernetes before 1.30 (no
# ValidatingAdmissionPolicy v1); neither a group nor a user fails (the live behaviour: opt_out_guard).
opt_out_guard_rendered() {
  local out
  out=$(render --show-only templates/opt-out-guard.yaml --set webhooks.namespaceSelector.optOutLabel=example.com/off \
    --set 'optOutGuard.allowedGroups={admins,platform}') || return 1
  grep -q '"example.com/off" in object.metadata.labels' <<<"$out" &&
    grep -q 'request.userInfo.groups.exists(g, g in \["admins","platform"\])' <<<"$out" &&
    grep -q 'kind: ValidatingAdmissionPolicyBinding' <<<"$out" || { echo "$out"; return 1; }
  for set in optOutGuard.enabled=false webhooks.namespaceSelector.optOutLabel=; do
    out=$(render --set "$set" | grep -c 'kind: ValidatingAdmissionPolicy' || true)
    [[ $out == 0 ]] || { echo "$set still renders the guard"; return 1; }
  done
  out=$(render --kube-version 1.29.0 | grep -c 'kind: ValidatingAdmissionPolicy' || true)
  [[ $out == 0 ]] || { echo "Kubernetes 1.29 gets the guard"; return 1; }
  echo "rendered for the label and groups given; not when off, without a label, nor for 1.29"
}

# certificates.helm.renew: on (default), the Secret holds ca.key beside ca.crt, tls.crt and tls.key, ca.key is
# ca.crt's key, ca.crt (alone the caBundle of every webhook) signed tls.crt, the CA lives caValidityDays and the
# certificate validityDays; the Deployment passes --renew-secret and --renew-before; a Role and RoleBinding exist.
# Without renew and caValidityDays (what `helm upgrade --reuse-values` from a chart before them passes) the
# same as their defaults. Off, and with cert-manager or an existing Secret: no ca.key, no renew flags, no Role.
# check_manifests.py checks each rendering too: the volume projects tls.crt and tls.key only, the flag names the
# mounted Secret, the Role may get and patch that Secret alone.
certificate_renewal_rendered() {
  local values rc=0
  while read -r values; do
    # shellcheck disable=SC2086 # one --set per word
    render $values >"$WORK/renew.yaml" || return 1
    python3 "$HERE/check_manifests.py" "$WORK/renew.yaml" "$NS" || return 1
    python3 - "$WORK/renew.yaml" "$WORK" "$values" <<'PY' || rc=1
import base64, datetime, subprocess, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
work, values = sys.argv[2], sys.argv[3]
by = lambda kind: [d for d in docs if d["kind"] == kind]
args = by("Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["args"]
renew = "renew.enabled=false" not in values and "certificates.helm.enabled=false" not in values
problems = []
flags = [a for a in args if a.startswith("--renew-")]
before = values.split("renew.before=")[1].split()[0] if "renew.before=" in values else "720h"
want_flags = ["--renew-secret=gpuadmit/gpuadmit-tls", f"--renew-before={before}"] if renew else []
if flags != want_flags:
    problems.append(f"flags {flags}, want {want_flags}")
# (The background audit's Role and RoleBinding, <fullname>-audit, are audit_rendered's.)
roles = [d["metadata"]["name"] for d in by("Role") + by("RoleBinding") if "helm.sh/hook" not in d["metadata"].get("annotations", {})
         and not d["metadata"]["name"].endswith("-audit")]
if roles != (["gpuadmit-certificate-renewal"] * 2 if renew else []):
    problems.append(f"Role and RoleBinding {roles}")
secrets = [d for d in by("Secret") if d["metadata"]["name"] == "gpuadmit-tls"]
if secrets:
    data = secrets[0]["data"]
    want_keys = ["ca.crt", "ca.key", "tls.crt", "tls.key"] if renew else ["ca.crt", "tls.crt", "tls.key"]
    if sorted(data) != want_keys:
        problems.append(f"Secret keys {sorted(data)}, want {want_keys}")
    for k in data:
        open(f"{work}/renew-{k}", "wb").write(base64.b64decode(data[k]))
    bundles = {w["clientConfig"].get("caBundle") for d in by("MutatingWebhookConfiguration") + by("ValidatingWebhookConfiguration") for w in d["webhooks"]}
    if bundles != {data["ca.crt"]}:
        problems.append("a caBundle is not the Secret's ca.crt")
    run = lambda *a: subprocess.run(a, capture_output=True, text=True)
    if run("openssl", "verify", "-CAfile", f"{work}/renew-ca.crt", f"{work}/renew-tls.crt").returncode:
        problems.append("ca.crt did not sign tls.crt")
    if renew and run("openssl", "x509", "-noout", "-pubkey", "-in", f"{work}/renew-ca.crt").stdout != \
            run("openssl", "pkey", "-pubout", "-in", f"{work}/renew-ca.key").stdout:
        problems.append("ca.key is not ca.crt's key")
    def days(f):
        out = run("openssl", "x509", "-noout", "-startdate", "-enddate", "-in", f).stdout
        t = [datetime.datetime.strptime(l.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z") for l in out.splitlines()]
        return round((t[1] - t[0]).total_seconds() / 86400)
    want_days = (int(values.split("validityDays=")[1].split()[0]) if "helm.validityDays=" in values else 365, 3650)
    if (days(f"{work}/renew-tls.crt"), days(f"{work}/renew-ca.crt")) != want_days:
        problems.append(f"lifetimes (certificate, CA) {(days(f'{work}/renew-tls.crt'), days(f'{work}/renew-ca.crt'))} days, want {want_days}")
print(f"{values or '(defaults)'}: renew flags {flags}; Role, RoleBinding {roles}; Secret keys {sorted(secrets[0]['data']) if secrets else '-'}; problems: {problems or 'none'}")
sys.exit(1 if problems else 0)
PY
  done <<'VALUES'

--set certificates.helm.validityDays=1 --set certificates.helm.renew.before=23h59m
--set certificates.helm.renew=null --set certificates.helm.caValidityDays=null
--set certificates.helm.renew.enabled=false
--set certificates.helm.enabled=false --set certificates.certManager.enabled=true
--set certificates.helm.enabled=false --set certificates.existingSecret.name=gpuadmit-tls --set certificates.existingSecret.caBundle=Cg==
VALUES
  return "$rc"
}

# audit (the background audit, `serve --audit-interval`): on (default) the Deployment passes --audit-interval=1h and
# --audit-lease=<namespace>/<fullname>-audit with POD_NAME and POD_NAMESPACE, and the audit's ClusterRole, Role
# and bindings exist (check_manifests.py checks their exact rules: list of pods and of every kind the webhooks
# route, the PolicyReports' get/list/create/patch/delete, create of leases and get/update of that Lease); off, no
# --audit flag and none of those objects; without audit values (`helm upgrade --reuse-values` from a chart before
# them) as on; rbac.create=false keeps the flags and makes no RBAC; another release and namespace name their Lease.
audit_rendered() {
  local values ns release rc=0
  while read -r release ns values; do
    # shellcheck disable=SC2086 # one --set per word
    "$HELM" template "$release" "$CHART" -n "$ns" $values >"$WORK/audit.yaml" || return 1
    python3 "$HERE/check_manifests.py" "$WORK/audit.yaml" "$ns" || return 1
    python3 - "$WORK/audit.yaml" "$release" "$ns" "$values" <<'PY' || rc=1
import re, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
release, ns, values = sys.argv[2], sys.argv[3], sys.argv[4]
full = release if "gpuadmit" in release else f"{release}-gpuadmit"
on = "audit.enabled=false" not in values
rbac = "rbac.create=false" not in values
interval = values.split("audit.interval=")[1].split()[0] if "audit.interval=" in values else "1h"
c = [d for d in docs if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]["containers"][0]
flags = [a for a in c["args"] if a.startswith("--audit")]
want_flags = [f"--audit-interval={interval}", f"--audit-lease={ns}/{full}-audit"] if on else []
objects = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs if d["metadata"]["name"] == f"{full}-audit")
want_objects = sorted(f"{k}/{full}-audit" for k in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")) if on and rbac else []
env = [(e["name"], e["valueFrom"]["fieldRef"]["fieldPath"]) for e in c.get("env", [])[:2]]
problems = []
if flags != want_flags:
    problems.append(f"flags {flags}, want {want_flags}")
if objects != want_objects:
    problems.append(f"objects {objects}, want {want_objects}")
if env != [("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace")]:
    problems.append(f"env {env}")
# Off: no flag, and no line of any object (comments aside) naming --audit-interval or --audit-lease.
if not on and re.search(r"(?m)^[^#\n]*--audit-(interval|lease)", open(sys.argv[1]).read()):
    problems.append("audit.enabled=false still renders an --audit flag")
print(f"{release} -n {ns} {values or '(defaults)'}: flags {flags}; objects {objects}; problems: {problems or 'none'}")
sys.exit(1 if problems else 0)
PY
  done <<'VALUES'
gpuadmit gpuadmit
gpuadmit gpuadmit --set audit.enabled=false
gpuadmit gpuadmit --set audit.enabled=false --set certificates.helm.renew.enabled=false --set policyObjects.enabled=false
gpuadmit gpuadmit --set audit.interval=90s
gpuadmit gpuadmit --set audit=null
gpuadmit gpuadmit --set rbac.create=false
team team-ml --set audit.interval=10m
VALUES
  return "$rc"
}

# The PolicyReport CRD in crds/ (installed by `helm install` when missing, never by templates): the upstream file
# its header names (source URL and commit), byte for byte after the header (the sha256 the header states);
# v1alpha2 alone, served and stored (as Kyverno's and Policy Reporter's); tests/e2e/crds/policyreports.yaml is
# the same file; `helm template --include-crds` adds it and nothing else renders it.
policyreport_crd() {
  local crd=$CHART/crds/policyreports.yaml with without
  cmp "$crd" "$ROOT/tests/e2e/crds/policyreports.yaml" ||
    { echo "tests/e2e/crds/policyreports.yaml differs from charts/gpuadmit/crds/policyreports.yaml"; return 1; }
  [[ $(ls "$CHART/crds") == policyreports.yaml ]] || { echo "crds/ holds more than the PolicyReport CRD: $(ls "$CHART/crds")"; return 1; }
  python3 - "$crd" <<'PY' || return 1
import hashlib, re, sys, yaml
lines = open(sys.argv[1], "rb").read().split(b"\n")
header = []
while lines and lines[0].startswith(b"#"):
    header.append(lines.pop(0).decode())
body, header = b"\n".join(lines), "\n".join(header)
problems = []
source = re.search(r"https://github\.com/kubernetes-sigs/wg-policy-prototypes/blob/([0-9a-f]{40})/policy-report/crd/v1alpha2/wgpolicyk8s\.io_policyreports\.yaml", header)
digest = re.search(r"\b([0-9a-f]{64})\b", header)
if not source or f"commit {source.group(1)}" not in header:
    problems.append("the header names no source URL of wg-policy-prototypes' v1alpha2 CRD with its commit")
if not digest or hashlib.sha256(body).hexdigest() != digest.group(1):
    problems.append(f"the body's sha256 {hashlib.sha256(body).hexdigest()} is not the header's {digest.group(1) if digest else None}")
docs = [d for d in yaml.safe_load_all(body) if d]
if [(d["kind"], d["metadata"]["name"]) for d in docs] != [("CustomResourceDefinition", "policyreports.wgpolicyk8s.io")]:
    problems.append(f"want the one CRD policyreports.wgpolicyk8s.io, got {[d['metadata']['name'] for d in docs]}")
else:
    versions = [(v["name"], v["served"], v["storage"]) for v in docs[0]["spec"]["versions"]]
    if versions != [("v1alpha2", True, True)] or docs[0]["spec"]["scope"] != "Namespaced":
        problems.append(f"want v1alpha2 alone, served and stored, Namespaced; got {versions}")
print("source", source.group(0) if source else None, "problems:", problems or "none")
sys.exit(1 if problems else 0)
PY
  with=$(render --include-crds | grep -c '^  name: policyreports.wgpolicyk8s.io$')
  without=$(render | grep -c '^  name: policyreports.wgpolicyk8s.io$')
  echo "policyreports.wgpolicyk8s.io rendered: $with time(s) with --include-crds, $without without"
  [[ $with == 1 && $without == 0 ]]
}

phase_static() {
  local f
  for f in "$CHART"/ci/*.yaml; do
    check "lint+template+invariants $(basename "$f" .yaml)" lint_and_invariants "$f"
  done
  check "misspelled top-level value fails (replica)" \
    expect_fail "additional properties 'replica' not allowed" --set replica=3
  check "misspelled nested value fails (webhooks.mutate.failurPolicy)" \
    expect_fail "at '/webhooks/mutate': additional properties 'failurPolicy' not allowed" --set webhooks.mutate.failurPolicy=Fail
  check "wrong enum value fails (failurePolicy=fail)" \
    expect_fail "/webhooks/validate/failurePolicy" --set webhooks.validate.failurePolicy=fail
  check "misspelled key inside objectSelector fails" \
    expect_fail "at '/webhooks/objectSelector': additional properties 'matchExpresions' not allowed" --set 'webhooks.objectSelector.matchExpresions[0].key=a'
  check "timeout above 10 s fails" expect_fail "timeoutSeconds" --set webhooks.validate.timeoutSeconds=11
  check "webhooks.workloads podSpecs: a containers member that is no member path, a resources path, fields/metadata that are no refs, a site without path fail (schema)" \
    podspecs_schema
  check "policyObjects.clusterPolicyName that is no object name fails" \
    expect_fail "/policyObjects/clusterPolicyName" --set policyObjects.clusterPolicyName=Default_Policy
  check "policy CRDs: files/policy-crds.json = gpuadmit policy crds; rendered as its items + labels + keep; none when off" \
    policy_crds_in_chart
  check "policyObjects: flags, RBAC and policy webhook together, none when off; selectors and matchConditions never on it" \
    policy_objects_rendered
  check "clientAuth: --client-ca-file reads ca.crt of the mounted CA (caBundle's ConfigMap, existing ConfigMap, Secret); none when off" \
    client_auth_rendered
  check "metrics.port: --metrics-listen, container and Service port metrics, ServiceMonitor and NetworkPolicy on it" \
    metrics_port_rendered
  check "certificates.helm.renew: ca.key kept, --renew-secret/--renew-before and a Role on; none of them when off or with another source" \
    certificate_renewal_rendered
  check "renew.before not shorter than validityDays fails" \
    expect_fail "certificates.helm.renew.before \(24h\) must be shorter than the serving certificate's lifetime" \
    --set certificates.helm.validityDays=1 --set certificates.helm.renew.before=24h
  check "renew.before that is no h/m/s duration fails (schema)" \
    expect_fail "at '/certificates/helm/renew/before'" --set certificates.helm.renew.before=30d
  check "audit: --audit-interval/--audit-lease, POD_NAME/POD_NAMESPACE and the audit's ClusterRole and Role on; no flag or RBAC off" \
    audit_rendered
  check "audit.interval below 10s fails" expect_fail "audit.interval \(9s\) must be at least 10s" --set audit.interval=9s
  check "audit.interval that is no h/m/s duration fails (schema)" expect_fail "at '/audit/interval'" --set audit.interval=1d
  check "PolicyReport CRD in crds/: the upstream v1alpha2 file its header names (sha256), = tests/e2e/crds; only with --include-crds" \
    policyreport_crd
  check "validityDays above caValidityDays fails" \
    expect_fail "certificates.helm.validityDays \(4000\) must not exceed certificates.helm.caValidityDays \(3650\)" \
    --set certificates.helm.validityDays=4000
  check "clientAuth.enabled without a CA fails" expect_fail "clientAuth.enabled needs the CA" --set clientAuth.enabled=true
  check "two client CA sources fail" \
    expect_fail "contradictory values: clientAuth.caBundle and clientAuth.existingSecret" --set clientAuth.caBundle=x --set clientAuth.existingSecret=s
  check "clientAuth.caBundle that is not PEM (base64) fails" \
    expect_fail "clientAuth.caBundle must be PEM" --set clientAuth.enabled=true --set clientAuth.caBundle=Cg==
  check "optOutGuard: a ValidatingAdmissionPolicy for the opt-out label by default; none off, without a label, before 1.30" \
    opt_out_guard_rendered
  check "optOutGuard with neither a group nor a user fails" expect_fail "optOutGuard.enabled with no allowedGroups nor allowedUsers" \
    --set optOutGuard.allowedGroups=null
  check "metrics.port = server.port fails" expect_fail "metrics.port \(8443\) must differ from server.port" --set metrics.port=8443
  check "metrics.port below 1024 fails (schema)" expect_fail "at '/metrics/port'" --set metrics.port=80
  check "every flag the Deployment passes is one gpuadmit serve --help lists" serve_flags_known
  check "other clusters: no UID set, host network, labels and annotations on both webhooks" other_clusters_rendered
  check "PrometheusRule: promtool check rules (Ignore and Fail) and promtool test rules" prometheus_rules
  check "Grafana dashboard: valid JSON, its queries valid PromQL; every gpuadmit series named is exported" dashboard_and_metric_names
  check "image.digest pulls by digest; a digest that is none fails" bash -c '
    d=sha256:$(printf "%064d" 7)
    "$0" template g "$1" --set image.digest="$d" | grep -q "image: ghcr.io/gpuadmit/gpuadmit@$d\$" &&
      ! "$0" template g "$1" --set image.digest=latest >/dev/null 2>&1' "$HELM" "$CHART"
  check "two certificate sources fail" \
    expect_fail "contradictory values: certificates.helm.enabled and certificates.certManager.enabled" --set certificates.certManager.enabled=true
  check "existing Secret plus helm certificates fail" \
    expect_fail "contradictory values: certificates.helm.enabled and certificates.existingSecret.name" --set certificates.existingSecret.name=s --set certificates.existingSecret.caBundle=Cg==
  check "no certificate source fails" expect_fail "no certificate source" --set certificates.helm.enabled=false
  check "existing Secret without caBundle fails" \
    expect_fail "certificates.existingSecret.caBundle .* is required" --set certificates.helm.enabled=false --set certificates.existingSecret.name=s
  check "policy from values and existingConfigMap fails" \
    expect_fail "policy.existingConfigMap and policy.content are both set" --set policy.existingConfigMap=p --set policy.content=x
  check "install into kube-system fails" \
    bash -c '"$0" template g "$1" -n kube-system 2>&1 | grep -q "cannot be installed in kube-system"' "$HELM" "$CHART"
  check "PDB that blocks every drain fails" expect_fail "podDisruptionBudget.minAvailable \(2\) must be below replicas \(2\)" --set podDisruptionBudget.minAvailable=2
  check "priority-class quota at or below replicas fails" \
    expect_fail "priorityClassQuota.pods \(3\) must be above replicas \(3\)" --set replicas=3 --set priorityClassQuota.pods=3
  check "priority-class quota: twice replicas, scoped to the class; none without a class or when off" priority_quota_rendered
  check "every value documented (values.yaml comments, schema descriptions)" python3 "$HERE/check_values_documented.py" "$CHART"
  check "charts/gpuadmit/README.md is generated from the values (scripts/chart-readme.py --check)" \
    python3 "$ROOT/scripts/chart-readme.py" "$CHART" --check
  check "webhooks.workloads and matchConditions cover what the default policy judges" \
    bash -c '"$0" policy default >"$1/policy-default.yaml" && python3 "$2/check_match_conditions.py" "$3" "$1/policy-default.yaml"' \
    "$BIN" "$WORK" "$HERE" "$CHART"
  check "ClusterRoles and Roles = the RBAC in docs/cluster.md (renewal on and off, audit on and off)" \
    bash -c '"$0" template g "$1" -n gpuadmit >"$2/role.yaml" && python3 "$3/check_rbac_doc.py" "$2/role.yaml" "$4/docs/cluster.md" &&
      "$0" template g "$1" -n gpuadmit --set certificates.helm.renew.enabled=false >"$2/role.yaml" &&
      python3 "$3/check_rbac_doc.py" "$2/role.yaml" "$4/docs/cluster.md" &&
      "$0" template g "$1" -n gpuadmit --set audit.enabled=false >"$2/role.yaml" &&
      python3 "$3/check_rbac_doc.py" "$2/role.yaml" "$4/docs/cluster.md"' \
    "$HELM" "$CHART" "$WORK" "$HERE" "$ROOT"
  check "chart default policy = the built-in default (gpuadmit check gives the same verdicts)" default_policy_is_builtin
  check "deploy/gpuadmit.yaml and deploy/policy-crds.yaml in sync with the chart" "$ROOT/deploy/render.sh" "$HELM" --check
  check "deploy/gpuadmit.yaml: the webhook configurations first (kubectl delete -f removes them before the server)" \
    python3 -c 'import sys, yaml; k = [d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d]; print(k[:3]); sys.exit(sorted(k[:2]) != ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])' "$ROOT/deploy/gpuadmit.yaml"
  check "deploy/gpuadmit.yaml invariants" python3 "$HERE/check_manifests.py" "$ROOT/deploy/gpuadmit.yaml" "$NS"
  check "deploy/ ships the PolicyReport CRD the background audit of deploy/gpuadmit.yaml writes to" deploy_ships_report_crd
  check "example policies and chart policies valid; each policy.preset is its deploy/policies file" policies_valid
  check "Dockerfile: pinned bases, distroless runtime, staged libraries = ldd of the binary" "$HERE/check-dockerfile.sh" "$BIN"
}

# --- cluster -------------------------------------------------------------------------------------
kc() { "$KUBECTL" "$@"; }

cluster_up() {
  local envs
  # One retry: ports are picked at random and other clusters may run on the machine (a lost race shows
  # as "etcd exited during start-up"); `up` cleans up after a failure, `down` removes its state.
  # With kube-controller-manager (the Deployment creates its pods, the quota controller fills in quota
  # status) and GKE's quota admission for the critical priority classes.
  export GPUADMIT_E2E_CONTROLLERS=1 GPUADMIT_E2E_ADMISSION_CONFIG=$HERE/gke-admission.yaml
  envs=$(GPUADMIT_E2E_STATE=$WORK/cp "$ROOT/tests/e2e/cluster.sh" up) || {
    echo "cluster.sh up failed; retrying once"
    GPUADMIT_E2E_STATE=$WORK/cp "$ROOT/tests/e2e/cluster.sh" down || true
    envs=$(GPUADMIT_E2E_STATE=$WORK/cp "$ROOT/tests/e2e/cluster.sh" up) || return 1
  }
  unset GPUADMIT_E2E_CONTROLLERS GPUADMIT_E2E_ADMISSION_CONFIG
  eval "$envs"
  CLUSTER_UP=1
  KUBECTL=$GPUADMIT_E2E_KUBECTL
  export KUBECONFIG
  kc apply -f "$HERE/crds.yaml" &&
    kc wait --for=condition=Established --timeout=60s crd --all &&
    kc create namespace "$NS"
}

dry_run_server() {
  render -f "$1" >"$WORK/rendered.yaml" || return 1
  # Every object, the helm test hooks included, accepted by the real API server (CEL of matchConditions
  # compiled, RBAC, PDB, webhooks validated); nothing stored.
  kc apply --dry-run=server -f "$WORK/rendered.yaml"
}

notes_say() {   # notes_say VALUES-FILE WANT-REGEX DONT-WANT-REGEX
  local out
  out=$("$HELM" install "$NS" "$CHART" -n "$NS" --dry-run=server -f "$1" 2>&1) || { echo "$out"; return 1; }
  out=$(sed -n '/^NOTES:/,$p' <<<"$out")
  echo "$out"
  [[ -z $2 ]] || grep -Eq "$2" <<<"$out" || { echo "NOTES lack /$2/"; return 1; }
  [[ -z $3 ]] || ! grep -Eq "$3" <<<"$out" || { echo "NOTES must not say /$3/"; return 1; }
}

# (Outputs are captured before grep -q: with pipefail, grep -q closing the pipe early can fail the writer.)
helm_install() {
  local status
  "$HELM" install "$NS" "$CHART" -n "$NS" && status=$("$HELM" status "$NS" -n "$NS") &&
    grep -q 'STATUS: deployed' <<<"$status" &&
    kc -n "$NS" get deployment/gpuadmit service/gpuadmit serviceaccount/gpuadmit secret/gpuadmit-tls \
      configmap/gpuadmit-policy poddisruptionbudget/gpuadmit resourcequota/gpuadmit-critical-pods \
      role/gpuadmit-certificate-renewal rolebinding/gpuadmit-certificate-renewal role/gpuadmit-audit rolebinding/gpuadmit-audit &&
    kc get clusterrole/gpuadmit clusterrolebinding/gpuadmit clusterrole/gpuadmit-audit clusterrolebinding/gpuadmit-audit \
      mutatingwebhookconfiguration/mutate.gpuadmit.io validatingwebhookconfiguration/validate.gpuadmit.io \
      validatingadmissionpolicy/gpuadmit-opt-out-guard validatingadmissionpolicybinding/gpuadmit-opt-out-guard &&
    # crds/: the PolicyReport CRD, installed by `helm install` before the templates (none existed).
    kc wait --for=condition=Established --timeout=30s crd/policyreports.wgpolicyk8s.io
}

# The install created both policy CRDs (templates, so Helm owns them: release annotations) and they are Established.
helm_crds_established() {
  local crd owner
  kc wait --for=condition=Established --timeout=30s crd/clustergpupolicies.gpuadmit.io crd/gpupolicies.gpuadmit.io || return 1
  for crd in clustergpupolicies.gpuadmit.io gpupolicies.gpuadmit.io; do
    owner=$(kc get crd "$crd" -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name} {.metadata.annotations.helm\.sh/resource-policy}')
    echo "$crd: release, resource-policy = $owner"
    [[ $owner == "$NS keep" ]] || return 1
  done
}

# The API server refuses a system-cluster-critical pod where no quota covers the class, as GKE does: so
# the next check means something.
critical_pod_refused_without_quota() {
  local out
  kc get namespace chart-no-quota >/dev/null 2>&1 || kc create namespace chart-no-quota || return 1
  if out=$(kc -n chart-no-quota create --dry-run=server -f - 2>&1 <<'POD'
apiVersion: v1
kind: Pod
metadata: {name: critical}
spec:
  priorityClassName: system-cluster-critical
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
POD
  ); then
    echo "created without a quota: $out"; return 1
  fi
  echo "$out"
  grep -q "insufficient quota to match these scopes" <<<"$out"
}

# The installed Deployment gets its pods under that admission: the chart's ResourceQuota covers them.
deployment_pods_created() {
  local i pods
  for ((i = 0; i < 90; i++)); do
    pods=$(kc -n "$NS" get pods -l app.kubernetes.io/name=gpuadmit -o name | wc -l)
    ((pods == 2)) && break
    sleep 1
  done
  kc -n "$NS" get resourcequota -o wide
  kc -n "$NS" get events --field-selector reason=FailedCreate -o custom-columns=MESSAGE:.message
  ((pods == 2)) || { echo "the Deployment has $pods pods, want 2"; return 1; }
}

ca_bundle_matches_secret() {
  local ca m v
  ca=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.ca\.crt}')
  m=$(kc get mutatingwebhookconfiguration mutate.gpuadmit.io -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
  v=$(kc get validatingwebhookconfiguration validate.gpuadmit.io -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
  [[ -n $ca && $ca == "$m" && $ca == "$v" ]] || { echo "secret ca.crt and caBundles differ"; return 1; }
  # The serving certificate is signed by that CA and names the Service.
  base64 -d <<<"$ca" >"$WORK/ca.crt"
  kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.tls\.crt}' | base64 -d >"$WORK/tls.crt"
  local san
  openssl verify -CAfile "$WORK/ca.crt" "$WORK/tls.crt" &&
    san=$(openssl x509 -in "$WORK/tls.crt" -noout -ext subjectAltName) && grep -q "DNS:gpuadmit.$NS.svc" <<<"$san" || return 1
  # certificates.helm.renew (default): the Secret keeps that CA's key, for the server's renewals.
  kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.ca\.key}' | base64 -d >"$WORK/ca.key" || return 1
  cmp <(openssl x509 -noout -pubkey -in "$WORK/ca.crt") <(openssl pkey -pubout -in "$WORK/ca.key") ||
    { echo "the Secret's ca.key is not the key of its ca.crt"; return 1; }
}

# RBAC: what the cluster view, the policy objects (policyObjects.enabled, the default) and the background audit
# (audit.enabled, the default: list of pods and workloads, its PolicyReports, its Lease) need, and what it must
# never have.
rbac() {
  local sa=system:serviceaccount:$NS:gpuadmit rc=0 verb res sub want got
  while read -r want verb res sub; do
    [[ -n $want ]] || continue
    got=$(kc auth can-i "$verb" "$res" ${sub:+--subresource="$sub"} --as="$sa" --all-namespaces 2>/dev/null) || true
    printf '%-4s %-7s %-40s (want %s)\n' "$got" "$verb" "$res${sub:+/$sub}" "$want"
    [[ $got == "$want" ]] || rc=1
  done <<'TABLE'
yes get nodes
yes list nodes
yes watch nodes
yes list resourcequotas
yes watch resourcequotas
yes get persistentvolumeclaims
yes list persistentvolumeclaims
yes watch persistentvolumeclaims
yes list storageclasses.storage.k8s.io
yes watch storageclasses.storage.k8s.io
yes get deviceclasses.resource.k8s.io
yes list deviceclasses.resource.k8s.io
yes watch deviceclasses.resource.k8s.io
yes list resourceslices.resource.k8s.io
yes watch resourceslices.resource.k8s.io
yes list resourceclaims.resource.k8s.io
yes watch resourceclaims.resource.k8s.io
yes list resourceclaimtemplates.resource.k8s.io
yes watch resourceclaimtemplates.resource.k8s.io
yes list nodepools.karpenter.sh
yes watch nodepools.karpenter.sh
no create nodepools.karpenter.sh
no create resourceclaims.resource.k8s.io
no update resourceslices.resource.k8s.io
no get secrets
no list secrets
no list configmaps
no create pods
yes list pods
no get pods
no watch pods
no delete pods
yes list deployments.apps
no get deployments.apps
no watch deployments.apps
no update deployments.apps
yes list jobs.batch
yes list pytorchjobs.kubeflow.org
yes list jobs.batch.volcano.sh
yes get policyreports.wgpolicyk8s.io
yes list policyreports.wgpolicyk8s.io
yes create policyreports.wgpolicyk8s.io
yes patch policyreports.wgpolicyk8s.io
yes delete policyreports.wgpolicyk8s.io
no update policyreports.wgpolicyk8s.io
no watch policyreports.wgpolicyk8s.io
no create leases.coordination.k8s.io
no update leases.coordination.k8s.io
no update nodes
no patch nodes
no create persistentvolumeclaims
no delete persistentvolumeclaims
no update resourcequotas
no create storageclasses.storage.k8s.io
no create mutatingwebhookconfigurations.admissionregistration.k8s.io
no update validatingwebhookconfigurations.admissionregistration.k8s.io
no create clusterrolebindings.rbac.authorization.k8s.io
no create serviceaccounts/token
yes get clustergpupolicies.gpuadmit.io
yes list clustergpupolicies.gpuadmit.io
yes watch clustergpupolicies.gpuadmit.io
yes get gpupolicies.gpuadmit.io
yes list gpupolicies.gpuadmit.io
yes watch gpupolicies.gpuadmit.io
yes patch clustergpupolicies.gpuadmit.io status
yes patch gpupolicies.gpuadmit.io status
no update clustergpupolicies.gpuadmit.io status
no patch clustergpupolicies.gpuadmit.io
no update clustergpupolicies.gpuadmit.io
no create clustergpupolicies.gpuadmit.io
no delete clustergpupolicies.gpuadmit.io
no patch gpupolicies.gpuadmit.io
no create gpupolicies.gpuadmit.io
no update customresourcedefinitions.apiextensions.k8s.io
no * *
TABLE
  # And nothing beyond that: the resource rows of `can-i --list` (less the self-review APIs every
  # authenticated user has, and less the rows a ServiceAccount without any binding has too: from 1.37, where
  # ClusterTrustBundle is GA, the bootstrap binding system:cluster-trust-bundle-discovery gives the group
  # system:serviceaccounts get/list/watch of clustertrustbundles) are exactly the view's kinds with get/list/watch, the two policy kinds
  # with get/list/watch and their status with patch, and the audit's: pods and every kind the installed webhooks
  # route (their rules, as the chart made them) with list, policyreports with get/list/create/patch/delete.
  # (Printed as the resource and its verbs column.)
  local rows='NR > 1 && $1 !~ /^\[/ && $1 !~ /^selfsubject/ {match($0, /\[[^]]*\] *$/); v = substr($0, RSTART); sub(/ *$/, "", v); print $1, v}'
  local everyone
  everyone=$(kc auth can-i --list --as=system:serviceaccount:gpuadmit-rbac-baseline:nobody | awk "$rows" | sort)
  echo "can-i --list resources of a ServiceAccount without bindings (left out below):"; echo "$everyone"
  got=$(comm -23 <(kc auth can-i --list --as="$sa" | awk "$rows" | sort) <(printf '%s\n' "$everyone"))
  want=$({
    printf '%s\n' "clustergpupolicies.gpuadmit.io [get list watch]" "clustergpupolicies.gpuadmit.io/status [patch]" \
      "gpupolicies.gpuadmit.io [get list watch]" "gpupolicies.gpuadmit.io/status [patch]" "nodes [get list watch]" \
      "persistentvolumeclaims [get list watch]" "resourcequotas [get list watch]" "storageclasses.storage.k8s.io [get list watch]" \
      "deviceclasses.resource.k8s.io [get list watch]" "resourceslices.resource.k8s.io [get list watch]" \
      "resourceclaims.resource.k8s.io [get list watch]" "resourceclaimtemplates.resource.k8s.io [get list watch]" \
      "nodepools.karpenter.sh [get list watch]" \
      "pods [list]" "policyreports.wgpolicyk8s.io [get list create patch delete]"
    kc get validatingwebhookconfiguration validate.gpuadmit.io -o json | python3 -c '
import json, sys
hook = json.load(sys.stdin)["webhooks"][0]
print("\n".join(sorted({f"{r}.{g} [list]" if g else f"{r} [list]" for rule in hook["rules"][1:] for g in rule["apiGroups"] for r in rule["resources"]})))'
  } | sort)
  echo "can-i --list resources:"; echo "$got"
  [[ $got == "$want" ]] || { echo "want exactly:"; echo "$want"; rc=1; }
  # certificates.helm.renew (default): in the release namespace, get and patch of the chart's TLS Secret, by
  # name, and nothing else about Secrets; audit (default): create of Leases there, get and update of its own.
  while read -r want verb res; do
    [[ -n $want ]] || continue
    got=$(kc auth can-i "$verb" "$res" -n "$NS" --as="$sa" 2>/dev/null) || true
    printf '%-4s %-7s %-40s (want %s, namespace %s)\n' "$got" "$verb" "$res" "$want" "$NS"
    [[ $got == "$want" ]] || rc=1
  done <<'TABLE'
yes get secrets/gpuadmit-tls
yes patch secrets/gpuadmit-tls
no update secrets/gpuadmit-tls
no delete secrets/gpuadmit-tls
no get secrets/gpuadmit-other
no patch secrets/gpuadmit-other
no list secrets
no watch secrets
no create secrets
yes create leases.coordination.k8s.io
yes get leases.coordination.k8s.io/gpuadmit-audit
yes update leases.coordination.k8s.io/gpuadmit-audit
no patch leases.coordination.k8s.io/gpuadmit-audit
no delete leases.coordination.k8s.io/gpuadmit-audit
no get leases.coordination.k8s.io/gpuadmit-other
no update leases.coordination.k8s.io/gpuadmit-other
no list leases.coordination.k8s.io
no watch leases.coordination.k8s.io
TABLE
  # And in `can-i --list -n NS`, the only rows beyond the cluster-wide ones are that Secret's and the Lease's.
  # Spaces squeezed first: kubectl pads the columns to their widest cell, and "[gpuadmit-audit]" is wider than
  # the header, so every row of the namespaced list is padded differently from the cluster-wide one.
  got=$(comm -13 <(kc auth can-i --list --as="$sa" | tr -s ' ' | sort) \
    <(kc auth can-i --list -n "$NS" --as="$sa" | tr -s ' ' | sort))
  want=$(printf '%s\n' "secrets [] [gpuadmit-tls] [get patch]" "leases.coordination.k8s.io [] [] [create]" \
    "leases.coordination.k8s.io [] [gpuadmit-audit] [get update]" | sort)
  echo "can-i --list -n $NS, rows beyond the cluster-wide ones:"; echo "$got"
  [[ $got == "$want" ]] || { echo "want exactly:"; echo "$want"; rc=1; }
  return "$rc"
}

upgrade_keeps_certificate() {
  local before after
  before=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.tls\.crt} {.data.ca\.key}')
  "$HELM" upgrade "$NS" "$CHART" -n "$NS" --reuse-values --set server.logLevel=debug || return 1
  after=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.tls\.crt} {.data.ca\.key}')
  [[ -n $before && $before == "$after" ]] || { echo "helm upgrade replaced the serving certificate or the CA key"; return 1; }
  ca_bundle_matches_secret
}

# Why the CRDs are templates: `helm upgrade` applies them again. A CRD whose schema lost a rule on the cluster
# (as an older chart's would lack a new one) gets the chart's schema back, which is the binary's.
upgrade_restores_crd_schema() {
  local crd=clustergpupolicies.gpuadmit.io
  kc patch crd "$crd" --type=json \
    -p '[{"op": "remove", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/rules/properties/memory-floor"}]' ||
    return 1
  [[ -z $(kc get crd "$crd" -o jsonpath='{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.rules.properties.memory-floor.type}') ]] ||
    { echo "the patch did not remove memory-floor"; return 1; }
  "$HELM" upgrade "$NS" "$CHART" -n "$NS" --reuse-values || return 1
  kc get crd "$crd" -o json >"$WORK/live-crd.json" || return 1
  python3 - "$WORK/live-crd.json" "$CHART/files/policy-crds.json" <<'PY'
import json, sys
live = json.load(open(sys.argv[1]))["spec"]["versions"][0]["schema"]
want = [c for c in json.load(open(sys.argv[2]))["items"] if c["metadata"]["name"] == "clustergpupolicies.gpuadmit.io"][0]
ok = live == want["spec"]["versions"][0]["schema"]
print("after helm upgrade the live schema is the chart's:", ok)
sys.exit(0 if ok else 1)
PY
}

# The default install with no reachable gpuadmit: a policy edit is refused (the policy webhook is Fail:
# none slips in unchecked), while pods still fail open (next check).
policy_edits_fail_closed() {
  local out
  out=$(kc apply -f - 2>&1 <<'CGP'
apiVersion: gpuadmit.io/v1alpha1
kind: ClusterGPUPolicy
metadata: {name: default}
spec: {rules: {memory-floor: {action: enforce}}}
CGP
  ) && { echo "created while no gpuadmit answers: $out"; return 1; }
  echo "$out"
  [[ $out == *'failed calling webhook "policies.validate.gpuadmit.io"'* ]]
}

# The installed defaults with no reachable gpuadmit (no pods run here): creates are let through
# (failurePolicy Ignore), in a user namespace and in kube-system.
fail_open_by_default() {
  kc create namespace chart-fail-open &&
    kc -n chart-fail-open create --dry-run=server -o name -f "$ROOT/tests/e2e/manifests/probe-pods.yaml" &&
    kc -n kube-system create --dry-run=server -o name -f "$ROOT/tests/e2e/manifests/probe-pods.yaml"
}

# helm uninstall's pre-delete hook, as Helm runs it: its ServiceAccount and RBAC are created, then the
# Job's command runs (here, since no kubelet runs pods: kubectl acts as the hook's ServiceAccount), in exec
# form as the kubelet runs it, with no shell. The webhook configurations are gone while the Deployment and
# the Service still stand; then the rest is uninstalled with --no-hooks (Helm would wait for a Job no node
# runs).
uninstall_deletes_webhooks_first() {
  local bin=$WORK/as-cleanup-sa argv=()
  render --show-only templates/webhooks-cleanup.yaml >"$WORK/cleanup.yaml" || return 1
  python3 - "$WORK/cleanup.yaml" "$WORK/cleanup-rbac.yaml" "$WORK/cleanup.argv" <<'PY' || return 1
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
assert all(d["metadata"]["annotations"]["helm.sh/hook"] == "pre-delete" for d in docs), "not all pre-delete hooks"
yaml.safe_dump_all([d for d in docs if d["kind"] != "Job"], open(sys.argv[2], "w"))
job = [d for d in docs if d["kind"] == "Job"][0]
c = job["spec"]["template"]["spec"]["containers"][0]
open(sys.argv[3], "w").write("\0".join(c["command"] + c.get("args", [])) + "\0")
PY
  mapfile -d '' -t argv <"$WORK/cleanup.argv"
  kc apply -f "$WORK/cleanup-rbac.yaml" >/dev/null || return 1
  as_service_account "$bin" "$NS-webhooks-cleanup"
  # The hook may delete the two configurations and nothing else.
  kc auth can-i delete validatingwebhookconfigurations/other --as="system:serviceaccount:$NS:$NS-webhooks-cleanup" &&
    { echo "the hook's ServiceAccount may delete other webhook configurations"; return 1; }
  echo "the hook's command: ${argv[*]}"
  PATH=$bin:$PATH "${argv[@]}" || return 1
  ! kc get mutatingwebhookconfiguration mutate.gpuadmit.io 2>/dev/null &&
    ! kc get validatingwebhookconfiguration validate.gpuadmit.io 2>/dev/null || { echo "a webhook configuration is left"; return 1; }
  kc -n "$NS" get deployment/gpuadmit service/gpuadmit -o name || { echo "the server went before the webhooks"; return 1; }
  # A policy object, for the next check (the policy webhook left with the configurations).
  kc apply -f - <<'CGP' || return 1
apiVersion: gpuadmit.io/v1alpha1
kind: ClusterGPUPolicy
metadata: {name: kept}
spec: {rules: {memory-floor: {action: enforce}}}
CGP
  "$HELM" uninstall "$NS" -n "$NS" --no-hooks || return 1
  kc delete -f "$WORK/cleanup-rbac.yaml" >/dev/null || return 1
  ! kc get clusterrole gpuadmit 2>/dev/null && ! kc -n "$NS" get deployment gpuadmit 2>/dev/null
}

# helm.sh/resource-policy: keep: the uninstall left both CRDs and the policy object made before it.
uninstall_keeps_policy_crds() {
  kc get crd clustergpupolicies.gpuadmit.io gpupolicies.gpuadmit.io -o name &&
    kc get clustergpupolicy kept -o name && kc delete clustergpupolicy kept
}

# webhook_ca_bundles: every caBundle of the release's webhook configurations, base64, one a line.
webhook_ca_bundles() {
  kc get mutatingwebhookconfiguration mutate.gpuadmit.io -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}' &&
    kc get validatingwebhookconfiguration validate.gpuadmit.io -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}'
}

# An install whose Secret has no ca.key (with certificates.helm.renew.enabled=false the chart makes the Secret
# that charts before ca.key was kept made: ca.crt, tls.crt, tls.key), upgraded with renewal on: a new CA and serving certificate, ca.key
# (the new CA's key) in the Secret, every caBundle the new CA followed by the old one (pods still serving the
# old certificate stay trusted until their mount is updated), and NOTES saying so. The next upgrade puts the
# new CA alone in every caBundle and keeps the Secret as it is.
upgrade_adds_ca_key() {
  local out before after rc=0
  "$HELM" install "$NS" "$CHART" -n "$NS" --set certificates.helm.renew.enabled=false >/dev/null || return 1
  kc -n "$NS" get secret gpuadmit-tls -o json >"$WORK/secret-before.json" || return 1
  out=$("$HELM" upgrade "$NS" "$CHART" -n "$NS" --reuse-values --set certificates.helm.renew.enabled=true 2>&1) ||
    { echo "$out"; return 1; }
  sed -n '/^Note: Secret/,/^$/p' <<<"$out"
  grep -q "^Note: Secret/gpuadmit-tls had no ca.key" <<<"$out" || { echo "NOTES do not say that the CA was replaced"; rc=1; }
  kc -n "$NS" get secret gpuadmit-tls -o json >"$WORK/secret-after.json" && webhook_ca_bundles >"$WORK/bundles.txt" || return 1
  python3 - "$WORK/secret-before.json" "$WORK/secret-after.json" "$WORK/bundles.txt" "$WORK" <<'PY' || rc=1
import base64, json, subprocess, sys
before, after = (json.load(open(f))["data"] for f in sys.argv[1:3])
bundles = open(sys.argv[3]).read().split()
work = sys.argv[4]
pem = lambda b64: base64.b64decode(b64).decode()
run = lambda *a, **kw: subprocess.run(a, capture_output=True, text=True, **kw)
problems = []
print("Secret keys before:", sorted(before), "after:", sorted(after))
if "ca.key" in before or sorted(after) != ["ca.crt", "ca.key", "tls.crt", "tls.key"]:
    problems.append("want no ca.key before and ca.crt, ca.key, tls.crt, tls.key after")
if after["ca.crt"] == before["ca.crt"] or after["tls.crt"] == before["tls.crt"]:
    problems.append("the CA or the serving certificate was not replaced")
for name, b64 in (("new-ca.crt", after["ca.crt"]), ("old-ca.crt", before["ca.crt"]), ("new-ca.key", after["ca.key"]), ("new-tls.crt", after["tls.crt"])):
    open(f"{work}/{name}", "w").write(pem(b64))
if run("openssl", "verify", "-CAfile", f"{work}/new-ca.crt", f"{work}/new-tls.crt").returncode:
    problems.append("the new ca.crt did not sign the new tls.crt")
if run("openssl", "x509", "-noout", "-pubkey", "-in", f"{work}/new-ca.crt").stdout != run("openssl", "pkey", "-pubout", "-in", f"{work}/new-ca.key").stdout:
    problems.append("ca.key is not the new ca.crt's key")
want = pem(after["ca.crt"]) + pem(before["ca.crt"])
print(f"caBundles: {len(bundles)}, each the new CA followed by the old one: {all(pem(b) == want for b in bundles)}")
if len(bundles) != 3 or any(pem(b) != want for b in bundles):
    problems.append("a caBundle is not the new CA followed by the old one")
print("problems:", problems or "none")
sys.exit(1 if problems else 0)
PY
  out=$(kc -n "$NS" get deployment gpuadmit -o jsonpath='{.spec.template.spec.containers[0].args}')
  [[ $out == *'"--renew-secret=gpuadmit/gpuadmit-tls"'* ]] && kc -n "$NS" get role gpuadmit-certificate-renewal -o name ||
    { echo "the upgraded Deployment does not renew, or the Role is missing"; rc=1; }
  # The next upgrade: the new CA alone, the Secret as it is.
  before=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data}')
  "$HELM" upgrade "$NS" "$CHART" -n "$NS" --reuse-values >/dev/null || return 1
  after=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data}')
  [[ $before == "$after" ]] || { echo "the second upgrade changed the Secret"; rc=1; }
  out=$(webhook_ca_bundles | sort -u)
  if [[ $out == "$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.ca\.crt}')" ]]; then
    echo "after the next upgrade every caBundle is the new CA alone"
  else
    echo "after the next upgrade a caBundle is not the Secret's ca.crt"; rc=1
  fi
  "$HELM" uninstall "$NS" -n "$NS" --no-hooks >/dev/null || rc=1
  return "$rc"
}

# routing MODE: which objects the API server sends to gpuadmit under the chart's configurations.
# Both webhooks point at a closed loopback port with failurePolicy Fail, so "sent" shows as "failed
# calling webhook" and "not sent" as a successful server-side dry run. MODE: default | matchConditions.
routing() {
  local mode=$1 rc=0 args=() ns file want got out i
  [[ $mode == matchConditions ]] && args=(--set webhooks.matchConditions.enabled=true)
  render --show-only templates/webhooks.yaml --set webhooks.url=https://127.0.0.1:1 \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=unused \
    --set certificates.existingSecret.caBundle="$(base64 -w0 "$GPUADMIT_E2E_CA")" \
    --set webhooks.mutate.failurePolicy=Fail --set webhooks.validate.failurePolicy=Fail "${args[@]}" \
    >"$WORK/routing.yaml" || return 1
  kc get namespace routing >/dev/null 2>&1 || kc create namespace routing || return 1
  kc get namespace routing-optout >/dev/null 2>&1 ||
    { kc create namespace routing-optout && kc label namespace routing-optout gpuadmit.io/ignore=true; } || return 1
  kc apply -f "$WORK/routing.yaml" || return 1
  # The configuration reaches the API server's webhook informer asynchronously: wait until a GPU pod is sent.
  for ((i = 0; i < 100; i++)); do
    out=$(kc -n routing create --dry-run=server -f "$HERE/routing/gpu-pod.yaml" 2>&1) || true
    [[ $out == *"failed calling webhook"* ]] && break
    sleep 0.3
  done
  # With matchConditions nothing that is not GPU-related is sent: a CPU pod, a CPU workload (its template), a claim
  # without gpuadmit's marker. A pod without containers is not sent either (the CEL guards it: no
  # evaluation error) and is left to the API server's validation.
  local not_gpu=sent no_containers=sent path
  [[ $mode == matchConditions ]] && not_gpu="not sent" no_containers=invalid
  # RayClusters of 500 worker groups and Argo Workflows of 500 templates (about 0.5 MB each, so written here
  # rather than kept in the repository): the CEL's cost on them stays within the API server's limits.
  python3 "$HERE/routing/make-wide-rayclusters.py" "$WORK" || return 1
  python3 "$HERE/routing/make-wide-workflows.py" "$WORK" || return 1
  while read -r ns file want; do
    [[ -n $ns ]] || continue
    case $want in not_gpu) want=$not_gpu ;; no_containers) want=$no_containers ;; esac
    want=${want//_/ }
    path=$HERE/routing/$file
    [[ -e $path ]] || path=$WORK/$file
    if out=$(kc -n "$ns" create --dry-run=server -f "$path" 2>&1); then got="not sent"
    # A matchCondition that fails to evaluate (a CEL error, its cost over the limit) refuses the object under
    # Fail ("is forbidden: expression '...' resulted in error: ..."): neither sent nor not sent.
    elif [[ $out == *"resulted in error"* ]]; then got="CEL error: ${out##*resulted in error: }"
    elif [[ $out == *"failed calling webhook"* ]]; then got=sent
    elif [[ $out == *" is invalid:"* && $out != *atch*ondition* ]]; then got=invalid
    else got="error: $out"; fi
    printf '%-9s %-16s %-28s %s\n' "$([[ $got == "$want" ]] && echo ok || echo WRONG)" "$ns" "$file" "$got (want $want)"
    [[ $got == "$want" ]] || rc=1
  done <<TABLE
routing gpu-pod.yaml sent
routing cpu-pod.yaml not_gpu
routing no-containers-pod.yaml no_containers
routing mig-init-pod.yaml sent
routing cuda-image-pod.yaml sent
routing gpu-toleration-pod.yaml sent
routing labelled-pod.yaml sent
routing annotated-pod.yaml sent
routing claim.yaml sent
routing plain-claim.yaml not_gpu
routing cpu-deployment.yaml not_gpu
routing gpu-deployment.yaml sent
routing dra-pod.yaml sent
routing dra-deployment.yaml sent
routing gpu-job.yaml sent
routing cpu-cronjob.yaml not_gpu
routing gpu-cronjob.yaml sent
routing gpu-pytorchjob.yaml sent
routing cpu-pytorchjob.yaml not_gpu
routing cpu-raycluster.yaml not_gpu
routing gpu-raycluster.yaml sent
routing odd-types-raycluster.yaml not_gpu
routing wide-cpu-raycluster.yaml not_gpu
routing wide-gpu-raycluster.yaml sent
routing gpu-jobset.yaml sent
routing gpu-volcano-job.yaml sent
routing cpu-volcano-job.yaml not_gpu
routing cpu-isvc.yaml not_gpu
routing gpu-isvc.yaml sent
routing gpu-containers-isvc.yaml sent
routing odd-types-isvc.yaml not_gpu
routing gpu-workflow.yaml sent
routing cpu-workflow.yaml not_gpu
routing gpu-toleration-workflow.yaml sent
routing odd-types-workflow.yaml not_gpu
routing wide-cpu-workflow.yaml not_gpu
routing wide-gpu-workflow.yaml sent
routing gpu-taskrun.yaml sent
routing cpu-taskrun.yaml not_gpu
routing labelled-taskrun.yaml sent
routing odd-types-taskrun.yaml not_gpu
routing gpu-pipelinerun.yaml sent
routing gpu-nimservice.yaml sent
routing nvcr-image-nimservice.yaml sent
routing odd-types-nimservice.yaml not_gpu
routing gpu-trainjob.yaml sent
routing configmap.yaml not_sent
kube-system gpu-pod.yaml not_sent
kube-node-lease gpu-pod.yaml not_sent
$NS gpu-pod.yaml not_sent
routing-optout gpu-pod.yaml not_sent
TABLE
  if [[ $mode == matchConditions ]]; then
    # Not a dry run: with gpuadmit down under Fail, a claim and a CPU Deployment are really created.
    if kc -n routing create -f "$HERE/routing/plain-claim.yaml" -f "$HERE/routing/cpu-deployment.yaml" >/dev/null; then
      echo "ok        routing          created for real: persistentvolumeclaim/data, deployment.apps/web"
      kc -n routing delete -f "$HERE/routing/plain-claim.yaml" -f "$HERE/routing/cpu-deployment.yaml" --wait=false >/dev/null || rc=1
    else
      echo "WRONG     routing          a claim or a CPU Deployment was not created while gpuadmit is down"; rc=1
    fi
  fi
  kc delete -f "$WORK/routing.yaml" >/dev/null || rc=1
  return "$rc"
}

# Pilot mode (webhooks.namespaceSelector.matchLabels): with the configurations at a closed port under Fail,
# a GPU pod in a labelled namespace is sent, one in an unlabelled namespace is not. The loop also waits out
# the API server's cache of the previous (unfiltered) configurations.
routing_pilot() {
  local i sent=no skipped=no rc=0
  render --show-only templates/webhooks.yaml --set webhooks.url=https://127.0.0.1:1 \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=unused \
    --set certificates.existingSecret.caBundle="$(base64 -w0 "$GPUADMIT_E2E_CA")" \
    --set webhooks.mutate.failurePolicy=Fail --set webhooks.validate.failurePolicy=Fail \
    --set-string 'webhooks.namespaceSelector.matchLabels.gpuadmit\.io/pilot=true' >"$WORK/pilot.yaml" || return 1
  kc get namespace routing >/dev/null 2>&1 || kc create namespace routing || return 1
  kc get namespace routing-pilot >/dev/null 2>&1 ||
    { kc create namespace routing-pilot && kc label namespace routing-pilot gpuadmit.io/pilot=true; } || return 1
  kc apply -f "$WORK/pilot.yaml" >/dev/null || return 1
  for ((i = 0; i < 100; i++)); do
    [[ $(kc -n routing-pilot create --dry-run=server -f "$HERE/routing/gpu-pod.yaml" 2>&1) == *"failed calling webhook"* ]] && sent=yes || sent=no
    kc -n routing create --dry-run=server -f "$HERE/routing/gpu-pod.yaml" >/dev/null 2>&1 && skipped=yes || skipped=no
    [[ $sent == yes && $skipped == yes ]] && break
    sleep 0.3
  done
  echo "GPU pod in the labelled namespace sent: $sent; in an unlabelled one not sent: $skipped"
  [[ $sent == yes && $skipped == yes ]] || rc=1
  kc delete -f "$WORK/pilot.yaml" >/dev/null || rc=1
  return "$rc"
}

# The chart's optOutGuard (a ValidatingAdmissionPolicy, on by default), rendered for a release of its own so
# that it stands alone: a user who may update namespaces cannot add the opt-out label, nor create a namespace
# with it, but can set other labels; an admin (system:masters) can add it, and alice cannot remove it; a user
# named in optOutGuard.allowedUsers can.
opt_out_guard() {
  local i out rc=0
  render --show-only templates/opt-out-guard.yaml --set 'optOutGuard.allowedUsers={bob}' >"$WORK/guard.yaml" || return 1
  kc create namespace guard-test >/dev/null || return 1
  kc create clusterrole guard-test-ns --verb=get,update,patch --resource=namespaces >/dev/null &&
    kc create clusterrolebinding guard-test-ns --clusterrole=guard-test-ns --user=alice --user=bob >/dev/null || return 1
  kc create clusterrole guard-test-create --verb=create --resource=namespaces >/dev/null &&
    kc create clusterrolebinding guard-test-create --clusterrole=guard-test-create --user=alice >/dev/null || return 1
  kc apply -f "$WORK/guard.yaml" >/dev/null || return 1
  # The policy reaches the API server's admission asynchronously: wait until alice is refused.
  for ((i = 0; i < 100; i++)); do
    out=$(kc label namespace guard-test gpuadmit.io/ignore=true --as=alice 2>&1) || break
    kc label namespace guard-test gpuadmit.io/ignore- >/dev/null
    sleep 0.3
  done
  echo "alice adds the opt-out label: $out"
  [[ $out == *"only the groups system:masters and the users bob may add or remove the label gpuadmit.io/ignore, which turns gpuadmit off for a namespace"* ]] || rc=1
  out=$(printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: guard-born-out, labels: {gpuadmit.io/ignore: "true"}}\n' |
    kc create -f - --as=alice 2>&1) && { echo "alice created a namespace with the label: $out"; rc=1; }
  echo "alice creates a namespace with it: $out"
  kc label namespace guard-test team=ml --as=alice || rc=1
  kc label namespace guard-test gpuadmit.io/ignore=true || rc=1
  out=$(kc label namespace guard-test gpuadmit.io/ignore- --as=alice 2>&1) && { echo "alice removed it: $out"; rc=1; }
  kc label namespace guard-test gpuadmit.io/ignore- --as=bob || { echo "bob (allowedUsers) could not remove it"; rc=1; }
  kc delete -f "$WORK/guard.yaml" >/dev/null || rc=1
  kc delete namespace guard-test --wait=false >/dev/null || rc=1
  kc delete namespace guard-born-out --ignore-not-found --wait=false >/dev/null || rc=1
  kc delete clusterrolebinding guard-test-ns guard-test-create >/dev/null &&
    kc delete clusterrole guard-test-ns guard-test-create >/dev/null || rc=1
  return "$rc"
}

# `gpuadmit policy crds` on the real API server (#23 item 4, not in the chart yet): both CRDs become
# Established (their schemas are structural); every example policy is accepted as a ClusterGPUPolicy and
# stored without defaults; a misspelt parameter, an action not among the choices and a GPUPolicy that sets
# more than rules are refused at apply with the field's path.
policy_crds_on_the_api_server() {
  local out rc=0
  "$BIN" policy crds >"$WORK/policy-crds.json" || return 1
  kc apply -f "$WORK/policy-crds.json" >/dev/null &&
    kc wait --for=condition=Established --timeout=30s crd/clustergpupolicies.gpuadmit.io crd/gpupolicies.gpuadmit.io >/dev/null ||
    return 1
  python3 - "$ROOT/deploy/policies" "$WORK" <<'PY' || return 1
import pathlib, sys, yaml
out = pathlib.Path(sys.argv[2])
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml")):
    d = yaml.safe_load(path.read_text())
    d["kind"], d["metadata"] = "ClusterGPUPolicy", {"name": path.stem}
    (out / f"cgp-{path.stem}.yaml").write_text(yaml.safe_dump(d))
typo = {"apiVersion": "gpuadmit.io/v1alpha1", "kind": "ClusterGPUPolicy", "metadata": {"name": "typo"},
        "spec": {"rules": {"memory-floor": {"perGPU": "8Gi"}}}}
(out / "cgp-bad-typo.yaml").write_text(yaml.safe_dump(typo))
typo["metadata"]["name"], typo["spec"] = "enum", {"rules": {"memory-floor": {"action": "enforced"}}}
(out / "cgp-bad-enum.yaml").write_text(yaml.safe_dump(typo))
team = {"apiVersion": "gpuadmit.io/v1alpha1", "kind": "GPUPolicy", "metadata": {"name": "t", "namespace": "default"},
        "spec": {"gpuResources": ["x.com/gpu"]}}
(out / "gp-bad-scope.yaml").write_text(yaml.safe_dump(team))
PY
  for f in "$WORK"/cgp-[!b]*.yaml; do kc apply -f "$f" >/dev/null || { echo "refused: $f"; rc=1; }; done
  [[ $(kc get clustergpupolicy strict -o jsonpath='{.spec.rules.gpu-intent}') == '{"action":"enforce"}' ]] ||
    { echo "the stored policy gained defaults"; rc=1; }
  out=$(kc apply -f "$WORK/cgp-bad-typo.yaml" 2>&1) && rc=1
  [[ $out == *'unknown field "spec.rules.memory-floor.perGPU"'* ]] || { echo "typo: $out"; rc=1; }
  out=$(kc apply -f "$WORK/cgp-bad-enum.yaml" 2>&1) && rc=1
  [[ $out == *'spec.rules.memory-floor.action: Unsupported value: "enforced"'* ]] || { echo "enum: $out"; rc=1; }
  out=$(kc apply -f "$WORK/gp-bad-scope.yaml" 2>&1) && rc=1
  [[ $out == *'unknown field "spec.gpuResources"'* ]] || { echo "scope: $out"; rc=1; }
  kc delete -f "$WORK/policy-crds.json" >/dev/null || rc=1
  return "$rc"
}

# A gpuadmit on loopback, installed with `helm install --set webhooks.url=...` and an existing-Secret
# caBundle, so the configurations Helm created are called for real; then the helm test's own script runs
# here with the test's ServiceAccount (impersonated), since no kubelet can run the test pod. The server runs
# as the chart's pod would: with the Deployment's policy-object flags, and against the API as the chart's
# ServiceAccount (a token of it in a kubeconfig, where a pod has its in-cluster config), so the chart's
# ClusterRole must be enough for the cluster view and for reading the policy objects and patching their status.
# live_serve [POLICY]: (re)start the loopback gpuadmit on LIVE_PORT, with POLICY or the embedded policy.
live_serve() {
  local i policy=()
  [[ -n ${1:-} ]] && policy=(--policy "$1")
  [[ -n ${LIVE_PID:-} ]] && { kill "$LIVE_PID"; wait "$LIVE_PID" 2>/dev/null; LIVE_PID=; }
  "$BIN" serve --listen "127.0.0.1:$LIVE_PORT" "${LIVE_TLS_FLAGS[@]}" --drain-seconds 0 "${policy[@]}" \
    --kubeconfig "$WORK/live-sa.kubeconfig" "${LIVE_CHART_FLAGS[@]}" "${LIVE_AUTH_FLAGS[@]}" </dev/null >"$WORK/live-gpuadmit.log" 2>&1 &
  LIVE_PID=$!
  for ((i = 0; i < 100; i++)); do
    curl -fsS --max-time 2 --cacert "$LIVE_CA" "https://127.0.0.1:$LIVE_PORT/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$LIVE_PID" 2>/dev/null || break
    sleep 0.2
  done
  echo "gpuadmit serve ${LIVE_CHART_FLAGS[*]} ${LIVE_AUTH_FLAGS[*]} --kubeconfig (the chart's ServiceAccount) not ready; its output (first and last lines):"
  head -n 3 "$WORK/live-gpuadmit.log"
  echo "..."
  tail -n 10 "$WORK/live-gpuadmit.log"
  return 1
}

# live_kubeconfig: a kubeconfig with a token of the release's ServiceAccount (made anew by each install).
live_kubeconfig() {
  local token
  token=$(kc -n "$NS" create token gpuadmit --duration=2h) || return 1
  cat >"$WORK/live-sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$GPUADMIT_E2E_API_URL", certificate-authority: "$GPUADMIT_E2E_CA"}}]
users: [{name: gpuadmit-sa, user: {token: "$token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: gpuadmit-sa}}]
current-context: e2e
EOF
}

live_start() {
  local i
  "$BIN" certs generate --ip 127.0.0.1 --dns localhost --out "$WORK/live-certs" >/dev/null || return 1
  LIVE_TLS_FLAGS=(--tls-cert-file "$WORK/live-certs/tls.crt" --tls-private-key-file "$WORK/live-certs/tls.key")
  LIVE_CA=$WORK/live-certs/ca.crt
  for ((i = 0; i < 50; i++)); do
    LIVE_PORT=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$LIVE_PORT") 2>/dev/null || break
  done
  # Install first: the server runs as the release's ServiceAccount. Until it is up the pod webhooks fail
  # open, and nothing here edits a policy object.
  "$HELM" install "$NS" "$CHART" -n "$NS" --set webhooks.url="https://127.0.0.1:$LIVE_PORT" \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=gpuadmit-dev \
    --set certificates.existingSecret.caBundle="$(base64 -w0 "$WORK/live-certs/ca.crt")" || return 1
  # The flags the chart's Deployment adds to `serve` for the policy objects, taken from the installed object.
  mapfile -t LIVE_CHART_FLAGS < <(kc -n "$NS" get deployment gpuadmit \
    -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}' | grep -E '^--(policy-objects|cluster-policy-name)')
  echo "the Deployment's policy-object flags: ${LIVE_CHART_FLAGS[*]}"
  ((${#LIVE_CHART_FLAGS[@]} == 2)) || return 1
  live_kubeconfig && live_serve
}

# The chart's policy webhook, on the live gpuadmit running as the chart's ServiceAccount: an invalid
# ClusterGPUPolicy (a negative overhead, which the CRD's schema lets through) is refused at apply by
# policies.validate.gpuadmit.io naming the field; a valid one and a GPUPolicy are accepted, and gpuadmit
# (its watch and its status patch: the chart's RBAC) reports both Active with reason Loaded.
live_policy_objects() {
  local out i status rc=0
  kc get namespace chart-policy >/dev/null 2>&1 || kc create namespace chart-policy >/dev/null || return 1
  cat >"$WORK/cgp-invalid.yaml" <<'EOF'
apiVersion: gpuadmit.io/v1alpha1
kind: ClusterGPUPolicy
metadata: {name: default}
spec: {rules: {memory-floor: {action: enforce, overhead: "-1Gi"}}}
EOF
  cat >"$WORK/cgp-valid.yaml" <<'EOF'
apiVersion: gpuadmit.io/v1alpha1
kind: ClusterGPUPolicy
metadata: {name: default}
spec: {rules: {memory-floor: {action: enforce}}}
---
apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata: {name: team, namespace: chart-policy}
spec: {rules: {gpu-quota: {action: enforce}}}
EOF
  out=$(kc apply -f "$WORK/cgp-invalid.yaml" 2>&1) && { echo "invalid policy accepted: $out"; rc=1; }
  echo "invalid: $out"
  [[ $out == *'admission webhook "policies.validate.gpuadmit.io" denied the request'* && $out == *spec.rules.memory-floor.overhead* ]] || rc=1
  kc apply -f "$WORK/cgp-valid.yaml" || return 1
  for ((i = 0; i < 75; i++)); do
    status="$(kc get clustergpupolicy default -o jsonpath='{.status.active} {.status.conditions[?(@.type=="Ready")].reason}')"
    status+=" / $(kc -n chart-policy get gpupolicy team -o jsonpath='{.status.active} {.status.conditions[?(@.type=="Ready")].reason}')"
    [[ $status == "true Loaded / true Loaded" ]] && break
    sleep 0.2
  done
  echo "status (active, Ready reason) of ClusterGPUPolicy default / GPUPolicy chart-policy/team: $status"
  if [[ $status != "true Loaded / true Loaded" ]]; then
    rc=1
    kc get clustergpupolicies,gpupolicies -A -o yaml | tail -n 40
    tail -n 20 "$WORK/live-gpuadmit.log"
  fi
  kc delete -f "$WORK/cgp-valid.yaml" >/dev/null || rc=1
  return "$rc"
}

# Client authentication on the real API server, through the installed configurations: `helm upgrade` with
# clientAuth.caBundle = the control plane's webhook client CA (cluster.sh starts kube-apiserver with an admission
# kubeconfig whose user '*' holds a certificate of it, as a cluster admin would) and metrics.port. The live
# gpuadmit is restarted with the Deployment's own --client-ca-file and --metrics-listen, the file being what the
# pod would read there (the key of the ConfigMap its volume maps to that name) and the address its port on
# loopback. Then: the helm test's dry run passes and gpuadmit logged the API server's reviews; a curl without a
# client certificate gets 401; /metrics answers on the metrics port without one, and 404 on the https port.
live_client_auth() {
  local i port out code series reviews
  for ((i = 0; i < 50; i++)); do
    port=$((20000 + RANDOM % 12000))
    [[ $port != "$LIVE_PORT" ]] && ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  done
  "$HELM" upgrade "$NS" "$CHART" -n "$NS" --reuse-values --set clientAuth.enabled=true \
    --set-file clientAuth.caBundle="$GPUADMIT_E2E_WEBHOOK_CLIENT_CA" --set metrics.port="$port" >/dev/null || return 1
  kc -n "$NS" get deployment gpuadmit -o json >"$WORK/live-deployment.json" || return 1
  # FLAG VALUE lines: the two flags, and the ConfigMap and key behind the CA file's directory.
  out=$(python3 - "$WORK/live-deployment.json" <<'PY'
import json, posixpath, sys
spec = json.load(open(sys.argv[1]))["spec"]["template"]["spec"]
c = spec["containers"][0]
flags = dict(a[2:].split("=", 1) for a in c["args"][1:] if a.startswith("--") and "=" in a)
ca = flags["client-ca-file"]
mount = [m for m in c["volumeMounts"] if m["mountPath"] == posixpath.dirname(ca)][0]
cm = [v for v in spec["volumes"] if v["name"] == mount["name"]][0]["configMap"]
key = [i["key"] for i in cm["items"] if i["path"] == posixpath.basename(ca)][0]
print("client-ca-file", ca); print("metrics-listen", flags["metrics-listen"])
print("configmap", cm["name"]); print("key", key)
PY
  ) || { echo "the Deployment lacks --client-ca-file, --metrics-listen or the CA's ConfigMap volume"; return 1; }
  echo "$out"
  local -A f
  while read -r i code; do f[$i]=$code; done <<<"$out"
  [[ ${f[metrics-listen]} == "0.0.0.0:$port" ]] || { echo "want --metrics-listen=0.0.0.0:$port"; return 1; }
  mkdir -p "$WORK/live-client-ca"
  kc -n "$NS" get configmap "${f[configmap]}" -o jsonpath="{.data.${f[key]//./\\.}}" >"$WORK/live-client-ca/${f[client-ca-file]##*/}" || return 1
  cmp <(openssl x509 -noout -fingerprint -sha256 -in "$WORK/live-client-ca/${f[client-ca-file]##*/}") \
    <(openssl x509 -noout -fingerprint -sha256 -in "$GPUADMIT_E2E_WEBHOOK_CLIENT_CA") ||
    { echo "ConfigMap ${f[configmap]} does not hold the CA given as clientAuth.caBundle"; return 1; }
  LIVE_AUTH_FLAGS=(--client-ca-file="$WORK/live-client-ca/${f[client-ca-file]##*/}" --metrics-listen="127.0.0.1:$port")
  live_serve || return 1
  echo "gpuadmit serve ... ${LIVE_AUTH_FLAGS[*]}"
  local rc=0
  # The API server's reviews (it presents its webhook client certificate): the helm test's dry run passes.
  for ((i = 0; i < 10; i++)); do helm_test_script >"$WORK/helm-test.out" 2>&1 && break; sleep 1; done
  cat "$WORK/helm-test.out"
  reviews=$(grep -c '"msg":"review"' "$WORK/live-gpuadmit.log")
  echo "helm test: $( ((i < 10)) && echo "passed after $((i + 1)) tries" || echo "failed 10 times"); reviews gpuadmit logged: $reviews"
  ((i < 10 && reviews > 0)) || { echo "the API server's reviews did not get through"; rc=1; }
  # Anyone else: 401 without a client certificate.
  code=$(curl -sS --max-time 5 --cacert "$WORK/live-certs/ca.crt" -o "$WORK/curl.body" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' --data-binary '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x"}}' \
    "https://127.0.0.1:$LIVE_PORT/validate" 2>&1)
  echo "curl POST /validate without a client certificate: HTTP $code: $(head -c 200 "$WORK/curl.body")"
  [[ $code == 401 ]] || rc=1
  # /metrics on its own port, open; the https port answers it with 404.
  code=$(curl -sS --max-time 5 --cacert "$WORK/live-certs/ca.crt" -o "$WORK/curl.body" -w '%{http_code}' "https://127.0.0.1:$port/metrics" 2>&1)
  series=$(grep -c '^gpuadmit_' "$WORK/curl.body")
  echo "curl GET /metrics on the metrics port: HTTP $code, $series gpuadmit_ samples"
  [[ $code == 200 ]] && ((series > 0)) || rc=1
  code=$(curl -sS --max-time 5 --cacert "$WORK/live-certs/ca.crt" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$LIVE_PORT/metrics" 2>&1)
  echo "curl GET /metrics on the https port: HTTP $code"
  [[ $code == 404 ]] || rc=1
  ((rc == 0)) || tail -n 10 "$WORK/live-gpuadmit.log"
  return "$rc"
}

# as_service_account DIR SA: DIR/kubectl, a kubectl acting as ServiceAccount SA of the release namespace.
as_service_account() {
  mkdir -p "$1"
  printf '#!/bin/sh\nexec %q --as=system:serviceaccount:%s:%s "$@"\n' "$KUBECTL" "$NS" "$2" >"$1/kubectl"
  chmod +x "$1/kubectl"
}

# helm_test_script: the test pod's command, run here in exec form as the kubelet runs it (no shell), kubectl
# acting as the test's ServiceAccount and the probe's ConfigMap where the pod mounts it (under $WORK).
helm_test_script() {
  local bin=$WORK/as-test-sa argv=()
  as_service_account "$bin" "$NS-test"
  mapfile -d '' -t argv <"$WORK/helm-test.argv"
  PATH=$bin:$PATH "${argv[@]}"
}

helm_test_passes() {
  local i
  # The hook's ServiceAccount, Role, RoleBinding and ConfigMap (what `helm test` creates before the pod), and
  # the pod's command with its ConfigMap volume's mount path moved under $WORK.
  render --show-only templates/tests/test-webhook.yaml --set webhooks.url="https://127.0.0.1:$LIVE_PORT" \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=gpuadmit-dev \
    --set certificates.existingSecret.caBundle=Cg== >"$WORK/helm-test.yaml" || return 1
  python3 - "$WORK/helm-test.yaml" "$WORK/helm-test-rbac.yaml" "$WORK/helm-test.argv" "$WORK/helm-test-volumes" <<'PY' || return 1
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
yaml.safe_dump_all([d for d in docs if d["kind"] != "Pod"], open(sys.argv[2], "w"))
pod = [d for d in docs if d["kind"] == "Pod"][0]["spec"]
c = pod["containers"][0]
maps = {v["name"]: v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
data = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
argv = c["command"] + c.get("args", [])
for m in c["volumeMounts"]:
    if m["name"] in maps:
        local = os.path.join(sys.argv[4], m["name"])
        os.makedirs(local, exist_ok=True)
        for key, text in data[maps[m["name"]]].items():
            open(os.path.join(local, key), "w").write(text)
        argv = [a.replace(m["mountPath"] + "/", local + "/") for a in argv]
open(sys.argv[3], "w").write("\0".join(argv) + "\0")
PY
  kc apply -f "$WORK/helm-test-rbac.yaml" || return 1
  # The new configurations reach the API server's informer asynchronously.
  for ((i = 0; i < 30; i++)); do
    helm_test_script && return 0
    sleep 1
  done
  return 1
}

# In a test namespace that enforces Pod Security restricted, the probe pod is admitted and the test passes.
helm_test_passes_under_restricted() {
  local rc=0
  kc label namespace default pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null || return 1
  helm_test_script || rc=1
  kc label namespace default pod-security.kubernetes.io/enforce- >/dev/null || rc=1
  return "$rc"
}

# The helm test does not depend on the policy: it passes under each example policy too.
helm_test_passes_under_every_example_policy() {
  local policy
  for policy in "$ROOT"/deploy/policies/*.yaml; do
    live_serve "$policy" || return 1
    helm_test_script || { echo "helm test failed under $(basename "$policy")"; return 1; }
  done
  live_serve
}

helm_test_fails_without_gpuadmit() {
  kill "$LIVE_PID" && wait "$LIVE_PID" 2>/dev/null
  LIVE_PID=
  # failurePolicy Ignore (default): the dry run succeeds without gpuadmit's probe warning; the test must say so.
  local out rc=0
  out=$(helm_test_script 2>&1) || rc=$?
  echo "$out"
  ((rc != 0)) && grep -q "probe-reply is not found" <<<"$out"
}

live_uninstall() {
  # --no-hooks: no node runs the cleanup Job here (uninstall_deletes_webhooks_first runs its script).
  "$HELM" uninstall "$NS" -n "$NS" --no-hooks && kc delete -f "$WORK/helm-test-rbac.yaml" --ignore-not-found
}

# secret_json: the chart's TLS Secret as JSON (one read, so its keys belong together).
secret_json() { kc -n "$NS" get secret gpuadmit-tls -o json; }
# fingerprint [FILE]: SHA-256 fingerprint of a PEM certificate (stdin without FILE).
fingerprint() { openssl x509 -noout -fingerprint -sha256 ${1:+-in "$1"}; }
# secret_key KEY [SECRET-JSON-FILE]: one key of the Secret, decoded.
secret_key() {
  python3 -c 'import base64, json, sys; sys.stdout.write(base64.b64decode(json.load(open(sys.argv[1]))["data"][sys.argv[2]]).decode())' \
    "${2:-/dev/stdin}" "$1"
}

# mount_secret DIR KEY...: the Secret's KEYs written into DIR as the kubelet writes a Secret volume: the files
# in a new timestamped directory, the ..data link swapped to it at once, each KEY a link through ..data.
mount_secret() {
  local dir=$1 ts key; shift
  ts=..$(date +%Y_%m_%d_%H_%M_%S.%N)
  mkdir -p "$dir/$ts" && secret_json >"$dir/$ts/.secret.json" || return 1
  for key; do
    secret_key "$key" "$dir/$ts/.secret.json" >"$dir/$ts/$key" || return 1
    [[ -L $dir/$key ]] || ln -s "..data/$key" "$dir/$key"
  done
  rm "$dir/$ts/.secret.json" && ln -sfn "$ts" "$dir/..data_tmp" && mv -T "$dir/..data_tmp" "$dir/..data"
}

# live_metric SERIES: its value on the live gpuadmit's /metrics (SERIES with its labels, as printed there).
live_metric() {
  curl -fsS --max-time 5 --cacert "$LIVE_CA" "https://127.0.0.1:$LIVE_PORT/metrics" | awk -v s="$1" '$1 == s {print $2}'
}

# renewal_reviews LOG STOP: until the file STOP exists, a server-side dry-run create of a probe pod through the
# installed webhooks, one line each in LOG: "ok START END", or "FAIL START END: OUTPUT" when the create failed
# or lacks gpuadmit's probe warning (the API server did not get gpuadmit's answer).
renewal_reviews() {
  local log=$1 stop=$2 t0 t1 out
  while [[ ! -e $stop ]]; do
    t0=$(date +%s.%N)
    out=$(kc -n default create --dry-run=server -o name -f - 2>&1 <<'POD'
apiVersion: v1
kind: Pod
metadata:
  name: gpuadmit-renewal-probe
  annotations: {gpuadmit.io/probe: renewal}
spec:
  containers:
    - {name: probe, image: registry.invalid/gpuadmit-probe:0}
POD
    ) && [[ $out == *"gpuadmit.io/probe: reviewed by gpuadmit"* ]] && t1=$(date +%s.%N) && echo "ok $t0 $t1" >>"$log" && continue
    t1=$(date +%s.%N)
    echo "FAIL $t0 $t1: ${out//$'\n'/ }" >>"$log"
  done
}

# "A certificate near expiry renewed while reviews flow, none failing" (#22 item 1). helm install with Helm's
# certificates, validityDays=1 and renew.before=23h59m (a certificate is due a minute after it is made),
# failurePolicy Fail on both webhooks (a review that fails, fails its create) and webhooks.url at a loopback
# port. The API server calls https://127.0.0.1:PORT, a name the Helm-made certificate (the Service's names)
# lacks: so it is replaced by one that the Secret's own CA signs for the same names plus IP 127.0.0.1, with the
# same one-day lifetime, due a minute later as the Helm-made one was. gpuadmit runs as the chart's pod would:
# the Deployment's flags (--renew-secret, --renew-before and --drain-seconds included), --cert-dir holding what
# the pod's volume projects from the Secret (its items), and the chart's ServiceAccount, whose Role is all it may
# do with the Secret. Meanwhile a loop of dry-run creates runs through the installed webhooks. Once the Secret's
# tls.crt changes: gpuadmit serves it before any mount update, the CA and the caBundles are unchanged and verify
# it for 127.0.0.1, /metrics counts the renewal and the expiry gauge moved on, and the log says so. Then the
# mounted files follow the Secret, as the kubelet updates them, and the same certificate is still served; and
# gpuadmit drains (SIGTERM), so the API server opens new connections and verifies the renewed certificate
# itself. No create failed: some ran within 5 s of the renewal, some during the drain.
live_renewal() {
  local d=$WORK/renew i out rc=0 t0 san crt0 ca0 now served expiry0 expiry1 renewed failures items before after
  mkdir -p "$d" || return 1
  "$HELM" install "$NS" "$CHART" -n "$NS" --set webhooks.url="https://127.0.0.1:$LIVE_PORT" \
    --set certificates.helm.validityDays=1 --set certificates.helm.renew.before=23h59m \
    --set webhooks.mutate.failurePolicy=Fail --set webhooks.validate.failurePolicy=Fail >/dev/null || return 1
  # The serving certificate, signed again by the Secret's CA for 127.0.0.1 too.
  secret_json >"$d/installed.json" && secret_key ca.crt "$d/installed.json" >"$d/ca.crt" &&
    secret_key ca.key "$d/installed.json" >"$d/ca.key" && secret_key tls.crt "$d/installed.json" >"$d/helm.crt" || return 1
  san=$(openssl x509 -in "$d/helm.crt" -noout -ext subjectAltName | sed -n '2s/^ *//p')
  printf 'subjectAltName=%s, IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
    "$san" >"$d/ext"
  openssl req -new -newkey rsa:2048 -nodes -subj "/CN=gpuadmit.$NS.svc" -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null &&
    openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 1 -extfile "$d/ext" \
      -out "$d/tls.crt" 2>/dev/null || { echo "openssl could not sign with the Secret's ca.key"; return 1; }
  kc -n "$NS" patch secret gpuadmit-tls --type=merge \
    -p "{\"data\": {\"tls.crt\": \"$(base64 -w0 "$d/tls.crt")\", \"tls.key\": \"$(base64 -w0 "$d/tls.key")\"}}" >/dev/null || return 1
  crt0=$(fingerprint "$d/tls.crt") && ca0=$(fingerprint "$d/ca.crt") || return 1
  echo "serving certificate for $san, IP:127.0.0.1: $(openssl x509 -in "$d/tls.crt" -noout -enddate), due 60 s after it was made"
  # The Deployment's flags, and what its tls volume projects.
  mapfile -t LIVE_CHART_FLAGS < <(kc -n "$NS" get deployment gpuadmit \
    -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}' |
    grep -E '^--(drain-seconds|policy-objects|cluster-policy-name|renew-secret|renew-before)')
  echo "the Deployment's flags: ${LIVE_CHART_FLAGS[*]}"
  [[ " ${LIVE_CHART_FLAGS[*]} " == *" --renew-secret=$NS/gpuadmit-tls --renew-before=23h59m "* &&
    " ${LIVE_CHART_FLAGS[*]} " == *" --drain-seconds=5 "* ]] || return 1
  items=$(kc -n "$NS" get deployment gpuadmit -o jsonpath='{range .spec.template.spec.volumes[?(@.name=="tls")].secret.items[*]}{.key} {end}')
  echo "the tls volume projects: $items"
  [[ $items == "tls.crt tls.key " ]] || return 1
  mount_secret "$d/tls" tls.crt tls.key || return 1
  LIVE_TLS_FLAGS=(--cert-dir "$d/tls") LIVE_CA=$d/ca.crt LIVE_AUTH_FLAGS=()
  live_kubeconfig && live_serve || return 1
  expiry0=$(live_metric gpuadmit_certificate_expiry_timestamp_seconds)
  # Reviews flow: the webhooks' configuration reaches the API server's informer asynchronously.
  for ((i = 0; i < 30; i++)); do
    out=$(kc -n default create --dry-run=server -o name -f - 2>&1 <<'POD'
apiVersion: v1
kind: Pod
metadata: {name: gpuadmit-renewal-probe, annotations: {gpuadmit.io/probe: renewal}}
spec: {containers: [{name: probe, image: registry.invalid/gpuadmit-probe:0}]}
POD
    ) && [[ $out == *"reviewed by gpuadmit"* ]] && break
    sleep 1
  done
  ((i < 30)) || { echo "no review reached gpuadmit: $out"; return 1; }
  rm -f "$d/stop" "$d/reviews.log"
  renewal_reviews "$d/reviews.log" "$d/stop" &
  RENEW_LOOP_PID=$!
  t0=$SECONDS
  while ((SECONDS - t0 < 180)); do
    now=$(secret_json | secret_key tls.crt | fingerprint) || true
    [[ -n $now && $now != "$crt0" ]] && break
    sleep 1
  done
  if [[ $now == "$crt0" || -z $now ]]; then
    echo "the Secret's tls.crt did not change within 180 s"; rc=1
  else
    echo "the Secret's tls.crt changed $((SECONDS - t0)) s after the reviews started"
    # Served at once, before any mount update (the files still hold the old pair).
    for ((i = 0; i < 10; i++)); do
      secret_json >"$d/renewed.json" && secret_key tls.crt "$d/renewed.json" >"$d/renewed.crt" || return 1
      openssl s_client -connect "127.0.0.1:$LIVE_PORT" </dev/null 2>/dev/null | openssl x509 >"$d/served.crt" 2>/dev/null
      served=$(fingerprint "$d/served.crt" 2>/dev/null)
      [[ $served == "$(fingerprint "$d/renewed.crt")" ]] && break
      sleep 0.5
    done
    echo "served on 127.0.0.1:$LIVE_PORT: $served; the Secret's: $(fingerprint "$d/renewed.crt")"
    ((i < 10)) || { echo "gpuadmit does not serve the Secret's renewed tls.crt"; rc=1; }
    [[ $(fingerprint "$d/tls/tls.crt") == "$crt0" ]] || { echo "the mounted files changed: that would not show the renewal served at once"; rc=1; }
    openssl x509 -in "$d/served.crt" -noout -subject -ext subjectAltName -startdate -enddate
    # The CA is the same, and the caBundles (unchanged) verify the new certificate for the address the API server calls.
    [[ $(secret_key ca.crt "$d/renewed.json" | fingerprint) == "$ca0" ]] || { echo "the Secret's ca.crt changed"; rc=1; }
    out=$(webhook_ca_bundles | sort -u)
    [[ $out == "$(base64 -w0 "$d/ca.crt")" ]] || { echo "the caBundles are not the unchanged CA"; rc=1; }
    base64 -d <<<"${out%%$'\n'*}" >"$d/bundle.pem"
    openssl verify -CAfile "$d/bundle.pem" -verify_ip 127.0.0.1 "$d/served.crt" || rc=1
  fi
  sleep 10   # reviews go on after the renewal
  renewed=$(live_metric 'gpuadmit_certificate_renewals_total{result="renewed"}')
  failures=$(live_metric 'gpuadmit_certificate_renewals_total{result="failure"}')
  expiry1=$(live_metric gpuadmit_certificate_expiry_timestamp_seconds)
  echo "gpuadmit_certificate_renewals_total renewed $renewed, failure $failures; expiry gauge $expiry0 -> $expiry1"
  [[ ${renewed:-0} -ge 1 && ${failures:-x} == 0 ]] || rc=1
  awk -v a="${expiry0:-0}" -v b="${expiry1:-0}" 'BEGIN {exit !(b > a)}' || { echo "the expiry gauge did not move on"; rc=1; }
  grep '"msg":"serving certificate renewed"' "$WORK/live-gpuadmit.log" | head -n 3
  grep -q '"msg":"serving certificate renewed".*"in_use"' "$WORK/live-gpuadmit.log" || { echo "no 'serving certificate renewed' log line"; rc=1; }
  # The kubelet updates the mount: the files now hold the renewed pair, and gpuadmit serves the Secret's.
  mount_secret "$d/tls" tls.crt tls.key && sleep 3 || rc=1
  for ((i = 0; i < 10; i++)); do
    [[ $(openssl s_client -connect "127.0.0.1:$LIVE_PORT" </dev/null 2>/dev/null | fingerprint 2>/dev/null) == "$(secret_json | secret_key tls.crt | fingerprint)" ]] && break
    sleep 0.5
  done
  echo "after the mount update gpuadmit serves the Secret's tls.crt: $( ((i < 10)) && echo yes || echo no)"
  ((i < 10)) || rc=1
  # The API server keeps its connection to gpuadmit open across the renewal (a connection stays valid whatever
  # the certificate), so its own handshakes with the renewed certificate come now: SIGTERM, and for the
  # Deployment's drain period gpuadmit answers with Connection: close, so each review opens a new connection.
  # The creates stop 2.5 s into it (the drain is 5 s); then gpuadmit exits.
  before=$(live_metric gpuadmit_http_connections_accepted_total)
  kill -TERM "$LIVE_PID" && sleep 2.5
  after=$(live_metric gpuadmit_http_connections_accepted_total)
  touch "$d/stop" && wait "$RENEW_LOOP_PID"
  RENEW_LOOP_PID=
  wait "$LIVE_PID" 2>/dev/null
  LIVE_PID=
  echo "connections gpuadmit accepted in 2.5 s of its drain: $((after - before - 1)) (and this script's /metrics call)"
  ((after - before - 1 >= 2)) || rc=1
  # The creates: none failed, some within 5 s of the renewal (the first "serving certificate renewed" line), some
  # during the drain (after "draining"), on connections opened with the renewed certificate.
  python3 - "$d/reviews.log" "$WORK/live-gpuadmit.log" <<'PY' || rc=1
import datetime, json, sys
creates = [l.split(maxsplit=3) for l in open(sys.argv[1])]
log = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
at = lambda msg: [datetime.datetime.fromisoformat(l["ts"].replace("Z", "+00:00")).timestamp() for l in log if l["msg"].startswith(msg)]
renewed, drain = at("serving certificate renewed"), at("draining")
failed = [c for c in creates if c[0] != "ok"]
near = [c for c in creates if renewed and float(c[1]) < renewed[0] + 5 and float(c[2]) > renewed[0] - 5]
draining = [c for c in creates if c[0] == "ok" and drain and float(c[1]) > drain[0]]
reviews = sum(1 for l in log if l["msg"] == "review")
print(f"dry-run creates through the webhooks: {len(creates)}, failed {len(failed)}, within 5 s of the renewal {len(near)}, "
      f"during the drain {len(draining)}; reviews gpuadmit logged: {reviews}")
for c in failed[:5]:
    print("  ", " ".join(c))
sys.exit(1 if failed or len(near) < 2 or len(draining) < 2 else 0)
PY
  ((rc == 0)) || grep -v '"msg":"review"' "$WORK/live-gpuadmit.log" | tail -n 20
  "$HELM" uninstall "$NS" -n "$NS" --no-hooks >/dev/null || rc=1
  return "$rc"
}

phase_cluster() {
  local f
  check "e2e control plane up, minimal CRDs registered" cluster_up || true
  ((CLUSTER_UP)) || return 0
  for f in "$CHART"/ci/*.yaml; do
    check "kubectl apply --dry-run=server $(basename "$f" .yaml)" dry_run_server "$f"
  done
  check "NOTES: defaults, no warning" notes_say "$CHART/ci/default-values.yaml" "Deployment/gpuadmit +2 replica" "WARNING"
  check "NOTES: one replica and Fail without matchConditions warned" \
    notes_say "$CHART/ci/single-replica-values.yaml" "WARNING: replicas is 1.*(\n|.)*" "" 
  check "NOTES: Fail without matchConditions warned" \
    notes_say "$CHART/ci/single-replica-values.yaml" "webhooks.mutate.failurePolicy is Fail without matchConditions" ""
  check "NOTES: Fail with matchConditions not warned" \
    notes_say "$CHART/ci/fail-closed-values.yaml" "matchConditions .*: on" "WARNING"
  check "NOTES: clientAuth warns that kube-apiserver needs an admission kubeconfig user for the Service" \
    notes_say "$CHART/ci/client-auth-values.yaml" 'with a user "gpuadmit\.gpuadmit\.svc" \(or "\*"\) holding that certificate' ""
  check "GKE's quota admission: a critical pod refused where no quota covers its class" critical_pod_refused_without_quota
  check "helm install (defaults) into the API server; the PolicyReport CRD from crds/ Established" helm_install
  check "policy CRDs installed by the chart: Established, owned by the release, resource-policy keep" helm_crds_established
  check "the Deployment's pods created under GKE's quota admission (the chart's ResourceQuota)" deployment_pods_created
  check "caBundle = Secret's CA, which signed the serving certificate; the Secret keeps the CA's key" ca_bundle_matches_secret
  check "RBAC: exactly get/list/watch of the cluster view and the policy objects, patch of their status, get/patch of the TLS Secret, the audit's list/PolicyReports/Lease (kubectl auth can-i)" rbac
  check "helm upgrade reuses the generated certificate" upgrade_keeps_certificate
  check "helm upgrade puts back a policy CRD schema changed on the cluster (CRDs are templates)" upgrade_restores_crd_schema
  check "default install fails open while no gpuadmit answers" fail_open_by_default
  check "default install: a ClusterGPUPolicy edit fails closed while no gpuadmit answers (policy webhook Fail)" policy_edits_fail_closed
  check "helm uninstall: the pre-delete hook deletes the webhook configurations while the server still runs" \
    uninstall_deletes_webhooks_first
  check "helm uninstall keeps the policy CRDs and their objects (resource-policy keep)" uninstall_keeps_policy_crds
  check "an install without ca.key upgraded with renewal on: new CA, caBundle new + old CA, ca.key kept; the next upgrade drops the old CA" \
    upgrade_adds_ca_key
  check "routing: what reaches gpuadmit (namespaces, rules; defaults)" routing default
  check "routing: what reaches gpuadmit with matchConditions (only GPU-related pods, workloads and claims; under Fail with gpuadmit down a claim and a CPU Deployment are created)" routing matchConditions
  check "routing: pilot mode sends only namespaces with webhooks.namespaceSelector.matchLabels" routing_pilot
  check "the chart's optOutGuard: only allowedGroups and allowedUsers add or remove gpuadmit.io/ignore" opt_out_guard
  check "gpuadmit policy crds: Established; example policies stored as ClusterGPUPolicy; typos refused at apply" \
    policy_crds_on_the_api_server
  check "helm install with webhooks.url at a gpuadmit on loopback" live_start
  check "helm test's dry-run probe pod passes (test ServiceAccount, installed webhooks; no GPU node needed)" helm_test_passes
  check "helm test passes under warn-only-rollout, strict and kubeflow too" helm_test_passes_under_every_example_policy
  check "helm test passes when its namespace enforces Pod Security restricted" helm_test_passes_under_restricted
  check "chart's policy webhook, live gpuadmit as the chart's ServiceAccount: invalid policy refused naming its field, valid ones Active" \
    live_policy_objects
  check "client authentication enforced when on: the API server's reviews pass the installed webhooks, a bare curl gets 401; /metrics on its own port" \
    live_client_auth
  check "helm test fails when gpuadmit does not answer" helm_test_fails_without_gpuadmit
  check "helm uninstall (live install)" live_uninstall
  log "certificate renewal while reviews flow (a certificate due a minute after it is made) ..."
  check "a certificate near expiry renewed while reviews flow, none failing (Helm's CA and Secret, Fail, the Deployment's --renew-secret, the chart's ServiceAccount)" \
    live_renewal
  check "e2e control plane down" bash -c 'GPUADMIT_E2E_STATE=$0 "$1" down && test ! -e "$0"' "$WORK/cp" "$ROOT/tests/e2e/cluster.sh" &&
    CLUSTER_UP=0
}

# --- e2e -----------------------------------------------------------------------------------------
# The chart's two configurations as a cluster.sh template: rendered with placeholders that the schema
# accepts, then turned into cluster.sh's @URL@, @CA_BUNDLE@ and @FAILURE_POLICY@ (the suite switches
# failurePolicy per scenario). Everything else (rules, selectors, timeouts, matchConditions) is what
# `helm install` with these values creates.
PLACEHOLDER_URL=https://gpuadmit-e2e.invalid:1
PLACEHOLDER_CA=UExBQ0VIT0xERVItQ0EK
chart_webhooks_template() {   # OUT [HELM-ARGS...]
  local out=$1; shift
  render --show-only templates/webhooks.yaml --set webhooks.url=$PLACEHOLDER_URL \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=e2e \
    --set certificates.existingSecret.caBundle=$PLACEHOLDER_CA "$@" >"$WORK/raw.yaml" || return 1
  # failurePolicy of the two pod webhooks only: the policy-object webhook (policies.*) stays Fail, as installed.
  sed -e "s|$PLACEHOLDER_URL|@URL@|g" -e "s|$PLACEHOLDER_CA|@CA_BUNDLE@|g" "$WORK/raw.yaml" |
    awk '/^  - name: / {policy = ($3 ~ /^policies\./)} /^    failurePolicy: / && !policy {$0 = "    failurePolicy: @FAILURE_POLICY@"} {print}' >"$out"
  grep -q '^  - name: policies\.validate\.gpuadmit\.io$' "$out" || { echo "no policy-object webhook (policyObjects.enabled is the default)"; return 1; }
  [[ $(grep -c '@URL@/' "$out") == 3 && $(grep -c '@CA_BUNDLE@' "$out") == 3 && $(grep -c '@FAILURE_POLICY@' "$out") == 2 ]] ||
    { echo "placeholders not substituted as expected:"; cat "$out"; return 1; }
  grep -q '^  name: mutate.gpuadmit.io$' "$out" && grep -q '^  name: validate.gpuadmit.io$' "$out"
}

run_e2e() {   # TEMPLATE [SCENARIOS...]
  local tpl=$1 rc=0; shift
  GPUADMIT_E2E_WEBHOOKS_TEMPLATE=$tpl GPUADMIT_E2E_OVERHEAD=0 GPUADMIT_E2E_STATE= \
    "$ROOT/tests/e2e/run.sh" "$BIN" "$@" >"$WORK/e2e.out" 2>"$WORK/e2e.err" || rc=$?
  sed 's/^/  | /' "$WORK/e2e.out" | tee -a "$WORK/e2e-summary"
  ((rc == 0)) || tail -n 30 "$WORK/e2e.err"
  # Guard against the hook being lost: cluster.sh must have said it used this template.
  grep -q "webhook configurations from $tpl" "$WORK/e2e.err" ||
    { echo "cluster.sh did not use GPUADMIT_E2E_WEBHOOKS_TEMPLATE=$tpl"; rc=1; }
  return "$rc"
}

# Scenarios whose outcome depends on which pods are sent: with matchConditions they must still pass
# (GPU pods, CUDA images, GPU tolerations are sent; the CPU pod is not and stays untouched).
MC_SCENARIOS=(cpu-pod-untouched cuda-image-without-gpu-warns stray-gpu-toleration-warns
  untolerated-gpu-pod-scheduled-with-gpuadmit burstable-gpu-pod-stored-guaranteed gpu-request-without-limit-fixed
  validating-webhook-denial-message correct-gpu-pod-unchanged dry-run-server-shows-mutation
  custom-gpu-taint-tolerated-and-scheduled gpus-beyond-every-node-denied unknown-gpu-type-denied-with-models
  small-checkpoint-claim-denied deployment-fractional-gpu-denied job-template-fixed pytorchjob-templates-fixed)
  # (those not present in tests/e2e/scenarios are skipped)

phase_e2e() {
  local s have=()
  check "chart webhooks as the e2e template (defaults)" chart_webhooks_template "$WORK/webhooks-default.yaml.in"
  check "chart webhooks as the e2e template (matchConditions)" chart_webhooks_template "$WORK/webhooks-mc.yaml.in" \
    --set webhooks.matchConditions.enabled=true
  log "e2e scenarios with the chart's webhook configurations (defaults) ..."
  check "e2e scenarios through the chart's webhooks (default values)" run_e2e "$WORK/webhooks-default.yaml.in"
  cat "$WORK/e2e-summary" 2>/dev/null; rm -f "$WORK/e2e-summary"
  for s in "${MC_SCENARIOS[@]}"; do [[ -d $ROOT/tests/e2e/scenarios/$s ]] && have+=("$s"); done
  log "e2e GPU scenarios with matchConditions ..."
  check "e2e GPU scenarios through the chart's webhooks (matchConditions on)" run_e2e "$WORK/webhooks-mc.yaml.in" "${have[@]}"
  cat "$WORK/e2e-summary" 2>/dev/null; rm -f "$WORK/e2e-summary"
}

t_start=$SECONDS
envs=$("$HERE/build-helm.sh") || { echo "FAIL  build helm (tests/chart/build-helm.sh)"; echo "chart: $PASSED passed, $((FAILED + 1)) failed"; exit 1; }
eval "$envs"
HELM=$GPUADMIT_HELM
envs=$("$HERE/build-promtool.sh") || { echo "FAIL  build promtool (tests/chart/build-promtool.sh)"; echo "chart: $PASSED passed, $((FAILED + 1)) failed"; exit 1; }
eval "$envs"
PROMTOOL=$GPUADMIT_PROMTOOL
for phase in "${PHASES[@]}"; do
  case $phase in
    static | cluster | e2e) log "phase $phase"; "phase_$phase" ;;
    *) echo "unknown phase $phase (static, cluster, e2e)" >&2; exit 2 ;;
  esac
done
log "done in $((SECONDS - t_start))s"
echo "chart: $PASSED passed, $FAILED failed"
((FAILED == 0))
