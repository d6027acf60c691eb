#!/usr/bin/env python3
"""The truth harness (issue #26 item 4): profile x manifest, without and with gpuadmit, judged by the
real kube-scheduler of the e2e control plane (tests/e2e/cluster.sh with kube-controller-manager).

Started by tests/truth/run.sh, which brings the control plane up and down; this program owns only
`gpuadmit serve` (one at a time, restarted per policy) and the objects it creates.

For each cluster profile (tests/truth/clusters/*.yaml: a v1 List or a YAML stream of Nodes, NodePools,
StorageClasses, ResourceQuotas, ...), the Nodes of the previous profile are deleted and the profile's
created (status through the create body and again through the status subresource). Namespaced objects
of a profile (ResourceQuotas, LimitRanges, PVCs) are grouped by their namespace: each such namespace is a
variant of the profile, and a case's fresh namespace gets copies of that variant's objects.

For each manifest (tests/truth/manifests/*.yaml, any number of documents) and policy, two runs in fresh
namespaces: `without` (namespace labelled gpuadmit.io/ignore, the chart's opt-out label, so the API server
never calls gpuadmit) and `with` (the chart's two webhook configurations, failurePolicy Fail). Each
object is POSTed through the API (warnings from the Warning headers, denials from the Status), then the
harness waits (bounded) until the controllers have made their pods and the scheduler has decided on
each. Cases run in parallel; any run with a Pending pod is run again alone, since pods of parallel runs
compete for the same nodes (a pod that schedules under contention schedules alone, so only Pending
needs the re-run).

Claims are bound by the harness's Provisioner (a PersistentVolume pre-bound to each Pending claim of an
existing StorageClass) and kube-controller-manager's volume controllers, as a CSI driver would.
Namespaces with a variant's quotas are made before the runs and waited for once (prepare()).
The classification is tests/truth/README.md's; `truth.py --rejudge results.json OUTDIR` applies it again
to a finished run without running anything.

Outputs (--out DIR): results.json, matrix.md; stdout: one line per case and the summary
  truth: N cases, H harmful, D honest denials, F fixed, U unexplained
Exit status 1 if any invariant is breached (H + U + I3 breaches > 0), 2 on a harness error.
"""
import argparse
import base64
import concurrent.futures as cf
import hashlib
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import yaml

# --- classification tables ------------------------------------------------------------------------
# Rules whose verdict is about where a pod can run: a denial by one of them is honest only if the pod
# does not schedule without gpuadmit either.
SCHEDULING_RULES = {"node-fit", "gpu-type", "cuda-driver", "gpu-tolerations"}
# Rules that enforce something the API server rejects by itself (I2, first kind).
APISERVER_RULES = {"gpu-whole-units", "gpu-limit-equals-request"}
# Everything else is a policy choice not about scheduling (I2, third kind): memory-floor, gpu-quota,
# checkpoint-pvc, stray-gpu-toleration, gpu-intent, guaranteed-qos, shm-size, presets.

OPT_OUT_LABEL = "gpuadmit.io/ignore"   # the chart's webhooks.namespaceSelector.optOutLabel default
WORKLOAD_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob",
                  "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"}
SKIP_KINDS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService",
              "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
              "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "Namespace"}
STRIP_META = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink",
              "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences")

LOCK = threading.Lock()
STOP = threading.Event()


def log(msg):
    with LOCK:
        print(time.strftime("%H:%M:%S", time.gmtime()) + " truth: " + msg, file=sys.stderr, flush=True)


class HarnessError(Exception):
    pass


# --- API access -----------------------------------------------------------------------------------
class Api:
    def __init__(self, url, ca, cert, key, timeout=20):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.resources = {}   # (apiVersion, kind) -> (path prefix, resource, namespaced)

    def call(self, method, path, body=None, params=None, ctype="application/json"):
        """(status, parsed body or text, warnings)."""
        url = self.url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=self.timeout) as r:
                status, raw, headers = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, raw, headers = e.code, e.read(), e.headers
        except (urllib.error.URLError, OSError) as e:   # connection refused, timeout: the caller sees status 0
            return 0, {"message": "%s %s: %s" % (method, path, e)}, []
        warnings = [parse_warning(w) for w in (headers.get_all("Warning") or [])]
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = raw.decode(errors="replace")
        return status, parsed, warnings

    def get(self, path, **params):
        st, body, _ = self.call("GET", path, params=params or None)
        return st, body

    def discover(self):
        res = {}
        st, core = self.get("/api/v1")
        groups = [("v1", core)]
        st, apis = self.get("/apis")
        for g in apis.get("groups", []):
            for v in g.get("versions", []):
                gv = v["groupVersion"]
                st, body = self.get("/apis/" + gv)
                if st == 200:
                    groups.append((gv, body))
        for gv, body in groups:
            prefix = "/api/v1" if gv == "v1" else "/apis/" + gv
            for r in body.get("resources", []):
                if "/" in r["name"]:
                    continue
                res[(gv, r["kind"])] = (prefix, r["name"], r["namespaced"])
        self.resources = res

    def path_for(self, obj, ns=None, name=None):
        key = (obj.get("apiVersion", ""), obj.get("kind", ""))
        if key not in self.resources:
            return None, None
        prefix, resource, namespaced = self.resources[key]
        p = prefix
        if namespaced:
            p += "/namespaces/" + (ns or obj["metadata"].get("namespace", "default"))
        p += "/" + resource
        if name:
            p += "/" + name
        return p, namespaced


def parse_warning(h):
    # RFC 7234 warn-code warn-agent "text": 299 - "gpu-intent: ..."
    try:   # http.client decodes header bytes as Latin-1; the API server sends UTF-8 ("×", "…")
        h = h.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    m = re.match(r'^\s*\d{3}\s+\S+\s+"(.*)"\s*$', h, re.S)
    return (m.group(1) if m else h).replace('\\"', '"')


def kubectl(args, timeout=60, input_text=None):
    p = subprocess.run([os.environ["GPUADMIT_E2E_KUBECTL"], "--kubeconfig", os.environ["KUBECONFIG"]] + args,
                       input=input_text, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# --- input files -----------------------------------------------------------------------------------
def load_docs(path):
    with open(path) as f:
        text = f.read()
    docs = []
    for d in yaml.safe_load_all(text):
        if not isinstance(d, dict):
            continue
        if d.get("kind") == "List" or (d.get("kind", "").endswith("List") and "items" in d):
            docs.extend(i for i in d.get("items") or [] if isinstance(i, dict))
        else:
            docs.append(d)
    return docs


def clean(obj, keep_status=True):
    o = json.loads(json.dumps(obj))
    md = o.setdefault("metadata", {})
    for k in STRIP_META:
        md.pop(k, None)
    ann = md.get("annotations") or {}
    ann.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if not keep_status:
        o.pop("status", None)
    return o


def yaml_files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.endswith((".yaml", ".yml", ".json")) and not f.startswith("."))


class Profile:
    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.nodes, self.cluster_objs, self.by_ns = [], [], {}
        for d in load_docs(path):
            kind = d.get("kind")
            if kind == "Node":
                self.nodes.append(clean(d))
            elif kind == "Namespace":
                continue
            elif d.get("metadata", {}).get("namespace") and kind not in ("Pod", "Event"):
                o = clean(d, keep_status=False)
                if kind == "PersistentVolumeClaim":
                    o.get("spec", {}).pop("volumeName", None)
                    (o.get("metadata", {}).get("annotations") or {}).pop("pv.kubernetes.io/bind-completed", None)
                self.by_ns.setdefault(d["metadata"]["namespace"], []).append(o)
            elif kind not in ("Pod", "Event"):
                self.cluster_objs.append(clean(d, keep_status=False))
        # A variant per namespace that carries objects; one plain variant when there is none.
        self.variants = sorted(self.by_ns) or [""]


