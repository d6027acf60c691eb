#!/usr/bin/env python3
"""Compares gpuadmit's Quantity (probe) with apimachinery's (quantityref) on the same inputs.

usage: compare.py INPUTS_HEX GPUADMIT_OUT KUBERNETES_OUT

Passes when, on every input, both accept with the same exact value and the same canonical text and order
the accepted inputs alike, or both reject, except for the differences quantity.hpp states:
  - gpuadmit rejects a string longer than 64 characters ("err long");
  - gpuadmit rejects a decimal magnitude above 10^21 units ("err range") where Kubernetes accepts it,
    including where Kubernetes truncated an exponent to 32 bits;
  - at 10^21 units and more gpuadmit writes "1000E" where Kubernetes writes "1";
  - gpuadmit rejects, in microseconds, the exponents above 20,000 that Kubernetes takes minutes on
    ("skip" on the Kubernetes side).
Prints the counts by class and up to 20 examples of each failing class; exit status 1 on any failure.
"""
import re
import sys
from collections import Counter, defaultdict

LIMIT_NANOS = 10**30  # 10^21 units
EXPONENT = re.compile(r"[eE]([+-]?)0*([0-9]+)\s*$")


def above_limit(nanos):
    digits = nanos.lstrip("-")
    return len(digits) > 31 or int(digits) > LIMIT_NANOS


def exponent_truncated(text):
    """Kubernetes keeps int32(exponent): the value differs from the string's when the exponent does not fit."""
    m = EXPONENT.search(text)
    return bool(m) and int(m.group(2)) >= 2**31


def main():
    inputs = [bytes.fromhex(l.strip()).decode("utf-8", "replace") for l in open(sys.argv[1])]
    ours = [l.split() for l in open(sys.argv[2], encoding="utf-8")]
    theirs = [l.split() for l in open(sys.argv[3], encoding="utf-8")]
    if not (len(inputs) == len(ours) == len(theirs)):
        print(f"differential: {len(inputs)} inputs, {len(ours)} gpuadmit lines, {len(theirs)} Kubernetes lines")
        return 1
    counts = Counter()
    failures = defaultdict(list)
    last_ours = last_theirs = None  # index of the last input each side accepted

    def fail(cls, i, detail):
        counts["FAIL " + cls] += 1
        if len(failures[cls]) < 20:
            failures[cls].append(f"  {inputs[i]!r}: {detail}")

    def check(i, o, k):
        text = inputs[i]
        if o[0] == "bad-canonical":
            fail("canonical does not parse back", i, " ".join(o))
            return
        if k[0] == "skip":
            counts["not compared: an exponent Kubernetes takes minutes on"] += 1
            return
        if o[0] == "err" and k[0] == "err":
            counts["both reject"] += 1
            return
        if o[0] == "ok" and k[0] == "err":
            fail("gpuadmit accepts what Kubernetes rejects", i, " ".join(o))
            return
        if o[0] == "err":
            if o[1] == "long":
                counts["stated: longer than 64 characters"] += 1
            elif o[1] == "range" and (above_limit(k[1]) or exponent_truncated(text)):
                counts["stated: above 10^21 units"] += 1
            else:
                fail("gpuadmit rejects what Kubernetes accepts", i, f"gpuadmit {o[1]}, Kubernetes {' '.join(k[1:])}")
            return
        counts["both accept"] += 1
        if o[1] != k[1]:
            if exponent_truncated(text):
                counts["stated: exponent Kubernetes truncated to 32 bits"] += 1
            else:
                fail("different value", i, f"gpuadmit {o[1]}n, Kubernetes {k[1]}n")
            return
        if o[2] != k[2]:
            if len(o[1].lstrip("-")) >= 31 and k[2].lstrip("-") == "1":
                counts["stated: 10^21 units and more written with E"] += 1
            else:
                fail("different canonical text", i, f"gpuadmit {o[2]}, Kubernetes {k[2]}")
        if last_ours is not None and last_ours == last_theirs:
            counts["order checks"] += 1
            if o[3] != k[3]:
                fail("different order", i, f"against {inputs[last_ours]!r}: gpuadmit {o[3]}, Kubernetes {k[3]}")

    for i, (o, k) in enumerate(zip(ours, theirs)):
        check(i, o, k)
        if o[0] == "ok":
            last_ours = i
        if k[0] == "ok":
            last_theirs = i
    for name, n in sorted(counts.items()):
        print(f"differential: {n:8d} {name}")
    for cls, examples in failures.items():
        print(f"differential: FAIL {cls}, e.g.:")
        print("\n".join(examples))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
