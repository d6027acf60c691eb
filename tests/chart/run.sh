#!/usr/bin/env bash
# gpuadmit's install artifacts, tested: the Helm chart, deploy/, the Dockerfile.
#
#   tests/chart/run.sh GPUADMIT_BIN [static] [cluster] [e2e]     (default: all three)
#
# static   helm lint + template for every charts/gpuadmit/ci/*.yaml with the safety invariants
#          (check_manifests.py); misspelled and contradictory values fail with a clear message; every
#          value documented; default policy, deploy/gpuadmit.yaml and example policies in sync and valid;
#          the Dockerfile's runtime packages = ldd of GPUADMIT_BIN (check-dockerfile.sh); the policy CRDs are
#          `gpuadmit policy crds`'s, policyObjects' flags, RBAC and webhook agree, the chart's serve flags exist;
#          clientAuth's CA mount and metrics.port's ports agree with their flags
# cluster  on the e2e control plane (tests/e2e/cluster.sh, no gpuadmit): every ci/ rendering applied with
#          --dry-run=server; NOTES warnings; a real `helm install`, RBAC checked with `kubectl auth can-i
#          --as=system:serviceaccount:...`, certificate reused on upgrade, fail-open default, uninstall; the
#          policy CRDs (Established, upgraded, kept), policy edits fail closed, a live gpuadmit with the
#          Deployment's policy-object flags as the chart's ServiceAccount behind the installed policy webhook;
#          client authentication enforced when on (the API server's admission kubeconfig from cluster.sh)
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
cleanup() {
  if [[ -n $LIVE_PID ]]; then kill "$LIVE_PID" 2>/dev/null; wait "$LIVE_PID" 2>/dev/null; fi
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
# and with client authentication and the metrics port.
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

# metrics.port: off (default) /metrics on the https port (ServiceMonitor too); on, --metrics-listen, a container
# port and a Service port named metrics, the ServiceMonitor scraping it and the NetworkPolicy admitting it from
# networkPolicy.metricsFrom (check_manifests.py checks the ports; here the flag and the sources).
metrics_port_rendered() {
  render --set serviceMonitor.enabled=true --set networkPolicy.enabled=true >"$WORK/m-off.yaml" &&
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
  check "clientAuth.enabled without a CA fails" expect_fail "clientAuth.enabled needs the CA" --set clientAuth.enabled=true
  check "two client CA sources fail" \
    expect_fail "contradictory values: clientAuth.caBundle and clientAuth.existingSecret" --set clientAuth.caBundle=x --set clientAuth.existingSecret=s
  check "clientAuth.caBundle that is not PEM (base64) fails" \
    expect_fail "clientAuth.caBundle must be PEM" --set clientAuth.enabled=true --set clientAuth.caBundle=Cg==
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
  check "ClusterRole = the RBAC in docs/cluster.md" \
    bash -c '"$0" template g "$1" -n gpuadmit >"$2/role.yaml" && python3 "$3/check_rbac_doc.py" "$2/role.yaml" "$4/docs/cluster.md"' \
    "$HELM" "$CHART" "$WORK" "$HERE" "$ROOT"
  check "chart default policy = the built-in default (gpuadmit check gives the same verdicts)" default_policy_is_builtin
  check "deploy/gpuadmit.yaml and deploy/policy-crds.yaml in sync with the chart" "$ROOT/deploy/render.sh" "$HELM" --check
  check "deploy/gpuadmit.yaml: the webhook configurations first (kubectl delete -f removes them before the server)" \
    python3 -c 'import sys, yaml; k = [d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d]; print(k[:3]); sys.exit(sorted(k[:2]) != ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])' "$ROOT/deploy/gpuadmit.yaml"
  check "deploy/gpuadmit.yaml invariants" python3 "$HERE/check_manifests.py" "$ROOT/deploy/gpuadmit.yaml" "$NS"
  check "example policies and chart policies valid; each policy.preset is its deploy/policies file" policies_valid
  check "Dockerfile runtime packages = ldd of the binary" "$HERE/check-dockerfile.sh" "$BIN"
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
      configmap/gpuadmit-policy poddisruptionbudget/gpuadmit resourcequota/gpuadmit-critical-pods &&
    kc get clusterrole/gpuadmit clusterrolebinding/gpuadmit \
      mutatingwebhookconfiguration/mutate.gpuadmit.io validatingwebhookconfiguration/validate.gpuadmit.io
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
    san=$(openssl x509 -in "$WORK/tls.crt" -noout -ext subjectAltName) && grep -q "DNS:gpuadmit.$NS.svc" <<<"$san"
}

# RBAC: what the cluster view and the policy objects (policyObjects.enabled, the default) need, and what it
# must never have.
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
no get secrets
no list secrets
no list configmaps
no create pods
no list pods
no delete pods
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
  # authenticated user has) are exactly the four kinds with get/list/watch, the two policy kinds with
  # get/list/watch and their status with patch. (Printed as the resource and its verbs column.)
  got=$(kc auth can-i --list --as="$sa" |
    awk 'NR > 1 && $1 !~ /^\[/ && $1 !~ /^selfsubject/ {match($0, /\[[^]]*\] *$/); v = substr($0, RSTART); sub(/ *$/, "", v); print $1, v}' | sort)
  want=$(printf '%s\n' "clustergpupolicies.gpuadmit.io [get list watch]" "clustergpupolicies.gpuadmit.io/status [patch]" \
    "gpupolicies.gpuadmit.io [get list watch]" "gpupolicies.gpuadmit.io/status [patch]" "nodes [get list watch]" \
    "persistentvolumeclaims [get list watch]" "resourcequotas [get list watch]" "storageclasses.storage.k8s.io [get list watch]" | sort)
  echo "can-i --list resources:"; echo "$got"
  [[ $got == "$want" ]] || { echo "want exactly:"; echo "$want"; rc=1; }
  return "$rc"
}