class Manifest:
    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.docs = load_docs(path)
        self.crds = [d for d in self.docs if d.get("kind") == "CustomResourceDefinition"]
        self.asks_gpu = asks_gpu(self.docs)


# --- gpuadmit ------------------------------------------------------------------------------------
class Gpuadmit:
    def __init__(self, binary, workdir, port, kubeconfig):
        self.bin, self.dir, self.port, self.kubeconfig = binary, workdir, port, kubeconfig
        self.proc = None
        self.policy = None
        self.certs = os.path.join(workdir, "webhook-certs")
        os.makedirs(workdir, exist_ok=True)
        if not os.path.exists(os.path.join(self.certs, "tls.crt")):   # run.sh made them for the caBundle
            subprocess.run([binary, "certs", "generate", "--ip", "127.0.0.1", "--dns", "localhost", "--out", self.certs],
                           check=True, capture_output=True, timeout=60)
        self.ctx = ssl.create_default_context(cafile=os.path.join(self.certs, "ca.crt"))
        self.base = "https://127.0.0.1:%d" % port
        self.log_path = None

    def start(self, policy, view=True):
        self.stop()
        self.policy = policy
        tag = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(policy) if policy else "default") + ("" if view else "-noview")
        self.log_path = os.path.join(self.dir, "gpuadmit-%s.log" % tag)
        args = [self.bin, "serve", "--listen", "127.0.0.1:%d" % self.port,
                "--tls-cert-file", os.path.join(self.certs, "tls.crt"),
                "--tls-private-key-file", os.path.join(self.certs, "tls.key"),
                "--drain-seconds", "0", "--log-level", "info"]
        args += ["--kubeconfig", self.kubeconfig] if view else ["--cluster-view", "off"]
        if policy:
            args += ["--policy", policy]
        logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True)
        logf.close()
        with open(os.path.join(self.dir, "gpuadmit.pid"), "w") as f:
            f.write(str(self.proc.pid))
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError("gpuadmit serve exited (%s); see %s" % (self.proc.returncode, self.log_path))
            try:
                with urllib.request.urlopen(self.base + "/readyz", context=self.ctx, timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise HarnessError("gpuadmit /readyz not ready within 30s; see %s" % self.log_path)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def view_counts(self):
        try:
            with urllib.request.urlopen(self.base + "/metrics", context=self.ctx, timeout=2) as r:
                text = r.read().decode()
        except (urllib.error.URLError, OSError):
            return {}
        out = {}
        for m in re.finditer(r'^gpuadmit_cluster_objects\{kind="([a-z]+)"\}\s+(\S+)', text, re.M):
            out[m.group(1)] = int(float(m.group(2)))
        return out

    def mutate(self, api, obj, ns, endpoint="/mutate"):
        """A second /mutate of a stored object: the JSON patch it returns (None = no patch). Its warnings (of
        /validate, with endpoint="/validate": the findings) are kept in last_warnings."""
        api_version = obj.get("apiVersion", "v1")
        group, _, version = api_version.rpartition("/")
        key = (api_version, obj.get("kind"))
        resource = api.resources.get(key, (None, "", True))[1]
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": obj.get("kind")},
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": {"group": group, "version": version, "kind": obj.get("kind")},
            "requestResource": {"group": group, "version": version, "resource": resource},
            "name": obj["metadata"].get("name", ""), "namespace": ns, "operation": "CREATE",
            "userInfo": {"username": "truth-harness"}, "object": obj, "oldObject": None, "dryRun": True,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}
        req = urllib.request.Request(self.base + endpoint, data=json.dumps(review).encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=10) as r:
                resp = json.loads(r.read()).get("response", {})
        except (urllib.error.URLError, OSError, ValueError) as e:
            return {"error": str(e)}
        self.last_warnings = resp.get("warnings") or []
        patch = resp.get("patch")
        if not patch:
            return None
        ops = json.loads(base64.b64decode(patch))
        return ops or None


# --- one run -----------------------------------------------------------------------------------------
def sched_causes(msg):
    """The scheduler's reasons, as short cause tags with the words an explanation must use."""
    causes = []
    m = msg or ""
    for res in re.findall(r"Insufficient ([A-Za-z0-9./_-]*[A-Za-z0-9])", m):
        causes.append(("insufficient " + res, [res, res.split("/")[-1]]))
    if "untolerated taint" in m or "had taint" in m:
        causes.append(("taint", ["taint", "tolerat"]))
    if "node affinity/selector" in m or "didn't match Pod's node affinity" in m:
        causes.append(("affinity/selector", ["affinity", "selector", "gpu-type", "label"]))
    if "were unschedulable" in m:
        causes.append(("cordoned", ["cordon", "unschedulable"]))
    if "no nodes available" in m or re.search(r"\b0/0 nodes", m):
        causes.append(("no nodes", ["no node", "scale", "nodepool", "autoscal"]))
    if "PersistentVolumeClaim" in m or "volume" in m.lower():
        causes.append(("volume", ["claim", "volume", "pvc", "storage"]))
    if "Too many pods" in m:
        causes.append(("pods", ["pods"]))
    # DRA, in the scheduler's words and the resource-claim controller's (a template it cannot find): an
    # explanation names the object, or says why no device fits.
    for cls in re.findall(r"device class (\S+?) does not exist", m):
        causes.append(("deviceclass " + cls, [("deviceclass", cls)]))
    for tpl in re.findall(r'resourceclaimtemplate\.resource\.k8s\.io "([^"]+)" not found', m):
        causes.append(("resourceclaimtemplate " + tpl, [("resourceclaimtemplate", tpl)]))
    for claim in re.findall(r'resourceclaim "([^"]+)" not found', m):
        causes.append(("resourceclaim " + claim, [("resourceclaim", claim)]))
    if "cannot allocate all claims" in m:
        causes.append(("claims unallocatable", ["cannot allocate", "matches no device", "no node has",
                                                "devices for all"]))
    # ResourceQuota admission, for a Pod or a controller's FailedCreate: an explanation names the quota
    # and the resource (a word tuple: all of its words must appear).
    for q in re.finditer(r"exceeded quota: ([^,]+), requested: ([^ ]+)", m):
        for res in sorted(set(r.split("=")[0] for r in q.group(2).split(","))):
            causes.append(("quota " + res, [("quota", res)]))
    for q in re.finditer(r"failed quota: ([^:]+): must specify (.*)", m):
        for res in sorted(set(re.findall(r"((?:requests|limits)\.(?:cpu|memory)|\bcpu|\bmemory) for:", q.group(2)))):
            causes.append(("quota requires " + res, [("quota", res)]))
    if not causes and m:
        causes.append(("other", []))
    return causes


def says(text, words):
    """Whether gpuadmit's text (lower case) uses a cause's word, or every word of a tuple."""
    return all(w.lower() in text for w in words) if isinstance(words, tuple) else words.lower() in text


def asks_gpu(docs):
    """Whether any pod spec or template in the manifest asks for an accelerator (limits or requests)."""
    def walk(x):
        if isinstance(x, dict):
            if isinstance(x.get("containers"), list) and pod_gpus({"spec": x}):
                return True
            return any(walk(v) for v in x.values())
        if isinstance(x, list):
            return any(walk(v) for v in x)
        return False
    return walk(docs)


