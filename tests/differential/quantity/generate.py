#!/usr/bin/env python3
"""Inputs for the Quantity differential test, hex-encoded, one per line, on stdout.

usage: generate.py SEED COUNT [LITERALS_HEX]

First the fixed edge cases, then every literal of apimachinery's quantity_test.go (LITERALS_HEX, from
`quantityref literals`) each followed by three mutations of it, then COUNT generated strings: structured
(signs, zero runs, digit runs, points, every suffix and invalid ones, exponents, whitespace ASCII and
Unicode, Unicode digits, NUL), near the limits (10^21, 2^63-1 with binary suffixes, long binary fractions,
60-68 characters, sub-nano rounding), character soup, and pairs of equal values spelled two ways on
consecutive lines, so that the ordering check compares close values. The same SEED gives the same inputs.
"""
import random
import sys

SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
BAD_SUFFIXES = ["K", "g", "mi", "ki", "KiB", "i", "e", "E+", "e-", "x", "Kii", "GI", "µ", "1"]
SPACES = [" ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u0085", "\u2003", "\u3000", "\u200b", "\ufeff"]
UNICODE_DIGITS = ["\u0661", "\uff11", "\u00b9", "\u2460"]
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

FIXED = [
    "", "0", "-0", "+0", "00", ".", "-", "+", "-.", "+.", ".0", "0.", "1", "1.", ".5", "-.5", "1n", "0.9n",
    "0.1n", "-0.1n", "1e-10000", "1e00003", "1E00018", "1e+3", "1e-3", "1e", "1e+", "1e--3", "1e3.5",
    "1000E", "1e21", "1e22", "999999999999999999999", "1000000000000000000000", "1000000000000000000001",
    "9223372036854775807", "9223372036854775808", "9223372036854775807Ki", "8Ei", "7.99999999999Ei",
    "869Ei", "1000000000.000000001Ki", "100000000.0000000001Ki", "26404.77771926814553Ki",
    "6.29771835970001289985144Ei", "1.6940481424424860612Gi", "1.69404814244248606000000001Gi",
    "1e4294967296", "1e-4294967296", "1e9223372036854775807", "1e9223372036854775808", "Ki", "m", "e3",
    "E00012", "1 ", " 1", "1\u00a0", "\u00851", "1\u3000", "1\x00", "\x001", "--1", "+-1", "1.2.3",
    "0x10", "1_000", "１",
]


def digits(rng, n, lead_nonzero=False):
    s = "".join(rng.choice("0123456789") for _ in range(n))
    if lead_nonzero and s:
        s = rng.choice("123456789") + s[1:]
    return s


def exponent(rng):
    sign = rng.choice(["", "", "+", "-", "-"])
    r = rng.random()
    if r < 0.6:
        mag = rng.randint(0, 30)
    elif r < 0.85:
        mag = rng.randint(0, 400)
    elif r < 0.93:
        mag = rng.randint(0, 30000)
    else:
        mag = rng.choice([2**31 - 1, 2**31, 2**32, 2**32 + 3, 2**63 - 1, 2**63, rng.randint(0, 2**40)])
    return rng.choice("eE") + sign + "0" * rng.choice([0, 0, 0, 1, 3, 6]) + str(mag)


def structured(rng):
    sign = rng.choice(["", "", "", "+", "-", "-", "--", "+-"])
    zeros = "0" * rng.choice([0, 0, 0, 1, 2, 10, 30])
    whole = digits(rng, rng.choice([0, 1, 1, 2, 3, 5, 9, 12, 18, 19, 21, 25, 36, 40, 80]))
    frac = ""
    if rng.random() < 0.45:
        frac = "." + digits(rng, rng.choice([0, 1, 2, 3, 6, 9, 10, 12, 18, 20, 30, 50]))
    if rng.random() < 0.2:
        suffix = exponent(rng)
    elif rng.random() < 0.05:
        suffix = rng.choice(BAD_SUFFIXES)
    else:
        suffix = rng.choice(SUFFIXES)
    text = sign + zeros + whole + frac + suffix
    if rng.random() < 0.04:
        pos = rng.randint(0, len(text))
        text = text[:pos] + rng.choice(UNICODE_DIGITS + ["\x00"]) + text[pos:]
    if rng.random() < 0.08:
        text = rng.choice(SPACES) + text
    if rng.random() < 0.08:
        text = text + rng.choice(SPACES)
    return text


