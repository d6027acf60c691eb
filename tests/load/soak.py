#!/usr/bin/env python3
"""The soak (make soak; issue #24): gpuadmit serve for SECONDS (default 1800) at a steady rate of reviews,
with its cluster view churning and its policy file changing, on a real control plane (tests/e2e/cluster.sh,
own state dir). RSS, open file descriptors and threads are sampled every 10 s; their least-squares slopes
after the warm-up are the result. Not part of make test (30 minutes).

  tests/load/soak.py --bin build/release/src/cli/gpuadmit [--seconds 1800] [--rate 400]

What runs at once:
  - load: wrk, 8 keep-alive TLS connections paced to --rate reviews/s in all, /validate and /mutate in
    turn, a GPU pod that node-fit judges against the view (tests/load/mutate-review.json);
  - churn, every second, through the API server: a node added, the node added 5 s before deleted, one of
    the base nodes tainted or untainted, one relabelled (4 writes/s; 40 base nodes in 3 pools);
  - policy: every 60 s the --policy file is replaced (rename, as a ConfigMap update does), in turn by
    deploy/policies/strict.yaml, the embedded default, and a broken file that must be refused.
Checks at the end: no non-2xx answer and no socket error from wrk; every churn write answered; the view
holds the API server's nodes; every reload counted (successes and refusals); threads flat, fds within 2,
and the RSS slope over the second half of the run under --rss-slope-kb-per-hour (default 1024). The slope
after the warm-up is printed too: tcmalloc's per-thread caches fill for the first quarter of an hour or so,
which that slope includes. Exit 1 on a failed check, 2 when it could
not run. Progress on stderr; the samples and slopes on stdout.
"""
import argparse
import http.client
import json
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLUSTER_SH = os.path.join(ROOT, "tests", "e2e", "cluster.sh")
STATE = "/tmp/gpuadmit-soak"
SAMPLE_SECONDS = 10
RELOAD_SECONDS = 60
BASE_NODES = 40
CHURN_KEEP = 5


