#!/usr/bin/env python3
"""Random cases for the DRA CEL differential test (run.sh): SEED COUNT → COUNT JSON lines, each a random
selector over the subset's grammar (and a little past it) against one of generate.py's devices. Operands are
drawn without regard to type, so type errors, missing keys and error/unknown propagation get exercised; a
quarter are matches() on random regular expressions."""
import json
import random
import sys

from generate import DEVICES

NV = "device.attributes['gpu.nvidia.com']"
CAP = "device.capacity['gpu.nvidia.com']"
NAMES = ["type", "productName", "index", "brand", "driverVersion", "cudaComputeCapability", "architecture",
         "profile", "gpuModel"]
STRINGS = ["'gpu'", "'mig'", "'Ampere'", "''", "'NVIDIA A100-SXM4-40GB'", "'1g.5gb'", "\"560.35.3\"", "'a\\tb'"]
PATTERNS = ["'^.*a100.*$'", "'A100'", "'(?i)nvidia'", "'^[0-9]+$'", "'^GPU-[0-9a-f]{8}'", "'g$'", "'a|m'",
            "'\\\\d+'", "'[^a-z]'", "'^$'", "'x{2,3}'", "'(?:mi)g'", "'\\\\bA'"]
QUANTITIES = ["'40Gi'", "'4864Mi'", "'1'", "'500m'", "'0'", "'1e3'", "'40GB'", "'-1'"]
VERSIONS = ["'560.35.3'", "'8.0.0'", "'550.0.0-rc.1'", "'1.2'", "'v9.0.0'"]


def atom(r):
    k = r.randrange(16)
    if k < 5:
        return f"{NV}.{r.choice(NAMES)}"
    if k == 5:
        return f"{NV}['{r.choice(NAMES)}']"
    if k == 6:
        return f"{CAP}.{r.choice(['memory', 'memory', 'multiprocessors', 'cores'])}"
    if k == 7:
        return r.choice(STRINGS)
    if k == 8:
        return r.choice(["0", "1", "-1", "3", "550", "0u", "1u", "0.0", "0.5", "true", "false"])
    if k == 9:
        return f"quantity({r.choice(QUANTITIES)})"
    if k == 10:
        return f"semver({r.choice(VERSIONS)})" if r.random() < 0.8 else f"semver({r.choice(VERSIONS)}, true)"
    if k == 11:
        return "device.driver"
    if k == 12:
        return f"device.attributes['{r.choice(['other.example.com', 'gpu.nvidia.com', 'resource.kubernetes.io'])}'].{r.choice(['type', 'index', 'brand', 'pcieRoot'])}"
    if k == 13:
        return f"[{', '.join(atom(r) for _ in range(r.randrange(3)))}]"
    if k == 14:
        return f"{atom(r)}.{r.choice(['lowerAscii()', 'upperAscii()', 'size()', 'major()', 'minor()', 'asInteger()'])}"
    return "device.allowMultipleAllocations"


def expr(r, depth):
    if depth <= 0:
        return r.choice([f"{atom(r)} == {atom(r)}", atom(r), "true", "false"])
    k = r.randrange(14)
    if k < 3:
        return f"{atom(r)} {r.choice(['==', '!=', '<', '<=', '>', '>='])} {atom(r)}"
    if k == 3:
        return f"{expr(r, depth - 1)} && {expr(r, depth - 1)}"
    if k == 4:
        return f"{expr(r, depth - 1)} || {expr(r, depth - 1)}"
    if k == 5:
        return f"!({expr(r, depth - 1)})"
    if k == 6:
        return f"({expr(r, depth - 1)} ? {expr(r, depth - 1)} : {expr(r, depth - 1)})"
    if k == 7:
        return f"{atom(r)} in [{', '.join(atom(r) for _ in range(r.randrange(4)))}]"
    if k == 8:
        key = r.choice(STRINGS + ["'type'", "'index'", "'memory'", "'gpu.nvidia.com'"])
        return f"{key} in {r.choice([NV, CAP, 'device.attributes'])}"
    if k == 9:
        f = r.choice(["startsWith", "endsWith", "contains"])
        return f"{atom(r)}.{f}({atom(r)})"
    if k == 10:
        return f"{atom(r)}.matches({r.choice(PATTERNS)})"
    if k == 11:
        f = r.choice(["compareTo", "isGreaterThan", "isLessThan"])
        cmp = f" {r.choice(['==', '>=', '<'])} 0" if f == "compareTo" else ""
        return f"{atom(r)}.{f}({atom(r)}){cmp}"
    if k == 12:
        return f"has({NV}.{r.choice(NAMES)})"
    return f"cel.bind(g, {NV}, g.{r.choice(NAMES)} == {atom(r)} || {expr(r, depth - 1)})"


# Random regular expressions for matches(): the RE2 → ECMAScript translation (device_cel_regex.cpp). The
# atoms are CEL string text, so a regex escape is written \\d (the CEL string holds \d).
RX_ATOMS = ["a", "b", "A", "1", "-", ".", "\\\\d", "\\\\w", "\\\\s", "\\\\S", "\\\\W", "\\\\D", "[a-c]", "[^a]",
            "[[:upper:]]", "[A-Z0-9]", "\\\\.", "\\\\-", "[]a]", "[a\\\\-]", "x", " ", "\\\\t", "[\\\\s]", "[\\\\d-]"]
RX_SUBJECTS = ["", "a", "ab", "aab", "A-1", "abc.d", "AB 12", "a\\tb", "x-y", "bbb", "1-1", "a]", "A100-SXM4", "nvidia a100"]


def regex(r, depth):
    parts = []
    for _ in range(r.randrange(1, 4)):
        k = r.randrange(10)
        if k < 6 or depth <= 0:
            a = r.choice(RX_ATOMS)
        elif k < 8:
            a = "(" + regex(r, depth - 1) + ")"
        else:
            a = "(?:" + regex(r, depth - 1) + "|" + regex(r, depth - 1) + ")"
        parts.append(a + r.choice(["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?", "{2,}?"]))
    s = "".join(parts)
    if r.random() < 0.15:
        s = "^" + s
    if r.random() < 0.15:
        s = s + "$"
    if r.random() < 0.1:
        s = "\\\\b" + s
    return s


def regex_case(r):
    pattern = ("(?i)" if r.random() < 0.15 else "") + regex(r, 2)
    return f'"{r.choice(RX_SUBJECTS)}".matches("{pattern}")'


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    out = sys.stdout
    for _ in range(count):
        expression = regex_case(r) if r.random() < 0.25 else expr(r, r.randrange(4))
        out.write(json.dumps({"expression": expression, "device": r.choice(DEVICES)},
                             ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
