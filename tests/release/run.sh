#!/usr/bin/env bash
# The release pipeline's offline check (docs/release.md, "What cannot run here"): the workflows under
# .github/workflows cannot run on this machine (no GitHub, no registry, no OIDC), so this checks what can be
# checked without them:
#   1. actionlint (tests/release/build-actionlint.sh, the version pinned in tools/actionlint) over every
#      workflow: syntax, expressions and contexts, job needs and outputs, runner labels, permissions, and,
#      with shellcheck found, the shell of every run: step (shellcheck on PATH, else ~/.local/bin/shellcheck;
#      without one, that part is skipped with a warning).
#   2. That the check can fail: a copy of ci.yml with an undefined context property (github.shaa) must be
#      rejected, naming it; with shellcheck, a copy with an unquoted variable in a run: step too.
#   3. Policy (the embedded Python): every `uses:` is pinned by a full 40-hex commit SHA with a `# vX.Y.Z`
#      comment (no tag or branch refs; local ./ actions excepted); release.yml builds the image for
#      linux/amd64,linux/arm64 with push, sbom: true and provenance: mode=max, signs it and the chart by digest
#      with `cosign sign --yes` in jobs that have id-token: write, pushes the chart with helm, builds the CLI
#      for amd64 and arm64 (ubuntu-24.04-arm for the latter) and publishes a GitHub release with SHA256SUMS;
#      no workflow has write permissions at the top level; ci.yml runs `make test` in debian:bookworm with
#      a timeout; and every debian:bookworm container is the Dockerfile's build-stage digest.
#   4. The krew manifest plugins/gpuadmit.yaml, with krew's own tools (tests/release/build-krew-validate.sh,
#      the version pinned in tools/krew): its @X@ placeholders are exactly those release.yml's Krew manifest
#      step fills; release.yml's own Checksums and Krew manifest steps render it (for v0.1.0 and v0.1.0-rc.1,
#      repository gpuadmit/gpuadmit) over stand-in archives made by the Package step's own tar command (its
#      members, a stub script as the binary); validate-krew-manifest accepts the result (-skip-install: its
#      install step downloads the uri); the uris, files: and bin: match the Package step's archives, and no
#      key is unknown to krew; `krew install --manifest --archive` of each platform verifies the sha256, links
#      kubectl-gpuadmit to the right stub and installs every file of the archive. Then it must fail: the
#      amd64 platform with the arm64 archive (checksum), and copies with spec.version lacking its v, a
#      platform without a selector, or two overlapping selectors. A `note` line says when the archive holds no
#      licence file (krew-index requires one).
#
# Usage: tests/release/run.sh   (from anywhere). Exit status: 0 all checks passed, 1 a check failed.
# Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE (passed to build-actionlint.sh and build-krew-validate.sh),
# SHELLCHECK (path to use).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WF_DIR=$ROOT/.github/workflows