def tolerates(tols, taint):
    for t in tols or []:
        eff = t.get("effect")
        if eff and eff != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def nodepool_for(pod, nodepools):
    """A Karpenter NodePool that would launch a node for this Pending pod (approximation: the pool's
    template taints are tolerated and the pod's nodeSelector agrees with the pool's labels and
    requirements; required node affinity terms are checked the same way, In/Exists only)."""
    spec = pod.get("spec", {})
    for np in nodepools:
        t = np.get("spec", {}).get("template", {})
        taints = t.get("spec", {}).get("taints") or []
        if not all(tolerates(spec.get("tolerations"), x) for x in taints if x.get("effect") in ("NoSchedule", "NoExecute")):
            continue
        labels = dict((t.get("metadata") or {}).get("labels") or {})
        reqs = {r["key"]: r for r in t.get("spec", {}).get("requirements") or []}
        # A GPU pod needs a pool that offers GPUs: some label, requirement or taint about GPUs/accelerators.
        words = " ".join(list(labels) + [str(v) for v in labels.values()] + list(reqs) +
                         [str(v) for r in reqs.values() for v in r.get("values") or []] + [x.get("key", "") for x in taints]).lower()
        if pod_gpus(pod) and not ("gpu" in words or "accelerator" in words):
            continue
        # Karpenter picks an instance type that holds the pod: a pool whose GPU count per instance is
        # capped below the pod's launches nothing for it.
        count = reqs.get("karpenter.k8s.aws/instance-gpu-count")
        if count and count.get("operator") == "In" and \
                all(int(v) < pod_gpu_count(pod) for v in count.get("values") or [] if v.isdigit()):
            continue

        def ok(key, op, values):
            if key in labels:
                v = labels[key]
                return (op == "In" and v in values) or op == "Exists" or (op == "NotIn" and v not in values) \
                    or (op == "DoesNotExist" and False)
            r = reqs.get(key)
            if r is None:
                return op in ("NotIn", "DoesNotExist")
            if op == "Exists":
                return r["operator"] in ("In", "Exists")
            if op == "In":
                return r["operator"] == "Exists" or (r["operator"] == "In" and bool(set(values) & set(r.get("values") or [])))
            return True
        good = all(ok(k, "In", [v]) for k, v in (spec.get("nodeSelector") or {}).items())
        terms = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
        if good and terms:
            good = any(all(ok(e["key"], e["operator"], e.get("values") or []) for e in term.get("matchExpressions") or [])
                       for term in terms)
        if good:
            return np["metadata"]["name"]
    return None


def pod_gpu_count(pod):
    """The GPUs the pod's node must hold: the most of any container (init containers run alone), the app
    containers' sum."""
    spec = pod.get("spec", {})

    def gpus(c):
        r = c.get("resources") or {}
        amounts = [v for part in ("limits", "requests") for k, v in (r.get(part) or {}).items()
                   if k.endswith("/gpu")]
        return max([int(str(v)) for v in amounts if str(v).isdigit()] or [0])
    apps = sum(gpus(c) for c in spec.get("containers") or [])
    return max([apps] + [gpus(c) for c in spec.get("initContainers") or []])


def pod_gpus(pod):
    spec = pod.get("spec", {})
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        r = c.get("resources") or {}
        for part in ("limits", "requests"):
            for k in (r.get(part) or {}):
                if any(x in k for x in ("gpu", "habana.ai/", "nvidia.com/mig-")):
                    return True
    return False