def log(message):
    print(time.strftime("%H:%M:%S", time.gmtime()) + " soak: " + message, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node(name, pool, tick=0):
    pools = {
        "a100": ({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920"},
                 [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}], "8", "96", "1000Gi"),
        "t4": ({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.memory": "15360"},
               [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}], "1", "16", "64Gi"),
        "cpu": ({}, [], "0", "32", "128Gi"),
    }
    labels, taints, gpus, cpu, memory = pools[pool]
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus != "0":
        allocatable["nvidia.com/gpu"] = gpus
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {**labels, "kubernetes.io/hostname": name,
                                                   "soak/pool": pool, "soak/tick": str(tick)}},
            "spec": {"taints": taints},
            "status": {"allocatable": allocatable, "capacity": allocatable,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


class Api:
    """The API server over one keep-alive TLS connection with the admin client certificate."""

    def __init__(self, port, pki):
        self.port = port
        self.context = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.context.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.connection = None

    def call(self, method, path, body=None, content_type="application/json"):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context,
                                                              timeout=30)
            try:
                headers = {"Content-Type": content_type} if body is not None else {}
                self.connection.request(method, path, None if body is None else json.dumps(body), headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


class Churn(threading.Thread):
    """Four writes a second; counts what the API server refused (it should refuse none)."""

    def __init__(self, api, stop):
        super().__init__(daemon=True)
        self.api, self.stop, self.writes, self.errors, self.tick = api, stop, 0, [], 0

    def write(self, method, path, body=None, content_type="application/json", ok=(200, 201)):
        status, text = self.api.call(method, path, body, content_type)
        self.writes += 1
        if status not in ok:
            self.errors.append(f"{method} {path}: HTTP {status}: {text[:200]!r}")

    def run(self):
        next_at = time.monotonic()
        while not self.stop.is_set():
            self.tick += 1
            i = self.tick
            pool = ("a100", "t4", "cpu")[i % 3]
            self.write("POST", "/api/v1/nodes", node(f"soak-churn-{i}", pool, i))
            if i > CHURN_KEEP:
                self.write("DELETE", f"/api/v1/nodes/soak-churn-{i - CHURN_KEEP}")
            base = f"soak-base-{i % BASE_NODES}"
            taints = [{"key": "soak/maintenance", "value": "true", "effect": "NoSchedule"}] if i % 2 else []
            base_pool = ("a100", "t4", "cpu")[(i % BASE_NODES) % 3]
            self.write("PATCH", f"/api/v1/nodes/{base}", {"spec": {"taints": node(base, base_pool)["spec"]["taints"]
                                                                    + taints}},
                       "application/merge-patch+json")
            self.write("PATCH", f"/api/v1/nodes/soak-base-{(i * 7) % BASE_NODES}",
                       {"metadata": {"labels": {"soak/tick": str(i)}}}, "application/merge-patch+json")
            next_at += 1.0
            self.stop.wait(max(0.0, next_at - time.monotonic()))


def process_sample(pid):
    with open(f"/proc/{pid}/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    return (int(status["VmRSS"].split()[0]), len(os.listdir(f"/proc/{pid}/fd")), int(status["Threads"]))


def slope_per_hour(points):
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    return 0.0 if var == 0 else 3600 * sum((t - mean_t) * (v - mean_v) for t, v in points) / var


def metrics(port, ca):
    context = ssl.create_default_context(cafile=ca)
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()
    return text


def metric(text, name, labels=""):
    match = re.search(r"^" + re.escape(name) + (r"\{" + re.escape(labels) + r"\}" if labels else "") +
                      r" ([0-9.e+]+)$", text, re.M)
    return None if match is None else float(match.group(1))


def start_cluster():
    env = dict(os.environ, GPUADMIT_E2E_STATE=STATE)
    env.pop("GPUADMIT_BIN", None)
    subprocess.run([CLUSTER_SH, "down"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    up = subprocess.run([CLUSTER_SH, "up"], env=env, stdout=subprocess.PIPE, text=True)
    if up.returncode != 0:
        raise SystemExit(f"soak: ERROR: cluster.sh up failed (exit {up.returncode})")
    exports = {}
    for line in up.stdout.splitlines():
        if line.startswith("export "):
            for token in shlex.split(line[len("export "):]):
                key, _, value = token.partition("=")
                exports[key] = value
    return env, exports


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--seconds", type=int, default=1800)
    parser.add_argument("--rate", type=int, default=400, help="reviews per second in all (default 400)")
    parser.add_argument("--warmup", type=int, default=120, help="seconds left out of the slopes (default 120)")
    parser.add_argument("--rss-slope-kb-per-hour", type=float, default=1024)
    args = parser.parse_args()
    if args.seconds < args.warmup + 6 * SAMPLE_SECONDS:
        raise SystemExit(f"soak: ERROR: --seconds must be at least {args.warmup + 6 * SAMPLE_SECONDS}")
    if shutil.which("wrk") is None:
        raise SystemExit("soak: ERROR: wrk not found (scripts/deps.sh installs it)")
    work = tempfile.mkdtemp(prefix="gpuadmit-soak.")
    env, exports = start_cluster()
    serve = wrk = None
    stop = threading.Event()
    failures = []
    try:
        api = Api(int(exports["GPUADMIT_E2E_API_PORT"]), os.path.join(STATE, "pki"))
        for i in range(BASE_NODES):
            status, text = api.call("POST", "/api/v1/nodes", node(f"soak-base-{i}", ("a100", "t4", "cpu")[i % 3]))
            if status != 201:
                raise SystemExit(f"soak: ERROR: creating node soak-base-{i}: HTTP {status} {text[:200]!r}")
        subprocess.run([args.bin, "certs", "generate", "--ip", "127.0.0.1", "--out", f"{work}/certs"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        default_policy = subprocess.run([args.bin, "policy", "default"], check=True, stdout=subprocess.PIPE,
                                        text=True).stdout
        with open(os.path.join(ROOT, "deploy", "policies", "strict.yaml")) as f:
            strict_policy = f.read()
        policies = [("strict", strict_policy), ("default", default_policy),
                    ("broken", "apiVersion: gpuadmit.io/v1alpha1\nkind: GpuAdmitPolicy\nspec: [not, a, map\n")]
        policy_file = f"{work}/policy.yaml"
        with open(policy_file, "w") as f:
            f.write(default_policy)
        port = free_port()
        serve_log = open(f"{work}/serve.log", "w")
        serve = subprocess.Popen([args.bin, "serve", "--listen", f"127.0.0.1:{port}", "--tls-cert-file",
                                  f"{work}/certs/tls.crt", "--tls-private-key-file", f"{work}/certs/tls.key",
                                  "--policy", policy_file, "--kubeconfig", exports["KUBECONFIG"],
                                  "--log-level", "warn", "--drain-seconds", "0"],
                                 stdout=serve_log, stderr=subprocess.STDOUT)
        ca = f"{work}/certs/ca.crt"
        for _ in range(300):
            try:
                if metric(metrics(port, ca), "gpuadmit_cluster_synced") == 1:
                    break
            except OSError:
                pass
            if serve.poll() is not None:
                raise SystemExit(f"soak: ERROR: gpuadmit serve exited {serve.returncode} (see {work}/serve.log)")
            time.sleep(0.1)
        connections = 8
        with open(f"{work}/load.lua", "w") as f:
            f.write(f"""wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("{HERE}/mutate-review.json", "rb"); wrk.body = f:read("*a"); f:close()
local n = 0
request = function() n = n + 1; return wrk.format(nil, (n % 2 == 0) and "/mutate" or "/validate") end
delay = function() return {1000 * connections / args.rate} end
""")
        wrk_out = open(f"{work}/wrk.out", "w")
        wrk = subprocess.Popen(["wrk", "-t1", f"-c{connections}", f"-d{args.seconds}s", "-s", f"{work}/load.lua",
                                f"https://127.0.0.1:{port}/"], stdout=wrk_out, stderr=subprocess.STDOUT)
        churn = Churn(Api(api.port, os.path.join(STATE, "pki")), stop)
        churn.start()
        log(f"running {args.seconds} s: {args.rate} reviews/s, 4 node writes/s, a policy change every "
            f"{RELOAD_SECONDS} s (gpuadmit pid {serve.pid}, state {STATE}, work {work})")
        started = time.monotonic()
        samples, written = [], {"strict": 0, "default": 0, "broken": 0}
        next_sample, next_reload, reload_index = started, started + RELOAD_SECONDS, 0
        print("seconds rss_kb fds threads", flush=True)
        while time.monotonic() - started < args.seconds:
            now = time.monotonic()
            if now >= next_sample:
                rss, fds, threads = process_sample(serve.pid)
                samples.append((now - started, rss, fds, threads))
                print(f"{now - started:7.0f} {rss} {fds} {threads}", flush=True)
                next_sample += SAMPLE_SECONDS
            if now >= next_reload:
                name, text = policies[reload_index % len(policies)]
                with open(policy_file + ".new", "w") as f:
                    f.write(text)
                os.replace(policy_file + ".new", policy_file)
                written[name] += 1
                reload_index += 1
                next_reload += RELOAD_SECONDS
            if serve.poll() is not None:
                raise SystemExit(f"soak: ERROR: gpuadmit serve exited {serve.returncode} mid-run")
            time.sleep(max(0.0, min(next_sample, next_reload) - time.monotonic()))
        stop.set()
        churn.join(30)
        wrk.wait(timeout=60)
        wrk = None
        report = open(f"{work}/wrk.out").read()

        # The view must end with the API server's nodes (give the last writes a moment to arrive).
        status, text = api.call("GET", "/api/v1/nodes")
        expected = len(json.loads(text)["items"])
        seen = None
        for _ in range(50):
            text = metrics(port, ca)
            seen = metric(text, "gpuadmit_cluster_objects", 'kind="nodes"')
            if seen == expected:
                break
            time.sleep(0.1)
        time.sleep(3)  # the poller's last check of the policy file
        text = metrics(port, ca)
        reloads_ok = metric(text, "gpuadmit_policy_reloads_total", 'result="success"') or 0
        reloads_refused = metric(text, "gpuadmit_policy_reloads_total", 'result="failure"') or 0
        requests = re.search(r"(\d+) requests in", report)
        rate = re.search(r"Requests/sec:\s+([0-9.]+)", report)
        steady = [s for s in samples if s[0] >= args.warmup]
        slopes = [slope_per_hour([(s[0], s[k]) for s in steady]) for k in (1, 2, 3)]
        second_half = [s for s in samples if s[0] >= args.seconds / 2]
        rss_late = slope_per_hour([(s[0], s[1]) for s in second_half])
        ranges = [(min(s[k] for s in steady), max(s[k] for s in steady)) for k in (1, 2, 3)]
        print(f"reviews: {requests.group(1) if requests else '?'} at {rate.group(1) if rate else '?'}/s; "
              f"node writes: {churn.writes} ({len(churn.errors)} refused); policy files written: {written}; "
              f"reloads counted: {reloads_ok:.0f} ok, {reloads_refused:.0f} refused; view nodes {seen} of {expected}")
        for name, slope, (low, high), unit in zip(("RSS", "fds", "threads"), slopes, ranges, ("kB", "", "")):
            print(f"{name}: slope {slope:+.1f}{unit}/h after {args.warmup} s; range {low}..{high}{unit}")
        print(f"RSS: slope {rss_late:+.1f}kB/h over the second half ({second_half[0][1]} -> {second_half[-1][1]} kB)")
        if "Non-2xx" in report or "Socket errors" in report:
            failures.append("wrk: " + " ".join(l.strip() for l in report.splitlines()
                                               if "Non-2xx" in l or "Socket errors" in l))
        if churn.errors:
            failures.append(f"{len(churn.errors)} node writes refused, first: {churn.errors[0]}")
        if seen != expected:
            failures.append(f"the view holds {seen} nodes, the API server {expected}")
        good = written["strict"] + written["default"]
        if reloads_ok < good or reloads_refused < written["broken"]:
            failures.append(f"reloads counted {reloads_ok:.0f} ok / {reloads_refused:.0f} refused, "
                            f"files written {good} valid / {written['broken']} broken")
        if ranges[2][0] != ranges[2][1]:
            failures.append(f"threads changed: {ranges[2]}")
        if ranges[1][1] - ranges[1][0] > 2:
            failures.append(f"fds ranged {ranges[1]}")
        if rss_late > args.rss_slope_kb_per_hour:
            failures.append(f"RSS slope {rss_late:+.0f} kB/h over the second half, over the bound "
                            f"{args.rss_slope_kb_per_hour:.0f}")
    finally:
        stop.set()
        if wrk is not None:
            wrk.kill()
        if serve is not None:
            serve.terminate()
            serve.wait(timeout=30)
        subprocess.run([CLUSTER_SH, "down"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for failure in failures:
        log("FAIL: " + failure)
    if failures:
        log(f"kept {work} (serve.log, wrk.out)")
        return 1
    shutil.rmtree(work)
    log("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
