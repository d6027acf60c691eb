#!/usr/bin/env python3
"""Compares gpuadmit's outcomes (probe) with Kubernetes' (dracelref) for the same cases.

Passes when, for every case gpuadmit evaluates, both agree: the same match result; the same evaluation error
message, exactly; a compile error where Kubernetes has one (compile messages are not compared: cel-go's
carry a source excerpt).
"not evaluated" is never a disagreement (the caller never acts on it); it is counted and, with -v, listed.
"""
import json
import sys


def main():
    verbose = "-v" in sys.argv
    args = [a for a in sys.argv[1:] if a != "-v"]
    cases, ours, theirs = (open(p, encoding="utf-8").read().splitlines() for p in args)
    if not (len(cases) == len(ours) == len(theirs)):
        print(f"line counts differ: {len(cases)} cases, {len(ours)} gpuadmit, {len(theirs)} kubernetes")
        return 1
    counts = {}
    bad = []
    for case, o, t in zip(cases, ours, theirs):
        c, o, t = json.loads(case), json.loads(o), json.loads(t)
        if "not_evaluated" in o:
            kind = "not evaluated"
            if verbose:
                print(f"NOT EVALUATED {c['expression']!r}: {o['not_evaluated']} | kubernetes: {t}")
        elif "compile_error" in t:
            kind = "compile error" if "compile_error" in o else "DISAGREE"
        elif "error" in t:
            kind = "error" if o.get("error") == t["error"] else "DISAGREE"
        else:
            kind = "result" if o.get("result") == t.get("result") and "result" in o else "DISAGREE"
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "DISAGREE":
            bad.append((c, o, t))
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    for c, o, t in bad[:40]:
        print(f"DISAGREE {c['expression']!r} on driver {c['device'].get('driver')!r}:\n  gpuadmit:   {o}\n  kubernetes: {t}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
