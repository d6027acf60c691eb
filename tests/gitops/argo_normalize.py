"""Argo CD's normalization for ignoreDifferences, as check_diff_rules.py uses it: YAML and the doc's
blocks, RFC 6902/6901, Argo CD's group/kind globs, gojq, and the comparison after normalization."""

import copy
import json
import re
import subprocess

import yaml


# --------------------------------------------------------------------------------------------------------
# YAML: PyYAML's safe loader without the timestamp resolver (dates stay strings, as in JSON).


class Loader(yaml.SafeLoader):
    pass


Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_sources(path, text):
    """{"path:line": object} for each document (and each item of a List), keyed as gpuadmit's `source`."""
    out = {}
    loader = Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            obj = loader.construct_document(node)
            if not isinstance(obj, dict):
                continue
            out["%s:%d" % (path, node.start_mark.line + 1)] = obj
            if isinstance(node, yaml.MappingNode) and str(obj.get("kind", "")).endswith("List"):
                for k, v in node.value:
                    if k.value == "items" and isinstance(v, yaml.SequenceNode):
                        for item_node, item in zip(v.value, obj.get("items") or []):
                            if isinstance(item, dict):
                                out["%s:%d" % (path, item_node.start_mark.line + 1)] = item
    finally:
        loader.dispose()
    return out


def doc_blocks(doc_text):
    """{name: parsed YAML} of the fenced blocks whose first line is `# gitops-test: NAME`."""
    blocks = {}
    for m in re.finditer(r"^```ya?ml\n(.*?)^```", doc_text, re.S | re.M):
        body = m.group(1)
        first = body.split("\n", 1)[0].strip()
        mm = re.match(r"#\s*gitops-test:\s*(\S+)\s*$", first)
        if mm:
            if mm.group(1) in blocks:
                raise SystemExit("docs/gitops.md: two blocks named %s" % mm.group(1))
            docs = [d for d in yaml.load_all(body, Loader=Loader) if isinstance(d, dict)]
            blocks[mm.group(1)] = docs[0] if len(docs) == 1 else docs
    return blocks


# --------------------------------------------------------------------------------------------------------
# RFC 6902 add/replace/remove and RFC 6901 pointers (what gpuadmit's patches and Argo CD's jsonPointers use).


def unescape(tok):
    return tok.replace("~1", "/").replace("~0", "~")


def split_pointer(ptr):
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise ValueError("not a JSON pointer: %r" % ptr)
    return [unescape(t) for t in ptr[1:].split("/")]


