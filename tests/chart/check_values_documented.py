#!/usr/bin/env python3
"""Every key of values.yaml has a comment line right above it (or, for list items' keys, the list has
one) and a description in values.schema.json; every schema property exists in values.yaml.
Usage: check_values_documented.py CHART_DIR"""
import json
import re
import sys
import yaml

chart = sys.argv[1]
lines = open(f"{chart}/values.yaml").read().splitlines()
values = yaml.safe_load("\n".join(lines))
schema = json.load(open(f"{chart}/values.schema.json"))
problems = []

def in_list_item(i, indent):
    """Whether line i, a key at `indent`, belongs to a list item ("- key: ..." above it at indent - 2)."""
    for j in range(i - 1, -1, -1):
        text = lines[j]
        if not text.strip() or text.strip().startswith("#"):
            continue
        at = len(text) - len(text.lstrip())
        if re.match(r"^\s*-\s", text) and at + 2 == indent:
            return True
        if at < indent:
            return False
    return False


# 1. A comment directly above each mapping key line (nested keys may share their block's comment
#    when they are one-line flow maps; list items inherit the list's comment).
for i, line in enumerate(lines):
    m = re.match(r"^(\s*)([A-Za-z][A-Za-z0-9]*):", line)
    if not m:
        continue
    prev = lines[i - 1].strip() if i > 0 else ""
    if prev.startswith("#"):
        continue
    # A key that opens a block (value on following lines) and whose first child is commented is a
    # section header: its children carry the documentation.
    if line.rstrip().endswith(":") and i + 1 < len(lines) and lines[i + 1].strip().startswith("#"):
        continue
    # keys inside list items (webhooks.workloads entries) are documented by the list.
    if re.match(r"^\s*-\s", line) or in_list_item(i, len(m.group(1))):
        continue
    problems.append(f"values.yaml:{i + 1}: key '{m.group(2)}' has no comment above it")


def walk(v, s, path):
    if s.get("type") != "object" or "properties" not in s:
        return
    if s.get("additionalProperties") is not False:
        problems.append(f"schema {path or '(root)'}: additionalProperties must be false")
    for k, sub in s["properties"].items():
        p = f"{path}.{k}" if path else k
        if not sub.get("description"):
            problems.append(f"schema {p}: no description")
        # (an empty object in values.yaml, e.g. issuerRef or objectSelector, is optional: its keys need not be there)
        if isinstance(v, dict) and v and k not in v and k != "global":
            problems.append(f"schema {p}: not in values.yaml")
        walk(v.get(k) if isinstance(v, dict) else None, sub, p)
    if isinstance(v, dict):
        for k in v:
            if k not in s["properties"]:
                problems.append(f"values.yaml {path}.{k}: not in the schema")


walk(values, schema, "")
walk(None, schema["properties"]["webhooks"]["properties"]["workloads"]["items"], "webhooks.workloads[]")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