class Harness:
    def __init__(self, args, api, ga):
        self.args, self.api, self.ga = args, api, ga
        self.nodepools = []
        self.seq = 0

    def ns_name(self, *parts):
        with LOCK:
            self.seq += 1
            n = self.seq
        h = hashlib.sha1("/".join(str(p) for p in parts).encode()).hexdigest()[:6]
        return ("t-%s-%s" % (re.sub(r"[^a-z0-9-]", "-", parts[0].lower())[:20].strip("-"), h) + "-%d" % n)[:63]

    # -- profile set-up
    def load_profile(self, prof):
        api = self.api
        log("profile %s: %d nodes, %d cluster objects, variants %s" %
            (prof.name, len(prof.nodes), len(prof.cluster_objs), ",".join(v or "-" for v in prof.variants)))
        # Old nodes, NodePools and StorageClasses go; the profile's come.
        for path in ("/api/v1/nodes", "/apis/storage.k8s.io/v1/storageclasses", "/apis/karpenter.sh/v1/nodepools"):
            st, body = api.get(path)
            for it in (body.get("items") or []) if st == 200 else []:
                api.call("DELETE", path + "/" + it["metadata"]["name"])
        for n in prof.nodes:
            st, body, _ = api.call("POST", "/api/v1/nodes", n)
            if st not in (200, 201):
                raise HarnessError("profile %s: creating node %s: %s" % (prof.name, n["metadata"].get("name"), status_msg(body)))
            # Status again through the status subresource (the create body's status is kept by the API
            # server's Node strategy today; this makes sure of it, as fake-cluster.sh does).
            if "status" in n:
                body["status"] = n["status"]
                st, b2, _ = api.call("PUT", "/api/v1/nodes/%s/status" % n["metadata"]["name"], body)
                if st != 200:
                    raise HarnessError("profile %s: node %s status: %s" % (prof.name, n["metadata"]["name"], status_msg(b2)))
        for o in prof.cluster_objs:
            path, _ = api.path_for(o)
            if path is None:
                log("profile %s: kind %s/%s not served; skipped" % (prof.name, o.get("apiVersion"), o.get("kind")))
                continue
            st, body, _ = api.call("POST", path, o)
            if st not in (200, 201, 409):
                raise HarnessError("profile %s: creating %s %s: %s" % (prof.name, o.get("kind"), o["metadata"].get("name"), status_msg(body)))
        self.nodepools = [o for o in prof.cluster_objs if o.get("kind") == "NodePool"]

    def wait_view(self, what, secs=30, fatal=True):
        """Until gpuadmit's cluster view holds what the API has (bounded). The API's counts are read again on
        every try: namespaces of earlier runs are still being deleted, and a count taken once would wait for
        quotas that no longer exist (seen 2026-12-04: a view of 42 quotas against a stale 68)."""
        def api_counts():
            want = {}
            for kind, path in (("nodes", "/api/v1/nodes"), ("storageclasses", "/apis/storage.k8s.io/v1/storageclasses"),
                               ("resourcequotas", "/api/v1/resourcequotas"), ("persistentvolumeclaims", "/api/v1/persistentvolumeclaims")):
                st, body = self.api.get(path)
                want[kind] = len(body.get("items") or [])
            return want
        deadline = time.time() + secs
        got, want = {}, {}
        while time.time() < deadline:
            want = api_counts()
            got = self.ga.view_counts()
            if all(got.get(k) == v for k, v in want.items()):
                return True
            time.sleep(0.2)
        if fatal:
            raise HarnessError("%s: gpuadmit's cluster view has %s, the API %s" % (what, got, want))
        return False

    # -- namespaces
    def make_ns(self, name, mode, prof, variant):
        labels = {"truth.gpuadmit.io/harness": "true"}
        if mode == "without":
            labels[OPT_OUT_LABEL] = "true"
        st, body, _ = self.api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                                  "metadata": {"name": name, "labels": labels}})
        if st not in (200, 201):
            raise HarnessError("namespace %s: %s" % (name, status_msg(body)))
        for o in prof.by_ns.get(variant, []):
            o = json.loads(json.dumps(o))
            o["metadata"]["namespace"] = name
            path, _ = self.api.path_for(o, ns=name)
            if path:
                st, body, _ = self.api.call("POST", path, o)
                if st not in (200, 201):
                    raise HarnessError("namespace %s: copying %s %s: %s" % (name, o.get("kind"), o["metadata"].get("name"), status_msg(body)))

    def quotas_ready(self, ns):
        st, body = self.api.get("/api/v1/namespaces/%s/resourcequotas" % ns)
        return all((q.get("status") or {}).get("hard") for q in body.get("items") or [])

    def cleanup_ns(self, ns):
        deadline = time.time() + 30
        self.api.call("DELETE", "/api/v1/namespaces/" + ns)
        while time.time() < deadline:
            st, body = self.api.get("/api/v1/namespaces/%s/pods" % ns)
            pods = body.get("items") or [] if st == 200 else []
            if not pods:
                return True
            for p in pods:
                self.api.call("DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, p["metadata"]["name"]),
                              {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
            time.sleep(0.3)
        log("WARNING: pods left in %s after 30s" % ns)
        return False

    # -- one run: apply, wait, observe
    def prepare(self, prof, jobs, view=True):
        """Namespaces with the variant's objects (quotas), made before the runs start and waited for once:
        while runs create and delete namespaces, counts cannot tell whether gpuadmit's view holds a given
        namespace's quotas yet."""
        made = {}
        for job in jobs:
            variant, man, mode, policy = job
            if prof.by_ns.get(variant):
                ns = self.ns_name(prof.name, variant, man.name, mode, policy or "")
                self.make_ns(ns, mode, prof, variant)
                made[job] = ns
        if made:
            dl = time.time() + 60
            while not all(self.quotas_ready(ns) for ns in made.values()) and time.time() < dl:
                time.sleep(0.3)
            if view:   # gpuadmit with its view off has nothing to wait for
                self.wait_view("profile %s: %d prepared namespaces" % (prof.name, len(made)), secs=60)
        return made

    def run(self, prof, variant, man, mode, policy, ns=None, settle=None):
        prepared = ns is not None
        ns = ns or self.ns_name(prof.name, variant, man.name, mode, policy or "")
        rec = {"namespace": ns, "objects": [], "pods": [], "events": [], "remutate": [], "asks_gpu": man.asks_gpu,
               "view": policy[1] if isinstance(policy, tuple) else True}
        t0 = time.time()
        try:
            if not prepared:
                self.make_ns(ns, mode, prof, variant)
                dl = time.time() + 15
                while not self.quotas_ready(ns) and time.time() < dl:
                    time.sleep(0.2)
                if prof.by_ns.get(variant) and rec["view"]:
                    # A re-run runs alone: the counts settle once this namespace's objects are in the view.
                    rec["view_synced"] = self.wait_view("namespace " + ns, secs=30, fatal=False)
            else:
                rec["view_synced"] = True
            self.apply(man, ns, rec)
            self.observe(ns, rec, mode, settle or self.args.settle)
        finally:
            rec["seconds"] = round(time.time() - t0, 1)
            self.cleanup_ns(ns)
        return rec

    def apply(self, man, ns, rec):
        for d in man.docs:
            kind = d.get("kind", "?")
            name = (d.get("metadata") or {}).get("name") or (d.get("metadata") or {}).get("generateName", "?")
            o = {"kind": kind, "name": name}
            rec["objects"].append(o)
            if kind in SKIP_KINDS or kind == "CustomResourceDefinition":
                o["result"] = "skipped"
                continue
            obj = clean(d, keep_status=False)
            path, namespaced = self.api.path_for(obj, ns=ns)
            if path is None:
                o["result"] = "kind not served"
                continue
            if not namespaced:
                o["result"] = "cluster-scoped (applied once)"
                continue
            obj["metadata"]["namespace"] = ns
            st, body, warnings = self.api.call("POST", path, obj)
            o["warnings"] = warnings
            if st in (200, 201) and kind == "Job" and (body.get("spec") or {}).get("suspend"):
                # A suspended Job (Kueue's): resume it as Kueue would on admission, so its pods are judged.
                pst, pbody, pw = self.api.call("PATCH", path + "/" + body["metadata"]["name"], {"spec": {"suspend": False}},
                                               ctype="application/merge-patch+json")
                o["resumed"] = pst == 200 or status_msg(pbody)
                o["warnings"] = warnings + pw
                if pst == 200:
                    body = pbody
            if st in (200, 201):
                o["result"] = "created"
                o["name"] = body.get("metadata", {}).get("name", name)
                o["annotations"] = {k: v for k, v in (body.get("metadata", {}).get("annotations") or {}).items()
                                    if k.startswith("gpuadmit.io/")}
                o["stored"] = body
            else:
                msg = status_msg(body)
                o["message"] = msg
                if "admission webhook" in msg and "gpuadmit" in msg:
                    o["result"] = "denied"
                    o["rules"] = sorted(set(re.findall(r"^\[([a-z0-9-]+)\]", msg, re.M)))
                else:
                    o["result"] = "rejected"   # by the API server itself (validation, quota, ...)

    def observe(self, ns, rec, mode, settle):
        created = [o for o in rec["objects"] if o.get("result") == "created"]
        makers = [o for o in created if o["kind"] in WORKLOAD_KINDS or o["kind"] == "Pod"]
        expect_pods = any(expected_pods(o["stored"]) for o in makers)
        start = time.time()
        deadline = start + self.args.case_timeout
        last_sig, stable_since = None, time.time()
        pods, events = [], []
        while True:
            st, body = self.api.get("/api/v1/namespaces/%s/pods" % ns)
            pods = body.get("items") or [] if st == 200 else []
            st, body = self.api.get("/api/v1/namespaces/%s/events" % ns)
            events = [e for e in (body.get("items") or []) if e.get("reason") in (
                "FailedCreate", "FailedScheduling", "FailedResourceClaimCreation")] if st == 200 else []
            sig = json.dumps([(p["metadata"]["name"], pod_state(p)[0]) for p in pods] + [len(events)], sort_keys=True)
            now = time.time()
            if sig != last_sig:
                last_sig, stable_since = sig, now
            decided = all(pod_state(p)[0] != "undecided" for p in pods)
            have = bool(pods) or bool(events) or not expect_pods
            if not have and all(o["kind"] == "DaemonSet" for o in makers if expected_pods(o["stored"])):
                have = self.daemonsets_want_none(ns)   # no node matches: the controller says so in status
            if decided and have and now - start >= 1.0 and now - stable_since >= settle:
                break
            if now >= deadline:
                rec["timed_out"] = True
                break
            time.sleep(0.25)
        for p in pods:
            state, msg = pod_state(p)
            owner = (p["metadata"].get("ownerReferences") or [{}])[0].get("kind", "")
            pr = {"name": p["metadata"]["name"], "owner": owner, "state": state, "message": msg,
                  "requests": pod_requests(p),
                  "node": p.get("spec", {}).get("nodeName", ""),
                  "gpu": pod_gpus(p), "qos": (p.get("status") or {}).get("qosClass", ""),
                  "claims": bool(p.get("spec", {}).get("resourceClaims")),
                  "scheduler": p.get("spec", {}).get("schedulerName", "default-scheduler"),
                  "annotations": {k: v for k, v in (p["metadata"].get("annotations") or {}).items() if k.startswith("gpuadmit.io/")}}
            if state == "pending" and self.nodepools:
                np = nodepool_for(p, self.nodepools)
                if np:
                    pr["state"], pr["nodepool"] = "scales-up", np
            rec["pods"].append(pr)
            if mode == "with":
                patch = self.ga.mutate(self.api, p, ns)
                if patch:
                    rec["remutate"].append({"object": "Pod/" + p["metadata"]["name"], "patch": patch})
        for e in events:
            rec["events"].append({"reason": e.get("reason"), "object": "%s/%s" % (e.get("involvedObject", {}).get("kind"),
                                  e.get("involvedObject", {}).get("name")), "message": e.get("message", "")})
        if mode == "with":
            for o in created:
                if o["kind"] in WORKLOAD_KINDS:
                    path, _ = self.api.path_for(o["stored"], ns=ns, name=o["name"])
                    st, cur = self.api.get(path)
                    if st == 200:
                        # What gpuadmit says of it now, for a workload judged before its view caught up.
                        self.ga.last_warnings = []
                        self.ga.mutate(self.api, cur, ns, endpoint="/validate")
                        o["rewarnings"] = self.ga.last_warnings
                        patch = self.ga.mutate(self.api, cur, ns)
                        if patch:
                            rec["remutate"].append({"object": "%s/%s" % (o["kind"], o["name"]), "patch": patch})
        for o in created:
            o.pop("stored", None)


    def daemonsets_want_none(self, ns):
        st, body = self.api.get("/apis/apps/v1/namespaces/%s/daemonsets" % ns)
        items = body.get("items") or [] if st == 200 else []
        return bool(items) and all((d.get("status") or {}).get("observedGeneration", 0) >= d["metadata"].get("generation", 1)
                                   and (d.get("status") or {}).get("desiredNumberScheduled", 0) == 0 for d in items)


class Provisioner(threading.Thread):
    """A dynamic volume provisioner, as every real cluster has (a CSI driver's external-provisioner):
    each Pending claim in a harness namespace whose StorageClass exists gets a PersistentVolume pre-bound
    to it (hostPath; no node affinity), which kube-controller-manager's persistentvolume-binder binds.
    A claim naming a class the profile does not have stays Pending, as it would on the real cluster.
    Claims of generic ephemeral volumes are made by the ephemeral-volume controller and provisioned alike."""

    def __init__(self, api):
        super().__init__(daemon=True)
        self.api, self.done, self.made = api, threading.Event(), set()

    def run(self):
        while not self.done.wait(0.3):
            try:
                self.once()
            except Exception as e:   # noqa: BLE001 -- never let the thread die silently mid-run
                log("provisioner: %s" % e)

    def once(self):
        st, body = self.api.get("/apis/storage.k8s.io/v1/storageclasses")
        classes = {c["metadata"]["name"] for c in body.get("items") or []} if st == 200 else set()
        st, body = self.api.get("/api/v1/persistentvolumeclaims")
        for c in body.get("items") or [] if st == 200 else []:
            meta, spec = c["metadata"], c.get("spec") or {}
            if not meta.get("namespace", "").startswith("t-") or spec.get("volumeName") or meta["uid"] in self.made:
                continue
            if (c.get("status") or {}).get("phase") != "Pending" or spec.get("storageClassName") not in classes:
                continue
            size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
            pv = {"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": "truth-pv-" + meta["uid"], "labels": {"truth.gpuadmit.io/harness": "true"}},
                  "spec": {"capacity": {"storage": size}, "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                           "persistentVolumeReclaimPolicy": "Retain", "storageClassName": spec["storageClassName"],
                           "volumeMode": spec.get("volumeMode") or "Filesystem", "hostPath": {"path": "/tmp/truth-pv"},
                           "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": meta["namespace"],
                                        "name": meta["name"], "uid": meta["uid"]}}}
            st, b, _ = self.api.call("POST", "/api/v1/persistentvolumes", pv)
            if st in (200, 201, 409):
                self.made.add(meta["uid"])
            else:
                log("provisioner: PV for %s/%s: %s" % (meta["namespace"], meta["name"], status_msg(b)))
        # Released volumes (their claim's namespace is gone) go.
        st, body = self.api.get("/api/v1/persistentvolumes", labelSelector="truth.gpuadmit.io/harness=true")
        for v in body.get("items") or [] if st == 200 else []:
            if (v.get("status") or {}).get("phase") in ("Released", "Failed") and not v["metadata"].get("deletionTimestamp"):
                self.api.call("DELETE", "/api/v1/persistentvolumes/" + v["metadata"]["name"])