def near_limits(rng):
    kind = rng.randint(0, 6)
    if kind == 0:  # around 10^21 units, decimal
        base = 10**21 + rng.randint(-1000, 1000)
        return str(base) if rng.random() < 0.5 else f"{base / 10**18:.{rng.randint(0, 20)}f}E"
    if kind == 1:  # around 2^63-1 units with a binary suffix
        suffix = rng.choice(list(BINARY))
        value = (2**63 - 1) >> BINARY[suffix]
        return str(value + rng.randint(-3, 3)) + (("." + digits(rng, rng.randint(1, 25))) if rng.random() < 0.5 else "") + suffix
    if kind == 2:  # long binary fractions
        return digits(rng, rng.randint(1, 12), True) + "." + digits(rng, rng.randint(10, 40)) + rng.choice(list(BINARY))
    if kind == 3:  # 60-68 characters
        n = rng.randint(60, 68)
        return ("1." + digits(rng, n - 2)) if rng.random() < 0.5 else digits(rng, n, True)[: n - 1] + "m"
    if kind == 4:  # sub-nano rounding
        return rng.choice(["", "-"]) + "0." + "0" * rng.randint(8, 12) + digits(rng, rng.randint(1, 6), True) + rng.choice(["", "n", "u", "m"])
    if kind == 5:  # whole GPU counts in many spellings
        n = rng.randint(0, 16)
        return rng.choice([str(n), f"{n}.0", f"{n}000m", f"{n}e0", f"+{n}", f"0{n}", f"{n}.", f"{n * 1000}m"])
    return str(rng.choice([2**63 - 1, 2**63, 2**64, -(2**63), 10**18, 10**19])) + rng.choice(["", "m", "n", "k"])


def soup(rng):
    return "".join(rng.choice("0123456789.+-eEkKmMGgiInuTPx \t") for _ in range(rng.randint(1, 12)))


def mutate(rng, text):
    if not text:
        return rng.choice(SUFFIXES)
    pos = rng.randrange(len(text))
    op = rng.randint(0, 3)
    if op == 0:
        return text[:pos] + text[pos + 1:]
    if op == 1:
        return text[:pos] + rng.choice("0123456789.+-eEKiMG ") + text[pos:]
    if op == 2:
        return text[:pos] + text[pos] * rng.randint(2, 5) + text[pos + 1:]
    return text + rng.choice(SUFFIXES + ["0", "1", ".5"])


def equal_pair(rng):
    """Two spellings of one value: trailing zeros, a moved point, 1024ths."""
    whole = digits(rng, rng.randint(1, 15), True)
    frac = digits(rng, rng.randint(0, 12))
    suffix = rng.choice(SUFFIXES)
    a = whole + ("." + frac if frac else "") + suffix
    b = whole + "." + frac + "0" * rng.randint(1, 20) + suffix
    return [a, b]


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    out = sys.stdout
    emit = lambda text: out.write(text.encode("utf-8", "surrogatepass").hex() + "\n")
    for text in FIXED:
        emit(text)
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            for line in f:
                text = bytes.fromhex(line.strip()).decode("utf-8", "replace")
                emit(text)
                for _ in range(3):
                    emit(mutate(rng, text))
    made = 0
    while made < count:
        r = rng.random()
        if r < 0.55:
            batch = [structured(rng)]
        elif r < 0.75:
            batch = [near_limits(rng)]
        elif r < 0.85:
            batch = equal_pair(rng)
        elif r < 0.92:
            batch = [soup(rng)]
        else:
            batch = [mutate(rng, structured(rng))]
        for text in batch:
            emit(text)
        made += len(batch)


if __name__ == "__main__":
    main()