upgrade_keeps_certificate() {
  local before after
  before=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.tls\.crt}')
  "$HELM" upgrade "$NS" "$CHART" -n "$NS" --reuse-values --set server.logLevel=debug || return 1
  after=$(kc -n "$NS" get secret gpuadmit-tls -o jsonpath='{.data.tls\.crt}')
  [[ -n $before && $before == "$after" ]] || { echo "helm upgrade replaced the serving certificate"; return 1; }
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
# Job's script runs (here, since no kubelet runs pods: kubectl acts as the hook's ServiceAccount). The
# webhook configurations are gone while the Deployment and the Service still stand; then the rest is
# uninstalled with --no-hooks (Helm would wait for a Job no node runs).
uninstall_deletes_webhooks_first() {
  local bin=$WORK/as-cleanup-sa
  render --show-only templates/webhooks-cleanup.yaml >"$WORK/cleanup.yaml" || return 1
  python3 - "$WORK/cleanup.yaml" "$WORK/cleanup-rbac.yaml" "$WORK/cleanup.sh" <<'PY' || return 1
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
assert all(d["metadata"]["annotations"]["helm.sh/hook"] == "pre-delete" for d in docs), "not all pre-delete hooks"
yaml.safe_dump_all([d for d in docs if d["kind"] != "Job"], open(sys.argv[2], "w"))
job = [d for d in docs if d["kind"] == "Job"][0]
open(sys.argv[3], "w").write(job["spec"]["template"]["spec"]["containers"][0]["command"][2])
PY
  kc apply -f "$WORK/cleanup-rbac.yaml" >/dev/null || return 1
  mkdir -p "$bin"
  printf '#!/bin/sh\nexec %q --as=system:serviceaccount:%s:%s-webhooks-cleanup "$@"\n' "$KUBECTL" "$NS" "$NS" >"$bin/kubectl"
  chmod +x "$bin/kubectl"
  # The hook may delete the two configurations and nothing else.
  kc auth can-i delete validatingwebhookconfigurations/other --as="system:serviceaccount:$NS:$NS-webhooks-cleanup" &&
    { echo "the hook's ServiceAccount may delete other webhook configurations"; return 1; }
  PATH=$bin:$PATH sh -c "$(<"$WORK/cleanup.sh")" || return 1
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
  local not_gpu=sent no_containers=sent
  [[ $mode == matchConditions ]] && not_gpu="not sent" no_containers=invalid
  while read -r ns file want; do
    [[ -n $ns ]] || continue
    case $want in not_gpu) want=$not_gpu ;; no_containers) want=$no_containers ;; esac
    want=${want//_/ }
    if out=$(kc -n "$ns" create --dry-run=server -f "$HERE/routing/$file" 2>&1); then got="not sent"
    elif [[ $out == *"failed calling webhook"* ]]; then got=sent
    elif [[ $out == *" is invalid:"* && $out != *atch*ondition* ]]; then got=invalid
    else got="error: $out"; fi
    printf '%-9s %-16s %-24s %s\n' "$([[ $got == "$want" ]] && echo ok || echo WRONG)" "$ns" "$file" "$got (want $want)"
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
routing gpu-job.yaml sent
routing cpu-cronjob.yaml not_gpu
routing gpu-cronjob.yaml sent
routing gpu-pytorchjob.yaml sent
routing cpu-pytorchjob.yaml not_gpu
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

# docs/rollout.md's ValidatingAdmissionPolicy, applied from the page: a user who may update namespaces
# cannot add the opt-out label but can set others; an admin (system:masters) can add it.
opt_out_guard() {
  local i out rc=0
  python3 - "$ROOT/docs/rollout.md" "$WORK/guard.yaml" <<'PY' || return 1
import re, sys
m = re.search(r"<!-- opt-out-guard -->\s*```yaml\n(.*?)```", open(sys.argv[1]).read(), re.S)
open(sys.argv[2], "w").write(m.group(1))
PY
  kc create namespace guard-test >/dev/null || return 1
  kc create clusterrole guard-test-ns --verb=get,update,patch --resource=namespaces >/dev/null &&
    kc create clusterrolebinding guard-test-ns --clusterrole=guard-test-ns --user=alice >/dev/null || return 1
  kc apply -f "$WORK/guard.yaml" >/dev/null || return 1
  # The policy reaches the API server's admission asynchronously: wait until alice is refused.
  for ((i = 0; i < 100; i++)); do
    out=$(kc label namespace guard-test gpuadmit.io/ignore=true --as=alice 2>&1) || break
    kc label namespace guard-test gpuadmit.io/ignore- >/dev/null
    sleep 0.3
  done
  echo "alice adds the opt-out label: $out"
  [[ $out == *"only cluster admins may add or remove the gpuadmit.io/ignore label"* ]] || rc=1
  kc label namespace guard-test team=ml --as=alice || rc=1
  kc label namespace guard-test gpuadmit.io/ignore=true || rc=1
  out=$(kc label namespace guard-test gpuadmit.io/ignore- --as=alice 2>&1) && { echo "alice removed it: $out"; rc=1; }
  kc delete -f "$WORK/guard.yaml" >/dev/null || rc=1
  kc delete namespace guard-test --wait=false >/dev/null || rc=1
  kc delete clusterrolebinding guard-test-ns >/dev/null && kc delete clusterrole guard-test-ns >/dev/null || rc=1
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
  "$BIN" serve --listen "127.0.0.1:$LIVE_PORT" --tls-cert-file "$WORK/live-certs/tls.crt" \
    --tls-private-key-file "$WORK/live-certs/tls.key" --drain-seconds 0 "${policy[@]}" \
    --kubeconfig "$WORK/live-sa.kubeconfig" "${LIVE_CHART_FLAGS[@]}" "${LIVE_AUTH_FLAGS[@]}" </dev/null >"$WORK/live-gpuadmit.log" 2>&1 &
  LIVE_PID=$!
  for ((i = 0; i < 100; i++)); do
    curl -fsS --max-time 2 --cacert "$WORK/live-certs/ca.crt" "https://127.0.0.1:$LIVE_PORT/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$LIVE_PID" 2>/dev/null || break
    sleep 0.2
  done
  echo "gpuadmit serve ${LIVE_CHART_FLAGS[*]} ${LIVE_AUTH_FLAGS[*]} --kubeconfig (the chart's ServiceAccount) not ready; its output (first and last lines):"
  head -n 3 "$WORK/live-gpuadmit.log"
  echo "..."
  tail -n 10 "$WORK/live-gpuadmit.log"
  return 1
}

live_start() {
  local i token
  "$BIN" certs generate --ip 127.0.0.1 --dns localhost --out "$WORK/live-certs" >/dev/null || return 1
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
  token=$(kc -n "$NS" create token gpuadmit --duration=2h) || return 1
  cat >"$WORK/live-sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$GPUADMIT_E2E_API_URL", certificate-authority: "$GPUADMIT_E2E_CA"}}]
