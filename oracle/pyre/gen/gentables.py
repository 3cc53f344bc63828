#!/usr/bin/env python3
"""Generate the Unicode data oracle/pyre needs, from CPython 3.11 itself.

Run with CPython 3.11 (the version solopi matches), from anywhere:

    python3 oracle/pyre/gen/gentables.py      (or go generate ./oracle/pyre)

It writes oracle/pyre/tables_gen.go (character classes and case mappings as
sre uses them) and oracle/pyre/names.txt.gz (the names \\N{...} accepts).
Every table is read from the running interpreter: \\w, \\d and \\s are what
re.fullmatch answers for each code point, case folding is _sre's own
unicode_tolower / unicode_iscased, upper case is the first character of
str.upper() (= _PyUnicode_ToUppercase, which sre uses for RANGE_UNI_IGNORE),
the extra case equivalences are re._casefix, identifiers are
str.isidentifier(), names are unicodedata.name(). Name aliases are taken
from Perl's unicore/Name.pl as candidates and each is kept only when
unicodedata.lookup resolves it to one character.
"""
import gzip
import os
import re
import sys
import unicodedata

import _sre
from re import _casefix

if sys.version_info[:2] != (3, 11):
    sys.exit("run with CPython 3.11 (found %s)" % sys.version.split()[0])

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
PERL_NAMES = "/usr/share/perl/5.36.0/unicore/Name.pl"
MAX = 0x110000


def ranges(pred):
    out, start = [], None
    for c in range(MAX):
        if pred(c):
            if start is None:
                start = c
        elif start is not None:
            out.append((start, c - 1))
            start = None
    if start is not None:
        out.append((start, MAX - 1))
    return out


def case_runs(mapping):
    """Compress c -> m(c) (only where they differ) into (lo, hi, stride, delta)."""
    pairs = sorted((c, m) for c, m in mapping.items() if c != m)
    runs = []
    i = 0
    while i < len(pairs):
        lo, m = pairs[i]
        delta = m - lo
        best = (lo, lo, 1, delta, i + 1)
        for stride in (1, 2):
            j, c = i + 1, lo
            while j < len(pairs) and pairs[j][0] == c + stride and pairs[j][1] - pairs[j][0] == delta:
                c += stride
                j += 1
            if j > best[4]:
                best = (lo, c, stride, delta, j)
        runs.append(best[:4])
        i = best[4]
    return runs


def fmt_ranges(name, doc, rs):
    nums = [v for r in rs for v in r]
    return fmt_list(name, doc, nums, 20)


def fmt_list(name, doc, nums, per):
    lines = ["// %s" % doc, "var %s = []rune{" % name]
    for i in range(0, len(nums), per):
        lines.append("\t" + " ".join(("-0x%x," % -v) if v < 0 else ("0x%x," % v) for v in nums[i:i + per]))
    lines.append("}")
    return "\n".join(lines) + "\n"


def word(c):
    return re.fullmatch(r"\w", chr(c)) is not None