def expected_pods(obj):
    k, spec = obj.get("kind"), obj.get("spec") or {}
    if k == "Pod":
        return True
    if k in ("Deployment", "ReplicaSet", "StatefulSet"):
        return spec.get("replicas", 1) != 0
    if k == "Job":
        return not spec.get("suspend") and spec.get("parallelism", 1) != 0
    if k == "DaemonSet":
        return True
    return False   # CronJob (its schedule), CRs without an operator


def pod_state(p):
    spec, status = p.get("spec", {}), p.get("status", {})
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled":
            if c.get("status") == "True":
                return "scheduled", ""
            if c.get("reason") in ("Unschedulable", "SchedulingGated"):
                return "pending", c.get("message") or c.get("reason")
    if spec.get("nodeName"):
        return "scheduled", "(spec.nodeName set)"
    if spec.get("schedulerName", "default-scheduler") != "default-scheduler":
        return "pending", "schedulerName %s: no such scheduler runs here" % spec.get("schedulerName")
    if spec.get("schedulingGates"):
        return "pending", "scheduling gates"
    return "undecided", ""


def status_msg(body):
    if isinstance(body, dict):
        return body.get("message") or json.dumps(body)[:500]
    return str(body)[:500]


# --- outcomes and invariants --------------------------------------------------------------------
def outcome(rec):
    """(kind, detail): rejected | denied | create-denied | scheduled | pending | scales-up | no-pods."""
    objs = rec["objects"]
    denied = [o for o in objs if o.get("result") == "denied"]
    if denied:
        return "denied", "; ".join("%s/%s [%s]" % (o["kind"], o["name"], ",".join(o.get("rules") or [])) for o in denied)
    rejected = [o for o in objs if o.get("result") == "rejected"]
    if rejected:
        return "rejected", "; ".join("%s/%s: %s" % (o["kind"], o["name"], o["message"][:200]) for o in rejected)
    fc = [e for e in rec["events"] if e["reason"] == "FailedCreate"]
    fc_ga = [e for e in fc if "gpuadmit" in e["message"]]
    if fc_ga:
        rules = sorted(set(r for e in fc_ga for r in re.findall(r"\[([a-z0-9-]+)\]", e["message"])))
        return "create-denied", "%s [%s]" % (fc_ga[0]["object"], ",".join(rules))
    pend = [p for p in rec["pods"] if p["state"] in ("pending", "undecided")]
    if pend:
        # A pod whose claim the controller cannot make has no condition, only the controller's event.
        claims = [e["message"] for e in rec["events"] if e["reason"] == "FailedResourceClaimCreation"]
        return "pending", pend[0]["message"] or "; ".join(claims[:1]) or pend[0]["state"]
    if fc:
        return "create-failed", fc[0]["message"][:200]
    if any(p["state"] == "scales-up" for p in rec["pods"]):
        return "scales-up", ",".join(sorted(set(p.get("nodepool", "") for p in rec["pods"] if p.get("nodepool"))))
    if rec["pods"]:
        return "scheduled", "%d pod(s)" % len(rec["pods"])
    return "no-pods", ""


def denial_rules(rec):
    rules = set()
    for o in rec["objects"]:
        rules.update(o.get("rules") or [])
    for e in rec["events"]:
        if e["reason"] == "FailedCreate" and "gpuadmit" in e["message"]:
            rules.update(re.findall(r"\[([a-z0-9-]+)\]", e["message"]))
    return rules


def gpuadmit_text(rec):
    parts = []
    lagged = view_lagged(rec)
    for o in rec["objects"]:
        parts.extend(o.get("warnings") or [])
        if "%s/%s" % (o["kind"], o["name"]) in lagged:
            # Judged at CREATE before the view had the DRA objects the same apply made: what a second
            # /mutate says, with them in view, is what the user sees on the next apply.
            parts.extend(o.get("rewarnings") or [])
        if o.get("result") == "denied":
            parts.append(o.get("message", ""))
    for e in rec["events"]:
        if "gpuadmit" in e["message"]:
            parts.append(e["message"])
    return "\n".join(parts)


# With its view off gpuadmit sees no nodes, quotas or claims, so it cannot name what the scheduler names;
# what it must still do is no harm (I1-I3).
VIEW_OFF = ["view off: I4 needs the cluster view"]