users: [{name: gpuadmit-sa, user: {token: "$token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: gpuadmit-sa}}]
current-context: e2e
EOF
  live_serve
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

# helm_test_script: the test pod's shell script, run here; kubectl acts as the test's ServiceAccount.
helm_test_script() {
  local bin=$WORK/as-test-sa
  mkdir -p "$bin"
  printf '#!/bin/sh\nexec %q --as=system:serviceaccount:%s:%s-test "$@"\n' "$KUBECTL" "$NS" "$NS" >"$bin/kubectl"
  chmod +x "$bin/kubectl"
  PATH=$bin:$PATH sh -c "$(<"$WORK/helm-test.sh")"
}

helm_test_passes() {
  local i
  # The hook's ServiceAccount, Role and RoleBinding (what `helm test` creates before the pod), and the script.
  render --show-only templates/tests/test-webhook.yaml --set webhooks.url="https://127.0.0.1:$LIVE_PORT" \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=gpuadmit-dev \
    --set certificates.existingSecret.caBundle=Cg== >"$WORK/helm-test.yaml" || return 1
  python3 - "$WORK/helm-test.yaml" "$WORK/helm-test-rbac.yaml" "$WORK/helm-test.sh" <<'PY' || return 1
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
yaml.safe_dump_all([d for d in docs if d["kind"] != "Pod"], open(sys.argv[2], "w"))
pod = [d for d in docs if d["kind"] == "Pod"][0]
open(sys.argv[3], "w").write(pod["spec"]["containers"][0]["command"][2])
PY
  kc apply -f "$WORK/helm-test-rbac.yaml" || return 1
  # The new configurations reach the API server's informer asynchronously.
  for ((i = 0; i < 30; i++)); do
    helm_test_script && return 0
    sleep 1
  done
  return 1
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
  ((rc != 0)) && grep -q "FAIL: no gpuadmit.io/probe warning" <<<"$out"
}

live_uninstall() {
  # --no-hooks: no node runs the cleanup Job here (uninstall_deletes_webhooks_first runs its script).
  "$HELM" uninstall "$NS" -n "$NS" --no-hooks && kc delete -f "$WORK/helm-test-rbac.yaml" --ignore-not-found
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
  check "helm install (defaults) into the API server" helm_install
  check "policy CRDs installed by the chart: Established, owned by the release, resource-policy keep" helm_crds_established
  check "the Deployment's pods created under GKE's quota admission (the chart's ResourceQuota)" deployment_pods_created
  check "caBundle = Secret's CA, which signed the serving certificate" ca_bundle_matches_secret
  check "RBAC: exactly get/list/watch of the cluster view and the policy objects, patch of their status (kubectl auth can-i)" rbac
  check "helm upgrade reuses the generated certificate" upgrade_keeps_certificate
  check "helm upgrade puts back a policy CRD schema changed on the cluster (CRDs are templates)" upgrade_restores_crd_schema
  check "default install fails open while no gpuadmit answers" fail_open_by_default
  check "default install: a ClusterGPUPolicy edit fails closed while no gpuadmit answers (policy webhook Fail)" policy_edits_fail_closed
  check "helm uninstall: the pre-delete hook deletes the webhook configurations while the server still runs" \
    uninstall_deletes_webhooks_first
  check "helm uninstall keeps the policy CRDs and their objects (resource-policy keep)" uninstall_keeps_policy_crds
  check "routing: what reaches gpuadmit (namespaces, rules; defaults)" routing default
  check "routing: what reaches gpuadmit with matchConditions (only GPU-related pods, workloads and claims; under Fail with gpuadmit down a claim and a CPU Deployment are created)" routing matchConditions
  check "routing: pilot mode sends only namespaces with webhooks.namespaceSelector.matchLabels" routing_pilot
  check "docs/rollout.md's opt-out guard: only admins add or remove gpuadmit.io/ignore" opt_out_guard
  check "gpuadmit policy crds: Established; example policies stored as ClusterGPUPolicy; typos refused at apply" \
    policy_crds_on_the_api_server
  check "helm install with webhooks.url at a gpuadmit on loopback" live_start
  check "helm test's dry-run probe pod passes (test ServiceAccount, installed webhooks; no GPU node needed)" helm_test_passes
  check "helm test passes under warn-only-rollout, strict and kubeflow too" helm_test_passes_under_every_example_policy
  check "chart's policy webhook, live gpuadmit as the chart's ServiceAccount: invalid policy refused naming its field, valid ones Active" \
    live_policy_objects
  check "client authentication enforced when on: the API server's reviews pass the installed webhooks, a bare curl gets 401; /metrics on its own port" \
    live_client_auth
  check "helm test fails when gpuadmit does not answer" helm_test_fails_without_gpuadmit
  check "helm uninstall (live install)" live_uninstall
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