log() { printf '%s release-lint: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

shopt -s nullglob
WORKFLOWS=("$WF_DIR"/*.yml "$WF_DIR"/*.yaml)
shopt -u nullglob
((${#WORKFLOWS[@]} > 0)) || die "no workflows under $WF_DIR"
[[ -f $WF_DIR/ci.yml && -f $WF_DIR/release.yml ]] || die "expected $WF_DIR/ci.yml and release.yml"

envs=$("$HERE/build-actionlint.sh") || die "building actionlint failed"
eval "$envs"
ACTIONLINT=$GPUADMIT_ACTIONLINT

SC=${SHELLCHECK:-}
if [[ -z $SC ]]; then
  if command -v shellcheck >/dev/null; then SC=$(command -v shellcheck)
  elif [[ -x $HOME/.local/bin/shellcheck ]]; then SC=$HOME/.local/bin/shellcheck
  fi
fi
if [[ -n $SC ]]; then
  "$SC" --version >/dev/null 2>&1 || die "shellcheck at $SC does not run"
  SC_VERSION=$("$SC" --version | awk '$1 == "version:" { print $2 }')
  log "shellcheck $SC_VERSION ($SC): the shell of run: steps is checked"
else
  log "WARNING: shellcheck not found (PATH, ~/.local/bin): the shell of run: steps is NOT checked"
fi

# actionlint FILE...: actionlint with this shellcheck (or none); no pyflakes (no Python run: steps here), so
# the result does not depend on what else is installed.
lint() { (cd "$ROOT" && "$ACTIONLINT" -no-color -shellcheck="$SC" -pyflakes= "$@"); }

checks=0
ok() { checks=$((checks + 1)); printf '  ok  %s\n' "$*"; }

printf 'release-lint: actionlint %s on %d workflows\n' "$("$ACTIONLINT" -version | head -n 1)" "${#WORKFLOWS[@]}"

# 1. The workflows, as they are.
rels=()
for wf in "${WORKFLOWS[@]}"; do rels+=("${wf#"$ROOT"/}"); done
if ! lint "${rels[@]}" >"$WORK/lint.out" 2>&1; then
  cat "$WORK/lint.out" >&2
  die "actionlint found problems in ${rels[*]}"
fi
ok "actionlint${SC:+ + shellcheck}: ${rels[*]} clean"

# 2. The check fails when it should: each copy carries one deliberate error.
mkdir -p "$WORK/.github/workflows"
bad=$WORK/.github/workflows/ci.yml
sed 's/^\(\s*\)run: \.ci\/run$/\1run: echo "${{ github.shaa }}" \&\& .ci\/run/' "$WF_DIR/ci.yml" >"$bad"
grep -q 'github.shaa' "$bad" || die "could not plant the expression error in a copy of ci.yml (its 'run: .ci/run' line moved?)"
rc=0
(cd "$WORK" && "$ACTIONLINT" -no-color -shellcheck= -pyflakes= .github/workflows/ci.yml) >"$WORK/bad.out" 2>&1 || rc=$?
if ((rc == 0)) || ! grep -q 'shaa' "$WORK/bad.out"; then
  cat "$WORK/bad.out" >&2
  die "actionlint accepted a workflow with \${{ github.shaa }} (exit $rc)"
fi
ok "a copy of ci.yml with \${{ github.shaa }} is rejected (exit $rc: $(grep -m1 -o 'property "shaa" is not defined' "$WORK/bad.out" || echo 'names shaa'))"

if [[ -n $SC ]]; then
  # shellcheck disable=SC2016  # the $ is for the copied workflow, not for this shell
  sed 's/^\(\s*\)run: \.ci\/run$/\1run: .ci\/run $MAKEFLAGS_EXTRA/' "$WF_DIR/ci.yml" >"$bad"
  grep -q 'MAKEFLAGS_EXTRA' "$bad" || die "could not plant the shell error in a copy of ci.yml"
  rc=0
  (cd "$WORK" && "$ACTIONLINT" -no-color -shellcheck="$SC" -pyflakes= .github/workflows/ci.yml) >"$WORK/bad.out" 2>&1 || rc=$?
  if ((rc == 0)) || ! grep -q 'SC2086' "$WORK/bad.out"; then
    cat "$WORK/bad.out" >&2
    die "actionlint + shellcheck accepted an unquoted \$MAKEFLAGS_EXTRA in a run: step (exit $rc)"
  fi
  ok "a copy of ci.yml with an unquoted variable in run: is rejected by shellcheck through actionlint (SC2086, exit $rc)"
fi

# 3. Policy, on the workflows as they are, then on a copy with four deliberate breaks (a tag-pinned action,
# no SBOM, one platform, no id-token for the signing jobs), which it must reject, naming each.
cat >"$WORK/policy.py" <<'PY'
import re
import sys
from pathlib import Path

import yaml

root = Path(sys.argv[1])
files = sys.argv[2:]
oks, fails = [], []


class Check:
    """`with Check(): ... ok = "..."`: the message is recorded as passed when nothing inside failed."""

    def __enter__(self):
        self.start, self.ok = len(fails), None
        return self

    def __exit__(self, *exc):
        if exc[0] is None and len(fails) == self.start and self.ok:
            oks.append(self.ok)
        return False


fail = fails.append


def on_of(doc):
    # PyYAML reads the bare key `on` as the boolean True.
    return doc.get("on", doc.get(True)) or {}


def steps(job):
    return job.get("steps") or []


def runs(job):
    return "\n".join(s.get("run", "") for s in steps(job))


def uses(step, action):
    return str(step.get("uses", "")).split("@")[0] == action


def image_of(job):
    c = job.get("container")
    return c.get("image") if isinstance(c, dict) else c


def perms(job):
    return job.get("permissions") or {}


docs = {rel: yaml.safe_load((root / rel).read_text()) for rel in files}

# Every uses: pinned by commit SHA, with the release it pins in a comment.
SHA_USES = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[^@\s]*)?@[0-9a-f]{40}$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)\s*(#.*)?$")
with Check() as c:
    n = 0
    for rel in files:
        for lineno, line in enumerate((root / rel).read_text().splitlines(), 1):
            m = USES_LINE.match(line)
            if not m:
                continue
            ref, comment = m.group(1).strip("'\""), m.group(2) or ""
            n += 1
            if ref.startswith("./"):
                continue
            if ref.startswith("docker://"):
                if not re.search(r"@sha256:[0-9a-f]{64}$", ref):
                    fail(f"{rel}:{lineno}: {ref} is not pinned by digest")
            elif not SHA_USES.match(ref):
                fail(f"{rel}:{lineno}: {ref} is not pinned by a full 40-hex commit SHA")
            elif not re.match(r"#\s*v\d+(\.\d+){0,2}\b", comment):
                fail(f"{rel}:{lineno}: {ref} has no '# vX.Y.Z' comment naming the release it pins")
    c.ok = f"all {n} uses: pinned by a 40-hex commit SHA with a # vX.Y.Z comment"

# Permissions and timeouts.
with Check() as c:
    for rel, doc in docs.items():
        top = doc.get("permissions")
        if top == "write-all" or (isinstance(top, dict) and "write" in top.values()):
            fail(f"{rel}: write permissions at the top level ({top}); grant them per job")
        for name, job in (doc.get("jobs") or {}).items():
            if "permissions" not in job:
                fail(f"{rel}: job {name} has no permissions: of its own")
            if "timeout-minutes" not in job:
                fail(f"{rel}: job {name} has no timeout-minutes")
    c.ok = "no top-level write permissions; every job has its own permissions: and timeout-minutes"

# Every container is the Dockerfile's build stage.
with Check() as c:
    m = re.search(r"^FROM (debian:bookworm@sha256:[0-9a-f]{64}) AS build$", (root / "Dockerfile").read_text(), re.M)
    if not m:
        fail("Dockerfile: no 'FROM debian:bookworm@sha256:... AS build' line")
    else:
        want, n = m.group(1), 0
        for rel, doc in docs.items():
            for name, job in (doc.get("jobs") or {}).items():
                if image_of(job) is None:
                    continue
                n += 1
                if image_of(job) != want:
                    fail(f"{rel}: job {name} runs in {image_of(job)}, not the Dockerfile's build stage {want}")
        c.ok = f"{n} container jobs run in the Dockerfile's build-stage image ({want[:40]}...)"

# ci.yml: make test on Debian 12, with Go and the tools cache, inside 90 minutes.
with Check() as c:
    ci = docs.get(".github/workflows/ci.yml")
    if ci is None:
        fail("no ci.yml")
    else:
        trig = on_of(ci)
        if not ("push" in trig and "pull_request" in trig):
            fail("ci.yml: not triggered on both push and pull_request")
        test_jobs = [(n, j) for n, j in (ci.get("jobs") or {}).items() if re.search(r"^\s*(make test|\.ci/run)\s*$", runs(j), re.M)]
        if not test_jobs:
            fail("ci.yml: no job runs `make test`")
        for n, j in test_jobs:
            if not str(image_of(j)).startswith("debian:bookworm"):
                fail(f"ci.yml: job {n} runs make test in {image_of(j)}, not debian:bookworm")
            if not any(uses(s, "actions/setup-go") for s in steps(j)):
                fail(f"ci.yml: job {n} does not set up Go (the test tools are built with it)")
            if not any(uses(s, "actions/cache") and ".cache/gpuadmit" in str((s.get("with") or {}).get("path", ""))
                       for s in steps(j)):
                fail(f"ci.yml: job {n} does not cache ~/.cache/gpuadmit")
            if not 0 < int(j.get("timeout-minutes", 0)) <= 90:
                fail(f"ci.yml: job {n} timeout-minutes is not set to at most 90")
        if test_jobs:
            c.ok = (f"ci.yml: push + pull_request; make test in debian:bookworm with setup-go and the "
                    f"~/.cache/gpuadmit cache, timeout {test_jobs[0][1]['timeout-minutes']} min")

rel_doc = docs.get(".github/workflows/release.yml")
if rel_doc is None:
    fail("no release.yml")
    rel_doc = {}
jobs = rel_doc.get("jobs") or {}
with Check() as c:
    if "v*" not in ((on_of(rel_doc).get("push") or {}).get("tags") or []):
        fail("release.yml: not triggered by pushing v* tags")
    c.ok = "release.yml: on push of tags v*"

# The image: both platforms, pushed, SBOM and max provenance, signed by digest.
bp = [(n, j, s) for n, j in jobs.items() for s in steps(j) if uses(s, "docker/build-push-action")]
with Check() as c:
    if len(bp) != 1:
        fail(f"release.yml: expected one docker/build-push-action step, found {len(bp)}")
    else:
        n, j, s = bp[0]
        w = s.get("with") or {}
        plats = {p.strip() for p in str(w.get("platforms", "")).replace("\n", ",").split(",") if p.strip()}
        if not {"linux/amd64", "linux/arm64"} <= plats:
            fail(f"release.yml: image platforms are {sorted(plats)}, not linux/amd64 and linux/arm64")
        if w.get("push") is not True:
            fail("release.yml: build-push-action does not push")
        if w.get("sbom") is not True:
            fail("release.yml: build-push-action has no `sbom: true`")
        if str(w.get("provenance")) != "mode=max":
            fail(f"release.yml: build-push-action provenance is {w.get('provenance')!r}, not mode=max")
        args = str(w.get("build-args", ""))
        if not re.search(r"^VERSION=", args, re.M) or not re.search(r"^REVISION=\$\{\{ github.sha \}\}$", args, re.M):
            fail("release.yml: build-args do not set VERSION and REVISION=${{ github.sha }}")
        if not any(uses(x, "docker/setup-qemu-action") for x in steps(j)):
            fail(f"release.yml: job {n} has no docker/setup-qemu-action (arm64 builds under QEMU)")
        if not re.search(r'^\s*cosign sign --yes "\$IMAGE@\$DIGEST"$', runs(j), re.M):
            fail(f'release.yml: job {n} does not run cosign sign --yes "$IMAGE@$DIGEST"')
        if perms(j).get("id-token") != "write" or perms(j).get("packages") != "write":
            fail(f"release.yml: job {n} lacks id-token: write or packages: write")
        c.ok = (f"release.yml: image {','.join(sorted(plats))}, push, sbom: true, provenance: mode=max, VERSION and "
                f"REVISION build args, cosign sign --yes IMAGE@DIGEST (job {n}, id-token: write)")

# The chart: packaged at the tag's version, pushed to an OCI registry, signed by digest.
chart = [(n, j) for n, j in jobs.items() if re.search(r"package charts/gpuadmit --version \S+ --app-version", runs(j))]
with Check() as c:
    if len(chart) != 1:
        fail("release.yml: no single job runs helm package charts/gpuadmit --version ... --app-version ...")
    else:
        n, j = chart[0]
        if not re.search(r' push \S+ "oci://', runs(j)):
            fail(f"release.yml: job {n} does not helm push to oci://")
        if not re.search(r'^\s*cosign sign --yes "\$CHART@\$DIGEST"$', runs(j), re.M):
            fail(f'release.yml: job {n} does not run cosign sign --yes "$CHART@$DIGEST"')
        if perms(j).get("id-token") != "write":
            fail(f"release.yml: job {n} lacks id-token: write")
        c.ok = f"release.yml: chart packaged, pushed to oci:// and signed by digest (job {n}, id-token: write)"

# The CLI: make build on amd64 and on an arm64 runner.
bins = [(n, j) for n, j in jobs.items() if re.search(r"^\s*make build\b", runs(j), re.M)]
with Check() as c:
    if len(bins) != 1:
        fail("release.yml: no single job runs make build")
    else:
        n, j = bins[0]
        inc = ((j.get("strategy") or {}).get("matrix") or {}).get("include") or []
        arches = {i.get("arch"): i.get("runner") for i in inc}
        if set(arches) != {"amd64", "arm64"}:
            fail(f"release.yml: job {n} builds for {sorted(arches)}, not amd64 and arm64")
        elif arches["arm64"] != "ubuntu-24.04-arm":
            fail(f"release.yml: job {n} builds arm64 on {arches['arm64']}, not ubuntu-24.04-arm")
        if "build/release/src/cli/gpuadmit" not in runs(j):
            fail(f"release.yml: job {n} does not package build/release/src/cli/gpuadmit")
        c.ok = f"release.yml: CLI by make build for amd64 ({arches.get('amd64')}) and arm64 ({arches.get('arm64')})"

# The GitHub release: after everything else, with signed checksums and the krew manifest.
pub = [(n, j) for n, j in jobs.items() if "gh release create" in runs(j)]
with Check() as c:
    if len(pub) != 1:
        fail("release.yml: no single job runs gh release create")
    else:
        n, j = pub[0]
        r = runs(j)
        needs = j.get("needs") or []
        needs = [needs] if isinstance(needs, str) else needs
        missing = [x[0] for x in (bp, chart, bins) if x and x[0][0] not in needs]
        if missing:
            fail(f"release.yml: job {n} does not wait for {missing}")
        if "sha256sum" not in r or "SHA256SUMS" not in r:
            fail(f"release.yml: job {n} writes no SHA256SUMS")
        if "cosign sign-blob --yes" not in r or perms(j).get("id-token") != "write":
            fail(f"release.yml: job {n} does not sign SHA256SUMS (cosign sign-blob --yes, id-token: write)")
        if "plugins/gpuadmit.yaml" not in r:
            fail(f"release.yml: job {n} does not render the krew manifest")
        if perms(j).get("contents") != "write":
            fail(f"release.yml: job {n} lacks contents: write")
        c.ok = f"release.yml: GitHub release after {', '.join(needs)}, with SHA256SUMS (signed) and the krew manifest"

for line in oks:
    print(f"  ok  {line}")
for line in fails:
    print(f"  FAIL {line}")
print(f"policy: {len(oks)} checks passed, {len(fails)} failed")
sys.exit(1 if fails else 0)
PY
rc=0
python3 "$WORK/policy.py" "$ROOT" "${rels[@]}" >"$WORK/policy.out" 2>&1 || rc=$?
cat "$WORK/policy.out"
((rc == 0)) || die "policy check failed (above)"
checks=$((checks + $(grep -c '^  ok ' "$WORK/policy.out")))

mut=$WORK/mutated
mkdir -p "$mut/.github/workflows"
cp "$ROOT/Dockerfile" "$mut/"
cp "$WF_DIR/ci.yml" "$mut/.github/workflows/"
sed -e '0,/uses: actions\/checkout@[0-9a-f]\{40\}.*/s//uses: actions\/checkout@v7/' \
  -e 's/^\(\s*\)sbom: true$/\1sbom: false/' \
  -e 's|^\(\s*\)platforms: linux/amd64,linux/arm64$|\1platforms: linux/amd64|' \
  -e '/^\s*id-token: write/d' \
  "$WF_DIR/release.yml" >"$mut/.github/workflows/release.yml"
rc=0
python3 "$WORK/policy.py" "$mut" .github/workflows/ci.yml .github/workflows/release.yml >"$WORK/mut.out" 2>&1 || rc=$?
missed=()
for want in 'actions/checkout@v7 is not pinned' "no \`sbom: true\`" 'not linux/amd64 and linux/arm64' 'lacks id-token: write'; do
  grep -qF -- "$want" "$WORK/mut.out" || missed+=("$want")
done
if ((rc == 0 || ${#missed[@]} > 0)); then
  cat "$WORK/mut.out" >&2
  die "the policy check did not reject a broken copy of release.yml (exit $rc; not reported: ${missed[*]:-})"
fi
ok "a copy of release.yml with a tag-pinned action, no SBOM, one platform and no id-token is rejected ($(grep -c FAIL "$WORK/mut.out") failures)"


# 4. The krew manifest (plugins/gpuadmit.yaml), rendered by release.yml's own steps and checked by krew's own
# tools (tests/release/build-krew-validate.sh: validate-krew-manifest and krew, the version pinned in
# tools/krew). Nothing is downloaded: the archives are stand-ins built with the Package step's own tar
# command (its members, a stub `gpuadmit` script in place of the binary), and krew installs from them with
# --archive, checking the sha256 the Krew manifest step read from SHA256SUMS.
MANIFEST=$ROOT/plugins/gpuadmit.yaml
[[ -f $MANIFEST ]] || die "no krew manifest at plugins/gpuadmit.yaml (issue #53)"
envs=$("$HERE/build-krew-validate.sh") || die "building validate-krew-manifest and krew failed"
eval "$envs"
KW=$WORK/krew
mkdir -p "$KW"
export KREW_NO_UPGRADE_CHECK=1 # krew: no request for its latest release

cat >"$KW/krew.py" <<'PY'
"""extract ROOT OUT: the run: scripts of release.yml's Package, Checksums and Krew manifest steps, as files
check MANIFEST VERSION TAG REPO ARCHIVES MEMBERS: the rendered manifest against what the workflow publishes
mutate KIND IN OUT: a copy of a rendered manifest with one deliberate break"""
import fnmatch
import posixpath
import re
import sys
from pathlib import Path

import yaml


def die(msg):
    print(f"krew.py: {msg}", file=sys.stderr)
    sys.exit(1)


def extract(root, out):
    doc = yaml.safe_load((root / ".github/workflows/release.yml").read_text())
    steps = {}
    for job in (doc.get("jobs") or {}).values():
        for s in job.get("steps") or []:
            if "name" in s and "run" in s:
                steps.setdefault(s["name"], s["run"])
    for name in ("Package", "Checksums", "Krew manifest", "Create the GitHub release"):
        if name not in steps:
            die(f"release.yml has no step named {name!r} with a run: script")
    pkg = steps["Package"]
    m = re.search(r'^[ \t]*(name=\S+)[ \t]*$', pkg, re.M)
    if not m:
        die("release.yml's Package step has no name=... line (the archive's base name)")
    (out / "name.sh").write_text(m.group(1) + "\n")
    m = re.search(r'^[ \t]*(tar [^\n]*-C stage -cf - ([^|\n]+?) \|[ \t]*\n[ \t]*gzip [^\n]*>"dist/\$name\.tar\.gz")[ \t]*$',
                  pkg, re.M)
    if not m:
        die('release.yml\'s Package step has no `tar ... -C stage -cf - FILES |` + `gzip ... >"dist/$name.tar.gz"` pipeline')
    (out / "tar.sh").write_text(m.group(1) + "\n")
    (out / "members").write_text("\n".join(m.group(2).split()) + "\n")
    (out / "checksums.sh").write_text(steps["Checksums"])
    krew = steps["Krew manifest"]
    (out / "krew-step.sh").write_text(krew)
    (out / "placeholders").write_text("\n".join(sorted(set(re.findall(r'-e "s\|(@[A-Z0-9_]+@)\|', krew)))) + "\n")
    if not re.search(r'gh release create .*\bdist/\*', steps["Create the GitHub release"], re.S):
        die("release.yml's Create the GitHub release step does not upload dist/* (the archives and gpuadmit.yaml)")


ALLOWED = {
    "": {"apiVersion", "kind", "metadata", "spec"},
    "metadata": {"name"},
    "spec": {"version", "homepage", "shortDescription", "description", "caveats", "platforms"},
    "platform": {"selector", "uri", "sha256", "files", "bin"},
    "selector": {"matchLabels", "matchExpressions"},
    "file": {"from", "to"},
}


def keys(where, obj, fails):
    if not isinstance(obj, dict):
        fails.append(f"{where or 'the document'} is not a mapping")
        return {}
    kind = where.split(".")[-1].split("[")[0] if where else ""
    kind = {"platforms": "platform", "files": "file"}.get(kind, kind)
    for k in set(obj) - ALLOWED[kind]:
        fails.append(f"{where or 'top level'}: unknown key {k!r} (krew ignores it silently)")
    return obj


def check(path, version, tag, repo, archives, members):
    fails = []
    doc = keys("", yaml.safe_load(Path(path).read_text()), fails)
    keys("metadata", doc.get("metadata") or {}, fails)
    spec = keys("spec", doc.get("spec") or {}, fails)
    if spec.get("version") != f"v{version}":
        fails.append(f"spec.version is {spec.get('version')!r}, not 'v{version}'")
    if spec.get("homepage") != f"https://github.com/{repo}":
        fails.append(f"spec.homepage is {spec.get('homepage')!r}, not https://github.com/{repo}")
    short = spec.get("shortDescription") or ""
    if not 0 < len(short) <= 50:
        fails.append(f"spec.shortDescription has {len(short)} characters (1 to 50: one line in `kubectl krew search`)")
    for k in ("description", "caveats"):
        if not str(spec.get(k) or "").strip():
            fails.append(f"spec.{k} is empty")
    names = dict(line.split() for line in Path(archives).read_text().splitlines())
    tarred = Path(members).read_text().split()
    arches = []
    for i, p in enumerate(spec.get("platforms") or []):
        w = f"spec.platforms[{i}]"
        keys(w, p, fails)
        sel = keys(f"{w}.selector", p.get("selector") or {}, fails)
        ml = sel.get("matchLabels") or {}
        if set(ml) != {"os", "arch"} or ml.get("os") != "linux" or sel.get("matchExpressions"):
            fails.append(f"{w}: selector is {sel}, not matchLabels {{os: linux, arch: ...}}")
            continue
        arch = ml["arch"]
        arches.append(arch)
        if arch not in names:
            fails.append(f"{w}: arch {arch!r} is not one the binaries job builds ({sorted(names)})")
            continue
        want = f"https://github.com/{repo}/releases/download/{tag}/{names[arch]}"
        if p.get("uri") != want:
            fails.append(f"{w}: uri is {p.get('uri')!r}, not {want} (the Package step's archive for {arch})")
        installed = set()
        for j, op in enumerate(p.get("files") or [{"from": "*", "to": "."}]):
            keys(f"{w}.files[{j}]", op, fails)
            hit = [x for x in tarred if fnmatch.fnmatch(x, op.get("from", ""))]
            if not hit:
                fails.append(f"{w}.files[{j}]: from {op.get('from')!r} matches nothing in the archive ({' '.join(tarred)})")
            to = posixpath.normpath(op.get("to", ""))
            installed |= {posixpath.basename(x) if to == "." else to for x in hit}
        for x in tarred:
            if not any(fnmatch.fnmatch(x, op.get("from", "")) for op in (p.get("files") or [{"from": "*"}])):
                fails.append(f"{w}: the archive's {x!r} is not installed by files:")
        if posixpath.normpath(str(p.get("bin", ""))) not in installed:
            fails.append(f"{w}: bin {p.get('bin')!r} is not among the installed files {sorted(installed)}")
    if sorted(arches) != sorted(names):
        fails.append(f"platforms are linux/{sorted(arches)}, the binaries job builds linux/{sorted(names)}")
    for f in fails:
        print(f"  FAIL {f}")
    if fails:
        sys.exit(1)
    print(f"{','.join('linux/' + a for a in arches)}|{' '.join(tarred)}")


def mutate(kind, src, dst):
    doc = yaml.safe_load(Path(src).read_text())
    if kind == "version":
        doc["spec"]["version"] = doc["spec"]["version"].lstrip("v")
    elif kind == "selector":
        del doc["spec"]["platforms"][-1]["selector"]
    elif kind == "overlap":
        doc["spec"]["platforms"][-1]["selector"] = doc["spec"]["platforms"][0]["selector"]
    else:
        die(f"unknown mutation {kind}")
    Path(dst).write_text(yaml.safe_dump(doc, sort_keys=False))


cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "extract":
    extract(Path(args[0]), Path(args[1]))
elif cmd == "check":
    check(*args)
elif cmd == "mutate":
    mutate(*args)
else:
    die(f"unknown command {cmd}")
PY
python3 "$KW/krew.py" extract "$ROOT" "$KW" || die "cannot read the Package, Checksums and Krew manifest steps from release.yml"
mapfile -t MEMBERS <"$KW/members"
KREW_ARCHES=(amd64 arm64)

# Placeholders: every @X@ in the manifest is one the Krew manifest step's sed fills, and it fills no other.
used=$(grep -o '@[A-Z0-9_]\{1,\}@' "$MANIFEST" | sort -u | paste -sd' ')
filled=$(paste -sd' ' "$KW/placeholders")
[[ $used == "$filled" ]] || die "plugins/gpuadmit.yaml uses placeholders [$used]; release.yml's Krew manifest step fills [$filled]"
ok "krew: plugins/gpuadmit.yaml's placeholders are exactly the ones release.yml's sed fills ($used)"

# render VERSION TAG: a workspace laid out as the release job's (plugins/, dist/ with both archives), where
# the Checksums and Krew manifest steps run as GitHub runs them (bash -e -o pipefail); prints its path.
render() {
  local version=$1 tag=$2 ws=$KW/ws-$1 arch m
  mkdir -p "$ws/plugins" "$ws/dist"
  cp "$MANIFEST" "$ws/plugins/gpuadmit.yaml"
  : >"$ws/archives"
  for arch in "${KREW_ARCHES[@]}"; do
    rm -rf "$ws/stage"
    mkdir -p "$ws/stage"
    for m in "${MEMBERS[@]}"; do
      case $m in
        gpuadmit) printf '#!/bin/sh\necho "gpuadmit %s (stand-in for linux/%s)"\n' "$version" "$arch" >"$ws/stage/$m"
          chmod 755 "$ws/stage/$m" ;;
        *) [[ -f $ROOT/$m ]] || die "release.yml's Package step tars $m, which is neither the binary nor a file at the top of the repository"
          cp "$ROOT/$m" "$ws/stage/$m" ;;
      esac
    done
    # shellcheck disable=SC2016  # expanded by the inner bash, with the step's own variables
    (cd "$ws" && VERSION=$version ARCH=$arch mtime=1700000000 bash -e -o pipefail -c \
      "$(cat "$KW/name.sh")"$'\n''printf "%s %s\n" "$ARCH" "$name.tar.gz" >>archives'$'\n'"$(cat "$KW/tar.sh")") ||
      die "the Package step's tar command failed for linux/$arch"
  done
  (cd "$ws" && bash -e -o pipefail "$KW/checksums.sh" >"$ws/checksums.out" 2>&1) || { cat "$ws/checksums.out" >&2; die "the Checksums step failed"; }
  if ! (cd "$ws" && VERSION=$version GITHUB_REF_NAME=$tag GITHUB_REPOSITORY=gpuadmit/gpuadmit \
    bash -e -o pipefail "$KW/krew-step.sh" >"$ws/krew-step.out" 2>&1); then
    cat "$ws/krew-step.out" >&2
    die "release.yml's Krew manifest step failed on plugins/gpuadmit.yaml ($tag)"
  fi
  [[ -s $ws/dist/gpuadmit.yaml ]] || die "the Krew manifest step wrote no dist/gpuadmit.yaml ($tag)"
  printf '%s\n' "$ws"
}

# validate FILE: validate-krew-manifest without its install step (which downloads the uri: the install is
# done below with krew --archive instead).
validate() { "$GPUADMIT_KREW_VALIDATE" -manifest "$1" -skip-install; }

for pair in 0.1.0:v0.1.0 0.1.0-rc.1:v0.1.0-rc.1; do
  version=${pair%%:*} tag=${pair#*:}
  ws=$(render "$version" "$tag")
  out=$(python3 "$KW/krew.py" check "$ws/dist/gpuadmit.yaml" "$version" "$tag" gpuadmit/gpuadmit "$ws/archives" "$KW/members") ||
    { printf '%s\n' "$out" >&2; die "the rendered krew manifest ($tag) does not match what release.yml publishes"; }
  if ! validate "$ws/dist/gpuadmit.yaml" >"$ws/validate.out" 2>&1; then
    cat "$ws/validate.out" >&2
    die "validate-krew-manifest rejected plugins/gpuadmit.yaml rendered for $tag"
  fi
  ok "krew: rendered by release.yml's Checksums + Krew manifest steps for $tag (gpuadmit/gpuadmit, sha256 of the stand-in archives): validate-krew-manifest OK (structure, v$version semver, sha256s, selectors ${out%%|*}, no overlap); uris, files: and bin: match the Package step's archives (${out#*|})"
done
ws=$KW/ws-0.1.0
rendered=$ws/dist/gpuadmit.yaml

# Install each platform with krew from its archive: the sha256 must match, bin: must be linked as
# kubectl-gpuadmit, and every file of the archive must land in the plugin's directory.
license=
for arch in "${KREW_ARCHES[@]}"; do
  kr=$KW/krew-root-$arch
  archive=$ws/dist/$(awk -v a="$arch" '$1 == a { print $2 }' "$ws/archives")
  if ! KREW_ROOT=$kr KREW_OS=linux KREW_ARCH=$arch "$GPUADMIT_KREW" install --manifest="$rendered" --archive="$archive" \
    </dev/null >"$KW/install-$arch.out" 2>&1; then
    cat "$KW/install-$arch.out" >&2
    die "krew install of plugins/gpuadmit.yaml (linux/$arch) from its archive failed"
  fi
  link=$kr/bin/kubectl-gpuadmit
  [[ -L $link ]] || die "krew install (linux/$arch) made no kubectl-gpuadmit link in $kr/bin"
  got=$("$link" version 2>&1) || die "kubectl-gpuadmit (linux/$arch) does not run: $got"
  [[ $got == "gpuadmit 0.1.0 (stand-in for linux/$arch)" ]] || die "kubectl-gpuadmit (linux/$arch) ran the wrong file: '$got'"
  store=$kr/store/gpuadmit/v0.1.0
  installed=$(cd "$store" && find . -type f -printf '%P\n' | sort | paste -sd' ')
  want=$(printf '%s\n' "${MEMBERS[@]##*/}" | sort | paste -sd' ')
  [[ $installed == "$want" ]] || die "krew install (linux/$arch) installed [$installed], the archive holds [$want]"
  license=$(cd "$store" && find . -type f -printf '%f\n' | grep -iE '^(licen[cs]es?|copying)(\.txt|\.md)?$' | head -n 1) || true
  target=$(readlink "$link")
  ok "krew: install --archive (linux/$arch): sha256 verified; ${link#"$kr"/} -> ${target#"$kr"/} runs ('$got'); installed: $installed"
done

# The checks can fail: a wrong archive for its platform, and three broken copies of the rendered manifest.
rc=0
KREW_ROOT=$KW/krew-root-wrong KREW_OS=linux KREW_ARCH=amd64 "$GPUADMIT_KREW" install --manifest="$rendered" \
  --archive="$ws/dist/$(awk '$1 == "arm64" { print $2 }' "$ws/archives")" </dev/null >"$KW/wrong.out" 2>&1 || rc=$?
if ((rc == 0)) || ! grep -q 'checksum does not match' "$KW/wrong.out"; then
  cat "$KW/wrong.out" >&2
  die "krew installed the linux/amd64 platform from the arm64 archive (exit $rc): the sha256 check is not working"
fi
ok "krew: installing linux/amd64 from the arm64 archive is refused ("checksum does not match", exit $rc)"
for case in "version:not starting with 'v'" 'selector:nil selector is not supported' 'overlap:overlapping selectors'; do
  kind=${case%%:*} want=${case#*:}
  mkdir -p "$KW/bad-$kind"
  python3 "$KW/krew.py" mutate "$kind" "$rendered" "$KW/bad-$kind/gpuadmit.yaml" || die "cannot write the $kind mutation"
  rc=0
  validate "$KW/bad-$kind/gpuadmit.yaml" >"$KW/bad-$kind.out" 2>&1 || rc=$?
  if ((rc == 0)) || ! grep -qF -- "$want" "$KW/bad-$kind.out"; then
    cat "$KW/bad-$kind.out" >&2
    die "validate-krew-manifest accepted a manifest with a broken $kind (exit $rc; expected '$want')"
  fi
  case $kind in
    version) what="spec.version 0.1.0 (no v)" ;;
    selector) what="the arm64 platform without a selector" ;;
    overlap) what="both platforms selecting linux/amd64" ;;
  esac
  ok "krew: validate-krew-manifest rejects a copy with $what (exit $rc: $(grep -o -m1 -F -- "$want" "$KW/bad-$kind.out"))"
done
if [[ -z $license ]]; then
  printf '  note krew: the archive holds no licence file (release.yml packages only: %s); krew-index'"'"'s check (validate-krew-manifest with its install step) requires one\n' "${MEMBERS[*]}"
fi

printf 'release-lint: passed (%d checks)\n' "$checks"