def judge(without, with_):
    """The invariant each case settles: (class, invariant note)."""
    wo, wo_d = outcome(without)
    wi, wi_d = outcome(with_)
    good = ("scheduled", "scales-up")
    notes = []
    lagged = view_lagged(with_)
    breaches = [r["object"] for r in with_.get("remutate", []) if r["object"] not in lagged]
    if breaches:
        notes.append("I3 breach: second /mutate patches " + ", ".join(breaches))
    if len(breaches) < len(with_.get("remutate", [])):
        notes.append("view lag: second /mutate patches %s, judged at CREATE without the DRA objects created a "
                     "moment before it (its warnings say so); its pods were judged with them" % ", ".join(
                         r["object"] for r in with_["remutate"] if r["object"] in lagged))
    if wo == "denied" or wo == "create-denied":
        notes.append("harness: gpuadmit answered in the opt-out namespace")
    missed = fix_goals_missed(with_)
    if missed:
        notes.insert(0, "I5 breach: " + missed)
    rules = denial_rules(with_)
    tried = [o for o in without["objects"] + with_["objects"] if o.get("result") not in ("skipped", "kind not served", "cluster-scoped (applied once)")]
    if not tried:
        return "not-applied", notes + ["nothing to apply: kinds not served here (%s)" % ",".join(
            sorted(set(o["kind"] for o in with_["objects"] if o.get("result") == "kind not served")))]
    others = other_schedulers(without) | other_schedulers(with_)
    if others and wo not in good and wi not in ("denied", "create-denied", "rejected"):
        # Pods for a scheduler that does not run here (KAI's, Volcano's) stay Pending either way: the
        # harness cannot judge them, as it cannot judge kinds without their operators.
        return "not-judged", notes + ["pods for %s, which does not run in the harness" % ", ".join(sorted(others))]
    if wo in good:
        if wi in good or (wi == wo == "no-pods"):
            return ("harmful" if notes and notes[0].startswith(("I3", "I5")) else "ok"), notes + ["I1 holds"]
        if wi in ("denied", "create-denied"):
            sched = rules & SCHEDULING_RULES
            if sched or not rules:
                return "harmful", notes + ["I2 breach: denied by %s, yet it schedules without gpuadmit" % ",".join(sorted(rules) or ["?"])]
            return "honest-denial", notes + ["I2 (policy choice): %s" % ",".join(sorted(rules))]
        if wi == "rejected":
            return "harmful", notes + ["I3 breach: the API server rejects the patched object: " + wi_d]
        return "harmful", notes + ["I1 breach: schedules without gpuadmit, %s with it: %s" % (wi, wi_d)]
    if all(c == "volume" for c, _ in sched_causes(wo_d) + sched_causes(wi_d)) and "pending" in (wo, wi) and \
            sched_causes(wo_d + wi_d):
        return "not-judged", notes + ["Pending on volumes only, either way (a claim whose StorageClass the profile lacks)"]
    if not with_.get("asks_gpu", True) and wi == wo and wi not in ("denied", "create-denied"):
        # gpuadmit judges GPU pods: a CPU-only workload that fails the same way with and without it
        # (a device plugin DaemonSet refused by a namespace's quota) is not its to explain. I1-I3 still hold.
        return "ok", notes + ["not a GPU workload: %s either way (I4 covers GPU pods)" % wo]
    if wo in ("rejected", "create-failed"):   # the API server refuses it (or its pods: quota) by itself
        if wi in ("denied", "create-denied"):
            return "honest-denial", notes + ["I2 (the API server rejects it too)"]
        if wi == "rejected":
            return "ok", notes + ["rejected either way"]
        if wi in good:
            return "fixed", notes + ["fixed: the API server rejects it without gpuadmit"]
        wo, wo_d = "pending", wo_d   # admitted thanks to gpuadmit, then Pending: judged as I4 below
    if wo in ("pending",):
        if wi in good:
            return "fixed", notes + ["I4: fixed (%s without gpuadmit)" % short(wo_d)]
        # The scheduler's cause without gpuadmit, and with it (a fix may leave another cause, e.g. the taint
        # tolerated but no GPU node): an explanation may name either.
        causes = sched_causes(wo_d) + (sched_causes(wi_d) if wi in ("pending", "create-failed") else [])
        text = gpuadmit_text(with_).lower()
        named = [c for c, words in causes if any(says(text, w) for w in words)]
        missing = re.findall(r"no node offers ([A-Za-z0-9./_*-]*[A-Za-z0-9])", text)
        if wi in ("denied", "create-denied"):
            if named:
                return "honest-denial", notes + ["I2 (Pending without gpuadmit), I4: names %s" % ",".join(named)]
            if missing:
                return "honest-denial", notes + ["I2 (Pending without gpuadmit), I4: names the missing resource (no node "
                                                 "offers %s), not the scheduler's %s" % (
                                                     ",".join(sorted(set(missing))), ",".join(c for c, _ in causes))]
            if not with_.get("view", True):
                return "not-judged", notes + VIEW_OFF
            return "unexplained", notes + ["I4 breach: denied (%s) but not naming the scheduler's cause %s" % (
                ",".join(sorted(rules)), ",".join(c for c, _ in causes))]
        if named:
            return "explained", notes + ["I4: warned, names %s" % ",".join(named)]
        if missing:
            return "explained", notes + ["I4: names the missing resource (no node offers %s), not the scheduler's %s" % (
                ",".join(sorted(set(missing))), ",".join(c for c, _ in causes))]
        absent = re.findall(r"no PriorityClass with name (\S+) was found|serviceaccount \"([^\"]+)\" not found", wo_d + " " + wi_d)
        if absent and wi == "create-failed":
            # The API server refuses the pods, with and without gpuadmit, for an object the manifest's own
            # tutorial creates elsewhere and the profile lacks; gpuadmit does not read PriorityClasses or
            # ServiceAccounts, so it cannot judge this (a gap, listed in tests/truth/README.md).
            return "not-judged", notes + ["refused either way for a missing %s: an object the profile lacks, "
                                          "outside what gpuadmit reads" % ", ".join(sorted(set(a or b for a, b in absent)))]
        if not with_.get("view", True):
            return "not-judged", notes + VIEW_OFF
        return "unexplained", notes + ["I4 breach: Pending either way (%s), no warning names it" % short(wo_d)]
    # no pods without gpuadmit (a CronJob before its schedule, a kind without its operator)
    if wi in ("denied", "create-denied"):
        sched = rules & SCHEDULING_RULES
        return ("honest-denial" if not sched else "not-judged"), notes + [
            "denied by %s; makes no pods without gpuadmit, so the scheduler cannot judge it" % ",".join(sorted(rules))]
    return "ok", notes + ["%s / %s" % (wo, wi)]


def view_lagged(rec):
    """The workloads admitted while gpuadmit's view lacked a DRA object the same apply had just created (the
    template a file defines before its Deployment): dra-claims warned that it is not in the namespace. A second
    /mutate, with the object in view, completes their fixes; that is the view catching up, not a patch that
    does not hold (I3), and is counted apart. Pods are never excused: a pod is created after the controller
    saw the template, and a patch of one is an I3 breach."""
    return {"%s/%s" % (o["kind"], o["name"]) for o in rec["objects"] if o["kind"] != "Pod" and any(
        w.startswith("dra-claims:") and ("is not in namespace" in w or "does not exist" in w)
        for w in o.get("warnings") or [])}


# GPU shares that no node's allocatable holds and only their own scheduler places, whatever schedulerName
# the manifest names: HAMi's webhook sends such pods to hami-scheduler, Volcano's to volcano. Neither runs
# here, so a pod asking for one waits Pending for want of them (gpuadmit's gpu_share.cpp lists the same).
SHARE_SCHEDULERS = {
    "nvidia.com/gpumem": "hami-scheduler", "nvidia.com/gpumem-percentage": "hami-scheduler",
    "nvidia.com/gpucores": "hami-scheduler", "metax-tech.com/vcore": "hami-scheduler",
    "metax-tech.com/vmemory": "hami-scheduler", "volcano.sh/vgpu-memory": "volcano",
    "volcano.sh/vgpu-cores": "volcano", "volcano.sh/gpu-memory": "volcano",
}


def other_schedulers(rec):
    """The schedulers other than kube-scheduler that the case's pending pods wait for: the one they name,
    or the one that places the GPU share they ask for."""
    out = set()
    for p in rec.get("pods", []):
        if p.get("state") not in ("pending", "undecided"):
            continue
        if p.get("scheduler") not in (None, "", "default-scheduler"):
            out.add(p.get("scheduler"))
        out |= {"%s (for %s)" % (SHARE_SCHEDULERS[r], r) for r in p.get("requests") or {} if r in SHARE_SCHEDULERS}
    return out