def main():
    tables = []
    tables.append(fmt_ranges("wordRanges", r"wordRanges: code points \w matches (Unicode), as lo, hi pairs.", ranges(word)))
    tables.append(fmt_ranges("digitRanges", r"digitRanges: code points \d matches (Unicode: Nd), as lo, hi pairs.",
                             ranges(lambda c: re.fullmatch(r"\d", chr(c)) is not None)))
    tables.append(fmt_ranges("spaceRanges", r"spaceRanges: code points \s matches (Unicode), as lo, hi pairs.",
                             ranges(lambda c: re.fullmatch(r"\s", chr(c)) is not None)))
    tables.append(fmt_ranges("printableRanges", "printableRanges: code points str.isprintable() accepts (repr() leaves them unescaped).",
                             ranges(lambda c: chr(c).isprintable())))
    tables.append(fmt_ranges("alphaRanges", "alphaRanges: code points str.isalpha() accepts.",
                             ranges(lambda c: chr(c).isalpha())))
    tables.append(fmt_ranges("casedRanges", "casedRanges: code points _sre.unicode_iscased accepts, as lo, hi pairs.",
                             ranges(_sre.unicode_iscased)))
    tables.append(fmt_ranges("identStartRanges", "identStartRanges: code points that may start a Python identifier.",
                             ranges(lambda c: chr(c).isidentifier())))
    tables.append(fmt_ranges("identContinueRanges", "identContinueRanges: code points that may continue a Python identifier.",
                             ranges(lambda c: ("a" + chr(c)).isidentifier())))
    lower = {c: _sre.unicode_tolower(c) for c in range(MAX)}
    upper = {c: ord(chr(c).upper()[0]) for c in range(MAX)}
    for c in range(MAX):
        # The emitter relies on these: case maps stay within their plane
        # half (BMP or not), as sre's charset compiler assumes.
        assert (c < 0x10000) == (lower[c] < 0x10000) == (upper[c] < 0x10000), hex(c)
    tables.append(fmt_list("lowerRuns", "lowerRuns: _sre.unicode_tolower as lo, hi, stride, delta runs.",
                           [v for r in case_runs(lower) for v in (r[0], r[1], r[2], r[3])], 16))
    tables.append(fmt_list("upperRuns", "upperRuns: the first character of str.upper() as lo, hi, stride, delta runs.",
                           [v for r in case_runs(upper) for v in (r[0], r[1], r[2], r[3])], 16))
    extra = []
    for k in sorted(_casefix._EXTRA_CASES):
        vs = _casefix._EXTRA_CASES[k]
        extra += [k, len(vs)] + list(vs)
    tables.append(fmt_list("extraCases", "extraCases: re._casefix._EXTRA_CASES as key, n, n values.", extra, 16))
    zeros = [c for c in range(MAX) if unicodedata.decimal(chr(c), None) == 0]
    for c in range(MAX):
        d = unicodedata.decimal(chr(c), None)
        if d is not None:
            assert any(z <= c < z + 10 and c - z == d for z in zeros), hex(c)
        assert (d is not None) == (re.fullmatch(r"\d", chr(c)) is not None), hex(c)
    tables.append(fmt_list("decimalZeros", "decimalZeros: the digit zero of every run of ten decimal digits (int() reads them).", zeros, 16))
    cjk = ranges(lambda c: unicodedata.name(chr(c), "").startswith("CJK UNIFIED IDEOGRAPH-"))
    tables.append(fmt_ranges("unifiedIdeographs", "unifiedIdeographs: the ranges named CJK UNIFIED IDEOGRAPH-<hex> algorithmically.", cjk))

    header = ("// Code generated by oracle/pyre/gen/gentables.py from CPython %s (unicodedata %s); DO NOT EDIT.\n\n"
              "package pyre\n\n") % (sys.version.split()[0], unicodedata.unidata_version)
    with open(os.path.join(OUT, "tables_gen.go"), "w") as f:
        f.write(header + "\n".join(tables))

    # Names: "HEX NAME" for explicit names, "HEX-HEX PREFIX" for names that
    # are PREFIX + the code point in hex, aliases as explicit names.
    lines = ["# \\N{...} names of CPython %s unicodedata %s (generated by gen/gentables.py)" % (
        sys.version.split()[0], unicodedata.unidata_version)]
    prefixed = {}
    for c in range(MAX):
        n = unicodedata.name(chr(c), None)
        if n is None or n.startswith("CJK UNIFIED IDEOGRAPH-") or n.startswith("HANGUL SYLLABLE "):
            continue
        m = re.fullmatch(r"(.*-)([0-9A-F]{4,6})", n)
        if m and m.group(2) == "%04X" % c:
            prefixed.setdefault(m.group(1), []).append(c)
            continue
        lines.append("%X %s" % (c, n))
    for prefix, cs in sorted(prefixed.items()):
        start = prev = cs[0]
        for c in cs[1:] + [None]:
            if c is not None and c == prev + 1:
                prev = c
                continue
            lines.append("%X-%X %s" % (start, prev, prefix))
            start = prev = c
    aliases = 0
    with open(PERL_NAMES) as f:
        body = f.read().split("return <<'END';\n", 1)[1].split("\nEND\n", 1)[0]
    for entry in body.split("\n\n"):
        parts = entry.strip().split("\n")
        if len(parts) != 2 or " " in parts[0]:
            continue
        c, name = int(parts[0], 16), parts[1]
        if name == unicodedata.name(chr(c), None):
            continue
        try:
            got = unicodedata.lookup(name)
        except KeyError:
            continue
        if got == chr(c):
            lines.append("%X %s" % (c, name))
            aliases += 1
    # mtime=0 keeps the file byte-identical across runs.
    with open(os.path.join(OUT, "names.txt.gz"), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as f:
            f.write(("\n".join(lines) + "\n").encode("ascii"))
    print("names: %d lines, %d aliases" % (len(lines), aliases))


main()
