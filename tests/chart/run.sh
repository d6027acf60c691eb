#!/usr/bin/env bash
# gpuadmit's install artifacts, tested: the Helm chart, deploy/, the Dockerfile.
#
#   tests/chart/run.sh GPUADMIT_BIN [static] [cluster] [e2e]     (default: all three)
#
# static   helm lint + template for every charts/gpuadmit/ci/*.yaml with the safety invariants
#          (check_manifests.py); misspelled and contradictory values fail with a clear message; every
#          value documented; default policy, deploy/gpuadmit.yaml and example policies in sync and valid;
#          the Dockerfile's runtime packages = ldd of GPUADMIT_BIN (check-dockerfile.sh)
# cluster  on the e2e control plane (tests/e2e/cluster.sh, no gpuadmit): every ci/ rendering applied with
#          --dry-run=server; NOTES warnings; a real `helm install`, RBAC checked with `kubectl auth can-i
#          --as=system:serviceaccount:...`, certificate reused on upgrade, fail-open default, uninstall
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
  check "deploy/gpuadmit.yaml in sync with the chart" "$ROOT/deploy/render.sh" "$HELM" --check
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

# RBAC: what the cluster view needs, and what it must never have.
rbac() {
  local sa=system:serviceaccount:$NS:gpuadmit rc=0 verb res want got
  while read -r want verb res; do
    [[ -n $want ]] || continue
    got=$(kc auth can-i "$verb" "$res" --as="$sa" --all-namespaces 2>/dev/null) || true
    printf '%-4s %-7s %-40s (want %s)\n' "$got" "$verb" "$res" "$want"
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
no * *
TABLE
  # And nothing beyond that: the resource rows of `can-i --list` (less the self-review APIs every
  # authenticated user has) are exactly the four kinds with get/list/watch.
  got=$(kc auth can-i --list --as="$sa" | awk 'NR > 1 && $1 !~ /^\[/ && $1 !~ /^selfsubject/ {print $1, $(NF-2), $(NF-1), $NF}' | sort)
  want=$(printf '%s\n' "nodes [get list watch]" "persistentvolumeclaims [get list watch]" \
    "resourcequotas [get list watch]" "storageclasses.storage.k8s.io [get list watch]")
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
  "$HELM" uninstall "$NS" -n "$NS" --no-hooks || return 1
  kc delete -f "$WORK/cleanup-rbac.yaml" >/dev/null || return 1
  ! kc get clusterrole gpuadmit 2>/dev/null && ! kc -n "$NS" get deployment gpuadmit 2>/dev/null
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
# here with the test's ServiceAccount (impersonated), since no kubelet can run the test pod.
# live_serve [POLICY]: (re)start the loopback gpuadmit on LIVE_PORT, with POLICY or the embedded policy.
live_serve() {
  local i policy=()
  [[ -n ${1:-} ]] && policy=(--policy "$1")
  [[ -n ${LIVE_PID:-} ]] && { kill "$LIVE_PID"; wait "$LIVE_PID" 2>/dev/null; LIVE_PID=; }
  "$BIN" serve --listen "127.0.0.1:$LIVE_PORT" --tls-cert-file "$WORK/live-certs/tls.crt" \
    --tls-private-key-file "$WORK/live-certs/tls.key" --drain-seconds 0 "${policy[@]}" </dev/null >"$WORK/live-gpuadmit.log" 2>&1 &
  LIVE_PID=$!
  for ((i = 0; i < 100; i++)); do
    curl -fsS --max-time 2 --cacert "$WORK/live-certs/ca.crt" "https://127.0.0.1:$LIVE_PORT/readyz" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  tail "$WORK/live-gpuadmit.log"
  return 1
}

live_start() {
  local i
  "$BIN" certs generate --ip 127.0.0.1 --dns localhost --out "$WORK/live-certs" >/dev/null || return 1
  for ((i = 0; i < 50; i++)); do
    LIVE_PORT=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$LIVE_PORT") 2>/dev/null || break
  done
  live_serve || return 1
  "$HELM" install "$NS" "$CHART" -n "$NS" --set webhooks.url="https://127.0.0.1:$LIVE_PORT" \
    --set certificates.helm.enabled=false --set certificates.existingSecret.name=gpuadmit-dev \
    --set certificates.existingSecret.caBundle="$(base64 -w0 "$WORK/live-certs/ca.crt")"
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
  check "GKE's quota admission: a critical pod refused where no quota covers its class" critical_pod_refused_without_quota
  check "helm install (defaults) into the API server" helm_install
  check "the Deployment's pods created under GKE's quota admission (the chart's ResourceQuota)" deployment_pods_created
  check "caBundle = Secret's CA, which signed the serving certificate" ca_bundle_matches_secret
  check "RBAC: exactly get/list/watch of the cluster view (kubectl auth can-i)" rbac
  check "helm upgrade reuses the generated certificate" upgrade_keeps_certificate
  check "default install fails open while no gpuadmit answers" fail_open_by_default
  check "helm uninstall: the pre-delete hook deletes the webhook configurations while the server still runs" \
    uninstall_deletes_webhooks_first
  check "routing: what reaches gpuadmit (namespaces, rules; defaults)" routing default
  check "routing: what reaches gpuadmit with matchConditions (only GPU-related pods, workloads and claims; under Fail with gpuadmit down a claim and a CPU Deployment are created)" routing matchConditions
  check "routing: pilot mode sends only namespaces with webhooks.namespaceSelector.matchLabels" routing_pilot
  check "docs/rollout.md's opt-out guard: only admins add or remove gpuadmit.io/ignore" opt_out_guard
  check "gpuadmit policy crds: Established; example policies stored as ClusterGPUPolicy; typos refused at apply" \
    policy_crds_on_the_api_server
  check "helm install with webhooks.url at a gpuadmit on loopback" live_start
  check "helm test's dry-run probe pod passes (test ServiceAccount, installed webhooks; no GPU node needed)" helm_test_passes
  check "helm test passes under warn-only-rollout, strict and kubeflow too" helm_test_passes_under_every_example_policy
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
  sed -e "s|$PLACEHOLDER_URL|@URL@|g" -e "s|$PLACEHOLDER_CA|@CA_BUNDLE@|g" \
    -e 's|^\(    failurePolicy:\) .*|\1 @FAILURE_POLICY@|' "$WORK/raw.yaml" >"$out"
  [[ $(grep -c '@URL@/' "$out") == 2 && $(grep -c '@CA_BUNDLE@' "$out") == 2 && $(grep -c '@FAILURE_POLICY@' "$out") == 2 ]] ||
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