def fix_goals_missed(with_):
    """I5: every fix reaches its stated goal on the object the API server stored. A guaranteed-qos fix
    (gpuadmit.io/mutated-by on the object or its pods) leaves every GPU pod of the case Guaranteed, as the API
    server computes status.qosClass: a fix that leaves the pod Burstable is a change with only risk."""
    trails = [o.get("annotations", {}).get("gpuadmit.io/mutated-by", "") for o in with_["objects"]] + \
             [p.get("annotations", {}).get("gpuadmit.io/mutated-by", "") for p in with_.get("pods", [])]
    if not any("guaranteed-qos" in t.split(",") for t in trails):
        return ""
    burstable = [p["name"] for p in with_.get("pods", []) if p.get("gpu") and p.get("qos") not in ("", "Guaranteed")]
    return ("guaranteed-qos fixed the object, yet %s %s not Guaranteed" % (", ".join(burstable[:3]),
            "is" if len(burstable) == 1 else "are")) if burstable else ""


def short(s, n=90):
    s = (s or "").replace("\n", " ")
    return s if len(s) <= n else s[:n - 3] + "..."


# --- driver ---------------------------------------------------------------------------------------
def summarize(cases, secs):
    counts = {k: sum(1 for c in cases if c["class"] == k) for k in ("harmful", "honest-denial", "fixed", "unexplained", "explained", "ok", "not-applied", "not-judged")}
    i3 = sum(1 for c in cases if c["with"]["run"].get("remutate"))
    inv = {k: sum(1 for c in cases if any(n.startswith(k + " breach") for n in c["notes"])) for k in ("I1", "I2", "I3", "I4", "I5")}
    # The failing cases again, last, with the outcomes and notes: a CI log often keeps only its tail.
    for c in [c for c in cases if c["class"] in ("harmful", "unexplained")]:
        print("%s: %s on %s%s under %s%s" % (c["class"].upper(), c["manifest"], c["profile"],
                                            "/" + c["variant"] if c["variant"] else "", c["policy"],
                                            " (timed out)" if c["with"]["run"].get("timed_out") or c["without"]["run"].get("timed_out") else ""))
        print("  without: %s: %s" % (c["without"]["outcome"][0], short(c["without"]["outcome"][1], 160)))
        print("  with:    %s: %s" % (c["with"]["outcome"][0], short(c["with"]["outcome"][1], 160)))
        print("  notes:   %s" % short("; ".join(c["notes"]), 200))
    lag = sum(1 for c in cases if any(n.startswith("view lag") for n in c["notes"]))
    print("invariants: I1 %d breaches, I2 %d, I3 %d (second /mutate patches in %d cases, %d of them after view lag), I4 %d, I5 %d; %d explained, %d ok, %d not applied (kind not served), %d not judged; %.0fs" % (
        inv["I1"], inv["I2"], inv["I3"], i3, lag, inv["I4"], inv["I5"], counts["explained"], counts["ok"], counts["not-applied"], counts["not-judged"], secs))
    print("truth: %d cases, %d harmful, %d honest denials, %d fixed, %d unexplained" % (
        len(cases), counts["harmful"], counts["honest-denial"], counts["fixed"], counts["unexplained"]))
    return 1 if counts["harmful"] or counts["unexplained"] or inv["I3"] or inv["I5"] else 0


def rejudge(path, out):
    """Judge a results.json again (after a change to the classification), without running anything."""
    with open(path) as f:
        data = json.load(f)
    for c in data["cases"]:
        c["with"]["run"].setdefault("view", "(view off)" not in c["policy"])
        c["class"], c["notes"] = judge(c["without"]["run"], c["with"]["run"])
    write_outputs(out, data["cases"], data.get("seconds", 0))
    return summarize(data["cases"], data.get("seconds", 0))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--rejudge":
        return rejudge(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", required=True)
    ap.add_argument("--manifests", required=True)
    ap.add_argument("--policy", action="append", default=[])
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpuadmit", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--case-timeout", type=float, default=20.0)
    ap.add_argument("--settle", type=float, default=1.0)
    ap.add_argument("--only-profile", action="append", default=[])
    ap.add_argument("--only-manifest", action="append", default=[])
    ap.add_argument("--sample", type=int, default=0)
    args = ap.parse_args()

    env = os.environ
    state = env["GPUADMIT_E2E_STATE"]
    api = Api(env["GPUADMIT_E2E_API_URL"], env["GPUADMIT_E2E_CA"], os.path.join(state, "pki", "admin.crt"),
              os.path.join(state, "pki", "admin.key"))
    api.discover()

    profiles = [Profile(p) for p in yaml_files(args.clusters)]
    profiles = [p for p in profiles if not args.only_profile or p.name in args.only_profile]
    manifests = []
    for p in yaml_files(args.manifests):
        try:
            m = Manifest(p)
        except yaml.YAMLError as e:
            log("WARNING: %s is not YAML (%s); skipped" % (p, str(e).splitlines()[0]))
            continue
        if not args.only_manifest or m.name in args.only_manifest:
            manifests.append(m)
    if not profiles or not manifests:
        raise HarnessError("no profiles (%s) or no manifests (%s)" % (args.clusters, args.manifests))
    # A sample is drawn over columns (a profile, or one of its namespaces' variants): each is a run of its own.
    columns = {(pi, v): ci for ci, (pi, v) in enumerate((pi, v) for pi, p in enumerate(profiles) for v in p.variants)}
    on_column = sample_columns(len(manifests), len(columns), args.sample)
    # A policy is a file or `default` (the embedded one); `@noview` after it runs gpuadmit with its cluster
    # view off (what a user without RBAC for the view gets: no sizes from nodes, the policy's tolerations).
    policies = []
    for p in args.policy or ["default"]:
        base, _, flag = p.partition("@")
        policies.append((None if base == "default" else os.path.abspath(base), flag != "noview"))
    log("%d profiles, %d manifests, %d policies, %d parallel" % (len(profiles), len(manifests), len(policies), args.parallel))

    # CRDs of the corpus, cluster-wide, before anything else (their kinds must be served).
    crds = [c for m in manifests for c in m.crds]
    for c in crds:
        api.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", clean(c, keep_status=False))
    if crds:
        deadline = time.time() + 60
        while time.time() < deadline:
            st, body = api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            est = {i["metadata"]["name"] for i in body.get("items", []) for c in i.get("status", {}).get("conditions", [])
                   if c["type"] == "Established" and c["status"] == "True"}
            if all(c["metadata"]["name"] in est for c in crds):
                break
            time.sleep(0.3)
        api.discover()
    # Cluster-scoped objects of the corpus (ClusterRoles, PriorityClasses, RuntimeClasses...), once.
    for m in manifests:
        for d in m.docs:
            if d.get("kind") in SKIP_KINDS or d.get("kind") == "CustomResourceDefinition":
                continue
            path, namespaced = api.path_for(d)
            if path is not None and not namespaced:
                api.call("POST", path, clean(d, keep_status=False))

    prov = Provisioner(api)
    prov.start()
    ga = Gpuadmit(args.gpuadmit, args.workdir, int(env["TRUTH_WEBHOOK_PORT"]), env["KUBECONFIG"])
    h = Harness(args, api, ga)
    cases = []
    t_start = time.time()
    try:
        for prof_i, prof in enumerate(profiles):
            t_prof = time.time()
            h.load_profile(prof)
            without = {}
            for pi, (policy, view) in enumerate(policies):
                ga.start(policy, view)
                if view:
                    h.wait_view("profile %s" % prof.name)
                probe(api, ga)
                jobs = []
                for variant in prof.variants:
                    for mi, m in enumerate(manifests):
                        if columns[(prof_i, variant)] not in on_column[mi]:
                            continue
                        if pi == 0:
                            jobs.append((variant, m, "without", None))
                        jobs.append((variant, m, "with", (policy, view)))
                results = run_jobs(h, prof, jobs, args.parallel, view)
                for (variant, m, mode, pol), rec in results.items():
                    if mode == "without":
                        without[(variant, m.name)] = rec
                for (variant, m, mode, pol), rec in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1].name, kv[0][2])):
                    if mode != "with":
                        continue
                    wo = without[(variant, m.name)]
                    cls, notes = judge(wo, rec)
                    case = {"profile": prof.name, "variant": variant, "manifest": m.name,
                            "policy": (os.path.basename(pol[0]) if pol[0] else "default") + ("" if pol[1] else " (view off)"),
                            "without": {"outcome": outcome(wo), "run": wo}, "with": {"outcome": outcome(rec), "run": rec},
                            "class": cls, "notes": notes}
                    cases.append(case)
                    print("%-13s %-10s %-28s %-44s %s -> %s" % (cls.upper(), case["policy"][:10], (prof.name + ("/" + variant if variant else ""))[:28],
                          m.name[:44], outcome(wo)[0], outcome(rec)[0]), flush=True)
            log("profile %s took %.0fs" % (prof.name, time.time() - t_prof))
    except HarnessError:
        write_outputs(args.out, cases, time.time() - t_start)   # what ran so far, for the post-mortem
        raise
    finally:
        prov.done.set()
        ga.stop()
    write_outputs(args.out, cases, time.time() - t_start)
    return summarize(cases, time.time() - t_start)


