#!/usr/bin/env python3
"""Holds src/ to the sizes docs/architecture.md promises: no file over 400 lines, no function over 60.

A function is found the way clang-format lays one out: a line ending in `{` whose text has a closing
parenthesis and is not a control statement, at namespace or class scope (indent 0 or 2), up to its
matching brace. Strings, character literals and comments are blanked before braces are counted.
Exceptions are named below with the reason; an exception that no longer exceeds the limit is an error too,
so the list cannot go stale.
"""
import pathlib
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60

# "path" or "path:function": why it stays longer.
EXCEPTIONS: dict[str, str] = {
    # One rule read top to bottom: its facts, its typed decision per resource, its texts and its edit. The
    # texts could move out only with a private header for the five types they read.
    "src/policy/rules/guaranteed_qos.cpp": "guaranteed-qos's facts, decision and text in one file (402 lines)",
}

CONTROL = re.compile(r"^\s*(if|for|while|switch|namespace|struct|class|enum|union|else|do|return|catch|try)\b")
OPENS_BODY = re.compile(r"^( {0,2})\S.*\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>, ]+)?\{\s*$")
NAME = re.compile(r"([\w:~]+|operator\S+)\s*\(")


def blank(line: str) -> str:
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def signature_end(lines: list[str], i: int) -> int | None:
    """The line that opens the body of a function whose signature starts on line i, or None."""
    first = blank(lines[i])
    if not re.match(r"^ {0,2}\S", first) or CONTROL.match(first) or "(" not in first:
        return None
    joined = ""
    for k in range(i, min(i + 8, len(lines))):
        joined += " " + blank(lines[k]).strip()
        if joined.rstrip().endswith(";") or joined.rstrip().endswith("}"):
            return None
        if joined.rstrip().endswith("{"):
            return k if OPENS_BODY.match(first.split("(")[0][: len(first) - len(first.lstrip())] + joined.strip()) else None
    return None


def functions(lines: list[str]):
    i = 0
    while i < len(lines):
        end = signature_end(lines, i)
        if end is not None:
            depth, j = 0, i
            while j < len(lines):
                t = blank(lines[j])
                depth += t.count("{") - t.count("}")
                if depth == 0 and j >= end:
                    break
                j += 1
            name = NAME.search(blank(lines[i]))
            yield (name.group(1) if name else lines[i].strip()), i + 1, j - i + 1
            i = j + 1
            continue
        i += 1


def main(root: pathlib.Path) -> int:
    problems, used = [], set()
    for path in sorted((root / "src").rglob("*.[ch]pp")):
        rel = path.relative_to(root).as_posix()
        lines = path.read_text().split("\n")
        if len(lines) - 1 > MAX_FILE_LINES:
            if rel in EXCEPTIONS:
                used.add(rel)
            else:
                problems.append(f"{rel}: {len(lines) - 1} lines (the limit is {MAX_FILE_LINES}); split it by what it holds")
        for name, line, length in functions(lines):
            key = f"{rel}:{name}"
            if length > MAX_FUNCTION_LINES:
                if key in EXCEPTIONS:
                    used.add(key)
                else:
                    problems.append(f"{rel}:{line}: {name} is {length} lines (the limit is {MAX_FUNCTION_LINES})")
    for key in sorted(set(EXCEPTIONS) - used):
        problems.append(f"{key}: listed as an exception but within the limits now; remove it from {__file__}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