def _parent(doc, toks):
    cur = doc
    for t in toks[:-1]:
        if isinstance(cur, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", t) or int(t) >= len(cur):
                raise KeyError(t)
            cur = cur[int(t)]
        elif isinstance(cur, dict):
            cur = cur[t]
        else:
            raise KeyError(t)
    return cur


def apply_patch(doc, patch):
    doc = copy.deepcopy(doc)
    for op in patch:
        toks = split_pointer(op["path"])
        if not toks:
            if op["op"] in ("add", "replace"):
                doc = copy.deepcopy(op["value"])
                continue
            raise ValueError("unsupported root op %r" % op)
        parent, last = _parent(doc, toks), toks[-1]
        kind = op["op"]
        if kind == "add":
            if isinstance(parent, list):
                if last == "-":
                    parent.append(copy.deepcopy(op["value"]))
                else:
                    i = int(last)
                    if i > len(parent):
                        raise KeyError(op["path"])
                    parent.insert(i, copy.deepcopy(op["value"]))
            elif isinstance(parent, dict):
                parent[last] = copy.deepcopy(op["value"])
            else:
                raise KeyError(op["path"])
        elif kind == "replace":
            if isinstance(parent, list):
                parent[int(last)] = copy.deepcopy(op["value"])
            else:
                if last not in parent:
                    raise KeyError(op["path"])
                parent[last] = copy.deepcopy(op["value"])
        elif kind == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        else:
            raise ValueError("unsupported op %r (gpuadmit writes add, replace and remove)" % kind)
    return doc


def remove_pointer(doc, ptr):
    """Argo CD's jsonPointers entry: a JSON Patch `remove`; a missing path leaves the document unchanged."""
    toks = split_pointer(ptr)
    if not toks:
        return doc
    try:
        parent = _parent(doc, toks)
        if isinstance(parent, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", toks[-1]) or int(toks[-1]) >= len(parent):
                return doc
            del parent[int(toks[-1])]
        elif isinstance(parent, dict) and toks[-1] in parent:
            del parent[toks[-1]]
    except (KeyError, ValueError, TypeError):
        pass
    return doc


# --------------------------------------------------------------------------------------------------------
# Argo CD's matching: group and kind are globs (util/glob, gobwas/glob without separators), name and
# namespace exact when set.


def glob_regex(pattern):
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "{":
            j = pattern.find("}", i)
            if j < 0:
                out.append(re.escape(c))
            else:
                out.append("(?:" + "|".join(glob_regex(a) for a in pattern[i + 1:j].split(",")) + ")")
                i = j
        elif c == "[":
            j = pattern.find("]", i)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_match(pattern, text):
    return re.fullmatch(glob_regex(pattern or ""), text or "") is not None


def group_of(obj):
    api = str(obj.get("apiVersion", ""))
    return api.rsplit("/", 1)[0] if "/" in api else ""


def entry_matches(entry, obj):
    meta = obj.get("metadata") or {}
    return (glob_match(entry.get("group", ""), group_of(obj))
            and glob_match(entry.get("kind", ""), str(obj.get("kind", "")))
            and (not entry.get("name") or entry["name"] == meta.get("name"))
            and (not entry.get("namespace") or entry["namespace"] == meta.get("namespace")))


class Gojq:
    def __init__(self, binary):
        self.binary = binary
        self.calls = 0
        self.cache = {}

    def compile_check(self, expr):
        r = subprocess.run([self.binary, "-n", "del(%s)" % expr], capture_output=True, text=True)
        if r.returncode == 3:  # gojq's exit status for a query that does not compile
            raise SystemExit("jqPathExpression does not compile: %s\n%s" % (expr, r.stderr.strip()))

    def delete(self, expr, docs):
        """del(EXPR) on each doc, as Argo CD's jqNormalizerPatch.Apply: an error, or not exactly one output,
        leaves the doc unchanged. One gojq process for the batch."""
        out = [None] * len(docs)
        todo, keys = [], []
        for i, d in enumerate(docs):
            k = (expr, json.dumps(d, sort_keys=True))
            if k in self.cache:
                out[i] = json.loads(self.cache[k])
            else:
                todo.append(i)
                keys.append(k)
        if todo:
            prog = ('try ([del(%s)] | if length == 1 then {ok: .[0]} else {err: "\\(length) outputs"} end) '
                    'catch {err: .}') % expr
            stdin = "".join(keys[j][1] + "\n" for j in range(len(todo)))
            r = subprocess.run([self.binary, "-c", prog], input=stdin, capture_output=True, text=True)
            self.calls += 1
            lines = r.stdout.splitlines()
            if r.returncode != 0 or len(lines) != len(todo):
                raise SystemExit("gojq failed on %s (exit %d): %s" % (expr, r.returncode, r.stderr.strip()))
            for j, line in enumerate(lines):
                res = json.loads(line)
                val = res["ok"] if "ok" in res else json.loads(keys[j][1])
                self.cache[keys[j]] = json.dumps(val, sort_keys=True)
                out[todo[j]] = val
        return out


def patches_of(ignore):
    """Argo CD's order: per ignoreDifferences entry, its jsonPointers, then its jqPathExpressions."""
    out = []
    for e in ignore:
        for p in e.get("jsonPointers") or []:
            out.append((e, "ptr", p))
        for x in e.get("jqPathExpressions") or []:
            out.append((e, "jq", x))
    return out


def normalize_all(docs, ignore, jq):
    """The docs normalized by the ignoreDifferences list; one gojq call per distinct expression and step."""
    docs = [copy.deepcopy(d) for d in docs]
    plist = patches_of(ignore)
    seqs = [[(kind, val) for e, kind, val in plist if entry_matches(e, d)] for d in docs]
    step = 0
    while True:
        groups = {}
        for i, seq in enumerate(seqs):
            if step < len(seq):
                groups.setdefault(seq[step], []).append(i)
        if not groups:
            break
        for (kind, val), idx in groups.items():
            if kind == "ptr":
                for i in idx:
                    docs[i] = remove_pointer(docs[i], val)
            else:
                for i, d in zip(idx, jq.delete(val, [docs[i] for i in idx])):
                    docs[i] = d
        step += 1
    return [prune(d) for d in docs]


def vacuous(v):
    if isinstance(v, dict):
        return all(vacuous(x) for x in v.values())
    if isinstance(v, list):
        return all(vacuous(x) for x in v)
    return False


def prune(v):
    if isinstance(v, dict):
        return {k: prune(x) for k, x in v.items() if not vacuous(x)}
    if isinstance(v, list):
        return [prune(x) for x in v]
    return v


def canon(v):
    """Comparable form: quantities and numbers as strings (the API server stores "1" for 1)."""
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [canon(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return str(int(v)) if float(v).is_integer() else str(v)
    return v


def diff_paths(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            p = path + "/" + str(k).replace("~", "~0").replace("/", "~1")
            if k not in a:
                out.append(p + " (only in live)")
            elif k not in b:
                out.append(p + " (only in desired)")
            else:
                out += diff_paths(a[k], b[k], p)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff_paths(x, y, "%s/%d" % (path, i))
        return out
    return [] if a == b else [path or "/"]


def norm_path(p):
    return re.sub(r"/\d+(?=/|$)", "/*", p)