def sample_columns(n_manifests, n_columns, k):
    """The columns (indices) each manifest runs on: all of them, or with k > 0 only k, chosen so that every
    manifest runs k times and the columns share the work evenly (manifest i: columns i*k .. i*k+k-1, modulo
    their number). The same corpus gives the same sample: a CI failure reproduces."""
    if k <= 0 or k >= n_columns:
        return [set(range(n_columns)) for _ in range(n_manifests)]
    return [{(i * k + j) % n_columns for j in range(k)} for i in range(n_manifests)]


def probe(api, ga):
    """Until the API server calls gpuadmit (its log shows a review from the probe namespace)."""
    ns = "truth-probe"
    api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
           "spec": {"containers": [{"name": "c", "image": "registry.invalid/probe:1"}]}}
    deadline = time.time() + 30
    while time.time() < deadline:
        api.call("POST", "/api/v1/namespaces/%s/pods" % ns, pod, params={"dryRun": "All"})
        try:
            with open(ga.log_path, errors="replace") as f:
                if '"namespace":"%s"' % ns in f.read():
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise HarnessError("the API server does not call gpuadmit (no review from namespace %s within 30s)" % ns)


SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
          "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def qty(v):
    m = re.fullmatch(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)", str(v).strip())
    return float(m.group(1)) * SUFFIX.get(m.group(2), 1) if m and m.group(2) in SUFFIX else 0.0


def pod_requests(p):
    """What the scheduler counts for one pod: per resource, the larger of the app containers' sum and
    any one init container (requests, else limits)."""
    spec = p.get("spec", {})
    def one(c):
        r = c.get("resources") or {}
        out = {k: qty(v) for k, v in (r.get("limits") or {}).items()}
        out.update({k: qty(v) for k, v in (r.get("requests") or {}).items()})
        return out
    total = {}
    for c in spec.get("containers") or []:
        for k, v in one(c).items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers") or []:
        for k, v in one(c).items():
            total[k] = max(total.get(k, 0), v)
    return total


def contended(pod, nodes, timed_out=False):
    """Whether a Pending reason can come from other runs' pods (capacity, ports, inter-pod rules).
    Taints, selectors, affinity to nodes and missing nodes do not depend on other pods, nor does an
    "Insufficient R" when the pod asks for more R than any node of the profile has at all. Nor does a pod
    with claims that the scheduler left untried for the whole case timeout: it waits for a ResourceClaim
    that does not exist (the scheduler holds such a pod back without a condition), which other runs do
    not change; running it again alone gave the same result and cost a second timeout."""
    m = pod.get("message") or ""
    if timed_out and pod.get("state") == "undecided" and pod.get("claims"):
        return False
    if not m or any(w in m for w in ("Too many pods", "anti-affinity", "topology spread", "free ports",
                                     "pod affinity", "undecided")):
        return True
    for res in re.findall(r"Insufficient ([A-Za-z0-9./_-]*[A-Za-z0-9])", m):
        most = max([qty(((n.get("status") or {}).get("allocatable") or {}).get(res, 0)) for n in nodes] or [0])
        if (pod.get("requests") or {}).get(res, float("inf")) <= most:
            return True
    return False


RERUN_SETTLE = 3.0   # seconds a re-run's pods must keep their state (see run_jobs)


def run_jobs(h, prof, jobs, parallel, view=True):
    """Run in parallel; then once more, alone, every run with a Pending pod whose reason other runs' pods
    could cause (contended())."""
    results = {}
    prepared = h.prepare(prof, jobs, view)
    with cf.ThreadPoolExecutor(max_workers=max(1, parallel)) as ex:
        futs = {ex.submit(h.run, prof, v, m, mode, pol, prepared.get((v, m, mode, pol))): (v, m, mode, pol)
                for v, m, mode, pol in jobs}
        for f in cf.as_completed(futs):
            results[futs[f]] = f.result()
    if parallel > 1:
        rerun = [k for k, rec in results.items() if any(p["state"] in ("pending", "undecided") and contended(p, prof.nodes, rec.get("timed_out"))
                                                          for p in rec["pods"])]
        if rerun:
            log("profile %s: %d runs with a Pending pod again, one at a time" % (prof.name, len(rerun)))
        for k in rerun:
            # The previous run's pods were just deleted: where the scheduler's cache still held them, it
            # finds no room, then retries once it sees the deletions, after its first backoff (1s). Alone, a
            # run waits long enough to see that retry; a wait of 1s did not on a slower CI machine.
            rec = h.run(prof, *k, settle=RERUN_SETTLE)
            rec["rerun_alone"] = True
            results[k] = rec
    return results


def write_outputs(out, cases, secs):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"seconds": round(secs), "cases": cases}, f, indent=1, sort_keys=True)
    lines = ["# Truth matrix", "",
             "Each cell: outcome without gpuadmit -> with gpuadmit, and the class the case settles "
             "(ok, fixed, honest-denial, explained, **harmful**, **unexplained**). Generated by tests/truth/run.sh.", ""]
    for pol in sorted(set(c["policy"] for c in cases)):
        sub = [c for c in cases if c["policy"] == pol]
        cols = sorted(set((c["profile"], c["variant"]) for c in sub))
        rows = sorted(set(c["manifest"] for c in sub))
        lines += ["## Policy: %s" % pol, "",
                  "| manifest | " + " | ".join(p + ("/" + v if v else "") for p, v in cols) + " |",
                  "| --- |" + " --- |" * len(cols)]
        idx = {(c["manifest"], c["profile"], c["variant"]): c for c in sub}
        for r in rows:
            cells = []
            for p, v in cols:
                c = idx.get((r, p, v))
                if not c:
                    cells.append("")
                    continue
                k = c["class"]
                k = "**%s**" % k if k in ("harmful", "unexplained") else k
                cells.append("%s -> %s: %s" % (c["without"]["outcome"][0], c["with"]["outcome"][0], k))
            lines.append("| %s | %s |" % (r, " | ".join(cells)))
        lines.append("")
        bad = [c for c in sub if c["class"] in ("harmful", "unexplained")]
        if bad:
            lines += ["### Breaches", ""]
            for c in bad:
                lines.append("- `%s` on `%s%s`: %s. Without: %s. With: %s." % (
                    c["manifest"], c["profile"], "/" + c["variant"] if c["variant"] else "", "; ".join(c["notes"]),
                    short(" ".join(c["without"]["outcome"]), 200), short(" ".join(c["with"]["outcome"]), 300)))
            lines.append("")
    with open(os.path.join(out, "matrix.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sys.exit(main())
    except HarnessError as e:
        log("ERROR: %s" % e)
        sys.exit(2)
