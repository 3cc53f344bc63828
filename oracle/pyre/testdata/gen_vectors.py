#!/usr/bin/env python3
"""Generate testdata/vectors.json.gz: what CPython 3.11's re says.

    python3 oracle/pyre/testdata/gen_vectors.py

Three suites, each a list of patterns searched in its own texts. For every
pattern: whether re.compile accepts it (else the exception's class and
str()), and for every text the span of re.search(pattern, text) (or null).
"unicode" is hand-picked edge cases, systematic combinations (every escape,
set members alone and pairwise, flags, anchors, quantifiers, look-arounds,
backreferences, conditionals, group names, case folding) and seeded random
patterns, on texts with the characters where definitions disagree (², ½,
Ⅻ, combining marks, U+001C-U+001F, U+0085, U+00A0, U+2028, ı, İ, ſ, K,
ß, sigma forms, emoji, pairs for case-insensitive backreferences);
"backtracking" is random patterns over a and b (groups, references,
conditionals, look-arounds, atomic groups, every quantifier) on every
string of a and b up to length 5; "mixed" mixes every kind of item.
"charsets" lists, for one-character patterns, every code point re.fullmatch
accepts. The file records the Python version that produced it.
"""
import gzip
import json
import os
import random
import re
import sys
import warnings

if sys.version_info[:2] != (3, 11):
    sys.exit("run with CPython 3.11 (found %s)" % sys.version.split()[0])
warnings.simplefilter("ignore")

TEXTS = [
    "", "a", "A", "b", "abc", "ABC", "aBc", "123", "1", "a1", "_", " ", "\t", "\n", "a\n", "\na",
    "a\nb", "\n\n", "abc\n", "x\r\ny", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85",
    "\xa0", "\u2028", "\u2029", "\u3000", "\u200b", "\ufeff", "\u180e", "²", "½", "Ⅻ", "ⅻ", "٣", "१२३", "①",
    "e\u0301", "\u0301", "a\u0308b", "ı", "İ", "i", "I", "ſ", "s", "S", "\u212a", "k", "K", "ß", "ẞ",
    "SS", "σ", "ς", "Σ", "ΣΑΣ", "µ", "μ", "Μ", "ǅ", "ǆ", "Ǆ", "ﬅ", "ﬆ", "ΐ", "\u1fd3", "ι", "\u0345",
    "\u1fbe", "𐐀", "𐐨", "😀", "a😀b", "👍🏽", "é", "É", "café", "CAFÉ", "hello world", "Hello, World!",
    "foo.bar", "a-b_c", "[[:alpha:]]", "]", "[", "\\", "a{2}", "{", "}", "$", "^", "aaa", "aaaa", "ab",
    "aab", "abab", "ba", "xyz", "2024-01-31", "user@example.com", "Counting", "中文", "한국어", "\x00",
    "a\x00b", "\U0010ffff", "\ue000", "Ω", "\u2126", "ω", "\u212b", "å", "Ⓐ", "𝐀", "ǈ", "—", "\x7f",
    # Pairs for case-insensitive backreferences.
    "sſ", "ſs", "sS", "kK", "k\u212a", "\u212ak", "iI", "iİ", "ıI", "İi", "σς", "ςΣ", "ßẞ", "éÉ", "µμ",
    "aA", "Aa", "ǅǆ", "𐐀𐐨", "ΩΩ", "ω\u2126",
]


def hand_picked():
    p = [
        r"^[^\W\d_]+$", r"[\W\d]", r"[\d\W]", r"\w", r"\W", r"\b", r"\B", r"\s", r"\S", r"\d", r"\D",
        r"[[:alpha:]]", r"(?i)ı", r"(?i)İ", r"(?i)i", r"(?i)I", r"(?i)s", r"(?i)ſ", r"(?i)k", r"(?i)K",
        "(?i)\u212a", r"(?i)ß", r"(?i)ẞ", r"(?i)σ", r"(?i)ς", r"(?i)Σ", r"a*+", r"\N{EM DASH}", r"(?a)\w",
        r"x(?i)y", r"(?<=a+)b", r"\400", r"[\d-z]", r"(?P<n>a)(?P<n>b)", r"\1(a)", r"(?P<1>a)", r"^*",
        r"(?>a+)b", r"(?>a*)a", r"a++a", r"a?+a", r"a{1,2}+a", r"(a)(?(1)b|c)", r"(?(1)a|b)(a)",
        r"(?P<d>\d)(?P=d)", r"(?<=a)b", r"(?<!a)b", r"^\d+$", r"^\d+\Z", r"a{,2}c", r"x{,2}", r"[]a]+",
        r"[^]]", r"\U0001F600", r"\u0041", r"(?i)hello", r"\bword\b", r"(a)|b\1", r"\w+", r"colou?r",
        r"\$1", r"(?x) a b # c", r"(?s)a.b", r"a.b", r"^$", r"$", r"^", r"\A\Z", r"(?m)^$", r"(?m)^a$",
        r"^a$", r"a$", r"a\Z", r"\Aa", r"(?m)a$", r"(?m)^a", r"\n$", r"(?m)\n$", r"^\n", r"(?m)^\n",
        r"(?<n>a)", r"(?'n'a)", r"\z", r"\p{L}", r"\e", r"(", r"[a", r"a**", r"\k<n>", "\\", r"\U0001F60",
        r"[\Z]", r"\N{DIGIT ONE}", r"\N{digit one}", r"\N{CJK UNIFIED IDEOGRAPH-4E2D}",
        r"\N{CJK UNIFIED IDEOGRAPH-4e2d}", r"\N{HANGUL SYLLABLE HAN}", r"\N{LATIN CAPITAL LETTER GHA}",
        r"\N{BEL}", r"\N{NULL}", r"\N{KEYCAP NUMBER SIGN}", r"\N{EM DASH", r"\N", r"\N{}", r"[\N{EM DASH}]",
        r"\N{CJK COMPATIBILITY IDEOGRAPH-F900}", r"\N{cjk compatibility ideograph-f900}",
        r"\N{GRINNING FACE}", r"\N{TANGUT IDEOGRAPH-17000}", r"\N{BYTE ORDER MARK}",
        r"[\w--]", r"[a-]", r"[-a]", r"[a-\d]", r"[\w-a]", r"[z-a]", r"[\x00-\x7f]", r"[^\x00-\x7f]",
        r"\x4", r"\x41", r"\u004", r"\U00110000", r"\U0010FFFF", r"\0", r"\01", r"\012", r"\0123", r"\08",
        r"\377", r"\378", r"\1", r"\12", r"(a)\12", r"(a)\18", r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\10",
        r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\11", r"[\1]", r"[\0]", r"[\08]", r"[\777]", r"[\8]", r"[\b]",
        r"\b", r"[\B]", r"[\A]", r"[\z]",
        r"(?u)\w", r"(?a)(?u)\w", r"(?u)(?a)\w", r"(?au)\w", r"(?L)\w", r"(?a:\w)", r"(?u:\w)", r"(?a)(?u:\w)",
        r"(?i)(?a)K", r"(?ai)\u212a", r"(?i)[a-z]", r"(?ai)[a-z]", r"(?i)[^a-z]", r"(?i)[k]", r"(?i)[^k]",
        r"(?t)a", r"(?t)a*", r"(?t)a+?", r"(?t)a*+", r"(?t:a)", r"(?-t:a)", r"(?T)a", r"(?i-i:a)", r"(?-i:a)",
        r"(?i)(?-i:a)", r"(?i:a)A", r"(?x: a )b c", r"(?-x: a )", r"(?x)(?-x: a )", r"(?x)[ ]", r"(?x)\ ",
        r"(?x)a#b", r"(?x)a #b\nc", "(?x)a #b\nc", r"(?#x)a", r"(?#x", r"(?#x)(?i)a", r"(?x) (?i)a",
        r"a|(?i)b", r"(?i)a|(?m)b", r"(?i)(?m)a", r"(?im)a", r"(?i)", r"()", r"(?:)", r"(|)", r"a|",
        r"|a", r"|", r"a||b", r"(?P=n)", r"(?P<n>a)(?P=n)", r"(?P<n>a(?P=n))", r"(?P<n>)(?P=m)",
        r"(?P<n>a)(?P=n", r"(?Px)", r"(?P", r"(?", r"(?<", r"(?<x", r"(?<=", r"(?i", r"(?-", r"(?i-",
        r"(?i-:a)", r"(?ß)a", r"(?i1)a", r"(?\i)a", r"(?-\i:a)", r"(?-ß:a)", r"(?i-s", r"(?i-s:",
        r"(?(", r"(?()a)", r"(?(1", r"(?(1)", r"(?(1)a", r"(a)(?(1)a|b|c)", r"(?(0)a)", r"(?(-1)a)",
        r"(?(+1)a)(a)", r"(?( 1 )a)(a)", r"(?(1_0)a)", r"(?(01)a)(a)", r"(?(a)b)", r"(?P<a>x)(?(a)b|c)",
        r"(?P<a>x)?(?(a)b|c)", r"(?(1)a)", r"(?(1)a)(b)", r"(?<=(a))(?(1)b)", r"(?<=(?(1)a|b))(c)",
        r"(a)(?<=(?(1)a|b))", r"(a)(?<=(?(1)a|bc))", r"(?<=(?(1)a))", r"(?<=\1)(a)", r"(a)(?<=\1)b",
        r"(?<=(a)\1)", r"(?<=(?P<n>a)(?P=n))", r"(?<=a|b)c", r"(?<=ab|cd)e", r"(?<=a|bc)d", r"(?<=a{2})b",
        r"(?<=a{1,2})b", r"(?<=(?:ab){3})c", r"(?<=\b)a", r"(?<=^)a", r"(?<=$)", r"(?<=(?=a))a",
        r"(?<=a(?=b))b", r"(?<!^)a", r"(?<!\b)a", r"(?<=.)", r"(?<!.)", r"(?<=\w)\b", r"(?<=x{0})a",
        r"(?<=(?:a{1000}){1000}){0}", r"(?<=(?:a{100000}){100000})x", r"(?<=a*){0}", r"(?<=[ab])c",
        r"(?<=\d\d)x", r"(?<!\d\d)x", r"(?=a)*", r"(?=a)+b", r"(?!a)*", r"(?:^)*", r"(?:$)+", r"(?:\b)*",
        r"\b*", r"\B+", r"\A?", r"\Z{2}", r"$*", r"{1}", r"a{}", r"a{", r"a{1", r"a{1,", r"a{,", r"a{,}",
        r"a{1,2", r"a{2,1}", r"a{1}{2}", r"a*{2}", r"a{1}*", r"a{ 1}", r"a{1 }", r"a{1, 2}", r"a{-1}",
        r"a{4294967294}", r"a{4294967295}", r"a{0,4294967294}", r"a{0,4294967295}",
        r"a{2147483647}", r"a{2147483646}", r"a{0,2147483647}",
        "a{" + "9" * 5000 + "}", "a{" + "0" * 4301 + "1}", "a{" + "0" * 4299 + "1}",
        "(?(" + "1" * 4400 + ")a)", r"a??", r"a+?", r"a*?", r"a{1,3}?", r"a{2}?", r"a??b", r"a*?b",
        r"a+?b", r"(a|ab)(c|bcd)(d*)", r"(a+)+b", r"(a|b)*?c", r"(?:a|b)+?", r"(a*)*", r"(a*)+", r"(a|)*",
        r"(?:a*)*b", r"(a*)\1", r"(a*)+\1", r"(a|b)*\1", r"(?:(a)|b)*\1", r"(?:(a)|b)+\1", r"(a)|\1",
        r"((a)|b)+\2", r"(a(?(1)b|c))+", r"(?:(a)(?(1)b|c))+", r"((?(1)b|a))+", r"(a)?(?(1)b|c)+",
        r"(?i)(s)\1", r"(?i)(ſ)\1", r"(?i)(k)\1", "(?i)(\u212a)\\1", r"(?i)(ß)\1", r"(?i)(σ)\1",
        r"(?i)(ı)\1", r"(?i)(İ)\1", r"(?i)(a)\1", r"(?ai)(a)\1", r"(?i)(é)\1",
        r"[[]", r"[]]", r"[]", r"[^]", r"[^]a]", r"[\]]", r"[\[]", r"[a-a]", r"[--a]", r"[a--]", r"[&&]",
        r"[~~]", r"[||]", r"[a&&b]", r"[a|]", r"[\x]", r"[\u12]", r"[\U0001F60]", r"[\N{EM DASH]",
        r"[\N]", r"[\d-]", r"[-\d]", r"[\w-\d]", r"[\s-\S]", r"[a-\x7f]", r"[\x00-\U0010ffff]",
        r"[^\x00-\U0010ffff]", r"[\s\S]", r"[^\s\S]", r"[\d\D]", r"[\w\W]", r"[^\w\W]",
        r"\Q", r"\E", r"\G", r"\K", r"\R", r"\X", r"\C", r"\h", r"\H", r"\l", r"\L", r"\o", r"\y",
        r"\g<1>", r"\c", r"\i", r"\j", r"\m", r"\q", r"\-", r"\ ", r"\#", r"\é", r"\😀", r"\\",
        r"\.", r"\*", r"\(", r"\)", r"\[", r"\]", r"\{", r"\}", r"\|", r"\^", r"\$", r"\?", r"\+",
        r"(?P<é>a)", r"(?P<a1>a)", r"(?P<_>a)", r"(?P<1a>a)", r"(?P<a-b>a)", r"(?P<>a)", r"(?P<a", r"(?P<a>",
        r"(?P<a b>x)", r"(?P<ª>x)", r"(?P<℘>x)", r"(?P<a·>x)", r"(?P<·a>x)", r"(?P<𝐀>x)", r"(?P<a\>b>x)",
        r"(?P<Ⅻ>x)", r"(?P<a²>x)", r"(?P<a١>x)", r"(?P<١>x)", "(?P<a\u0301>x)", "(?P<\u0301>x)",
        r"a)", r"(a", r"((a)", r"(a))", r")", r"(?:a", r"(?=a", r"(?<=a", r"(?>a", r"(?i:a",
        r"(?P<n>a", r"(?:(?:(?:a)))", r"(((((a)))))\5",
        "(" * 100 + "a" + ")" * 100, "(" * 300 + "a" + ")" * 300, "(?:" * 380 + "a" + ")" * 380,
        "(" * 600 + "a" + ")" * 600, "[" * 3, "a\n(", "a\nb\n)", "(?x)\n\n[", "ab\n\\",
        r"(?s).", r".", r"(?s)^.$", r"^.$", r"(?m).$", r"(?ms)^.$", r"(?i).", r"\n", r"[\n]", r"[^\n]",
        r"(?a)\b", r"(?a)\B", r"(?a)\s", r"(?a)\d", r"(?a)\W", r"(?a)[^\W\d_]", r"(?a)[\w]", r"(?a)\S",
        r"\b\w+\b", r"\Bb\B", r"a\b", r"\ba", r"\Ba", r"a\B", r"^\b", r"\b$", r"^\B$", r"^\B", r"\B$",
        r"(?i)[\d]|A", r"(?i)[\dA]", r"(?i)[\WA]", r"(?i)[\w]", r"(?i)[^\w]", r"(?i)\W", r"(?i)[^\WA]",
        r"(?i)[𐐀x]", r"(?i)[𐐀-𐐂]", r"(?i)[a-\U00010400]", r"(?i)[\U00010400-\U00010410]",
        r"(?ai)[\x00-\U00010000]", r"(?ai)[ā-\U00010000]", r"(?i)[\u0100-\U00010000]", r"(?i)[^𐐀]",
        r"(?i)[^𐐀x]", r"(?i)𐐨", r"(?i)[𐐨]", r"(?i)[ſ-ſ]", r"(?i)[ı-İ]", r"(?i)[ß]", r"(?i)[ẞ]",
        r"(?i)[ſt]", r"(?i)[ﬅ]", r"(?i)ﬅ", r"(?i)ﬆ", r"(?i)[ﬆx]", r"(?i)[\u0345]", r"(?i)\u0345",
        r"(?i)[ιx]", r"(?i)ΐ", r"(?i)[ΐx]", r"(?i)µ", r"(?i)[µx]", r"(?i)Ω", "(?i)\u2126", r"(?i)ω",
        "(?i)\u212b", r"(?i)å", r"(?i)ǅ", r"(?i)ǆ", r"(?i)Ǆ", r"(?i)[ǅx]", r"(?i)Ⓐ", r"(?i)ⓐ",
        r"(?i)[^ı]", r"(?i)[^s]", r"(?i)[^ſ]", r"(?i)[^k]", "(?i)[^\u212a]", r"(?i)[^ß]", r"(?ai)[^s]",
        r"(?ai)s", r"(?ai)ſ", r"(?ai)k", r"(?ai)[k]", r"(?ai)[^k]", r"(?ai)ı", r"(?ai)i", r"(?ai)é",
        r"(?ai)É", r"(?i)é", r"(?i)É", r"(?i)[é-ê]", r"(?i)[À-Þ]", r"(?i)[Ā-ſ]", r"(?i)[\x00-\xff]",
        r"(?i)[^\x00-\xff]", r"(?i)[^\x00-\U0010ffff]", r"(?i)[\d-\d]",
    ]
    return p


ATOMS = [r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", "_", "a", "A", "0", "-", r"\n", "ı", "\u212a",
         "a-z", "A-Z", "0-9", "À-ÿ", r"\x00-\x1f", r"\u0100-\uffff", r"\U00010000-\U0010ffff", "ſ", "ß",
         "²", "½"]


def systematic():
    p = []
    # Every escape of a printable ASCII character, outside and inside a set.
    for c in range(0x20, 0x7f):
        e = "\\" + chr(c)
        p += [e, "[" + e + "]", "a" + e, e + "+", "[^" + e + "]"]
    # Set members alone and in pairs, plain and negated, under flags.
    for a in ATOMS:
        for fl in ["", "(?i)", "(?a)", "(?ai)"]:
            p += [fl + "[" + a + "]", fl + "[^" + a + "]"]
    for a in ATOMS:
        for b in ATOMS:
            p += ["[" + a + b + "]", "[^" + a + b + "]"]
    sample = [r"\w", r"\W", r"\d", "_", "a", "ı", "ſ", "a-z", r"\s"]
    for a in sample:
        for b in sample:
            for fl in ["(?i)", "(?a)"]:
                p += [fl + "[" + a + b + "]", fl + "[^" + a + b + "]"]
    # Quantifiers on every kind of item.
    items = ["a", r"\w", ".", "(a)", "(?:ab)", "[ab]", r"\d", r"\b", "(?=a)", "(?:)", "(a|)"]
    quants = ["*", "+", "?", "{2}", "{1,2}", "{,2}", "{2,}", "{,}", "{0}", "{0,0}", "{1,1}"]
    for it in items:
        for q in quants:
            for m in ["", "?", "+"]:
                p += [it + q + m, "^" + it + q + m + "$", it + q + m + "b"]
    for q1 in ["*", "+", "?", "{2}"]:
        for q2 in ["*", "+", "?", "{2}", "*?", "++"]:
            p.append("a" + q1 + q2)
    # Anchors under flags.
    anchors = ["^", "$", r"\A", r"\Z", r"\b", r"\B"]
    for a in anchors:
        for fl in ["", "(?m)", "(?a)", "(?s)"]:
            p += [fl + a, fl + a + "a", fl + "a" + a, fl + a + r"\w", fl + r"\W" + a, fl + a + a]
    # Flags in every position and combination.
    letters = "aiLmsxtu"
    for x in letters:
        p += ["(?" + x + ")a", "(?" + x + ":a)", "(?-" + x + ":a)", "a(?" + x + ")", "(?" + x + "-i:a)"]
        for y in letters:
            p += ["(?" + x + y + ")A", "(?" + x + "-" + y + ":A)"]
    # Lookarounds of every width kind.
    bodies = ["a", "ab", "a|b", "a|bc", "a*", "a?", "a{2}", "(a)", "(?:a|b)c", r"\d", ".", "", r"\b", "(?=a)a",
              "[ab]{3}", "a{0}", "(a)(?(1)b|c)", "(a)(?(1)b)", "(?>a)"]
    for b in bodies:
        for k in ["(?=", "(?!", "(?<=", "(?<!"]:
            p += [k + b + ")", "x" + k + b + ")", k + b + ")a", "b" + k + b + ")"]
    # Backreferences and conditionals.
    for g in ["(a)", "(a*)", "(a|b)", "(a)?", "(?:(a)|b)", "(?P<n>a)", "(a|)", "(ab)+", "(.)"]:
        for tail in [r"\1", r"(?(1)b|c)", r"(?(1)b)", r"\1+", r"(?!\1)", r"(?<=\1)", r"(?i:\1)"]:
            p += [g + tail, "^" + g + tail + "$", g + "x" + tail]
    return p


def random_patterns(n, seed):
    rnd = random.Random(seed)
    chars = ["a", "b", "A", "1", "_", " ", "ı", "ſ", "K", "é", "ß", "\n", "-", "."]

    def atom(d):
        r = rnd.random()
        if d > 2 or r < 0.35:
            return rnd.choice(chars + [r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", r"\b", r"\B", "^", "$",
                                       r"\A", r"\Z", "."])
        if r < 0.55:
            members = "".join(rnd.choice(["a", "b", "A", r"\w", r"\W", r"\d", r"\s", "a-z", "_", "ı", "-",
                                          "K", "0-9", "^"]) for _ in range(rnd.randint(1, 3)))
            return "[" + rnd.choice(["", "^"]) + members + "]"
        kind = rnd.choice(["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:", "(?-i:", "(?a:", "(?s:",
                           "(?m:", "(?P<g%d>" % rnd.randint(1, 3)])
        return kind + alt(d + 1) + ")"

    def piece(d):
        a = atom(d)
        if rnd.random() < 0.35:
            a += rnd.choice(["*", "+", "?", "{2}", "{1,2}", "{,2}", "*?", "+?", "??", "*+", "++", "?+"])
        return a

    def seq(d):
        return "".join(piece(d) for _ in range(rnd.randint(1, 4)))

    def alt(d):
        s = seq(d)
        while rnd.random() < 0.25:
            s += "|" + seq(d)
        return s

    out = []
    for _ in range(n):
        s = alt(0)
        r = rnd.random()
        if r < 0.15:
            s = rnd.choice(["(?i)", "(?a)", "(?m)", "(?s)", "(?x)", "(?ai)", "(?im)"]) + s
        elif r < 0.25:
            s += rnd.choice([r"\1", r"(?(1)a|b)", r"(?P=g1)", r"(?(g1)x)"])
        out.append(s)
    return out


AB_TEXTS = [""] + ["".join(t) for n in range(1, 6) for t in __import__("itertools").product("ab", repeat=n)] + [
    "abc", "cab", "aabb", "abba", "baab", "aaaaaa", "abcabc", "bbbbbb", "ababab"]


def backtracking_patterns(n, seed):
    """Small patterns over a and b that stress what a backtracking engine
    decides: which alternative and how many iterations, what a group holds
    when a backreference, a conditional or a lookaround reads it."""
    rnd = random.Random(seed)

    class Groups:
        def __init__(self):
            self.count, self.closed = 0, []

    def atom(d, g):
        r = rnd.random()
        if d > 1 or r < 0.3:
            # \b and \B are rarer here: each costs four Unicode word classes
            # to compile, and the unicode suite tests them.
            return rnd.choice(["a", "b", "a", "b", ".", "[ab]", "c", "", "^", "$", "a", "b", ".", "[ab]", "c", "",
                               "^", "$", r"\b", r"\B"])
        if r < 0.5 and g.closed:
            k = rnd.choice(g.closed)
            return rnd.choice([r"\%d" % k, r"\%d" % k, "(?(%d)%s|%s)" % (k, alt(d + 1, g), alt(d + 1, g)),
                               "(?(%d)%s)" % (k, alt(d + 1, g))])
        if r < 0.58:
            # Look-behind needs a fixed width.
            body = rnd.choice(["a", "b", "ab", "[ab]", ".", "a|b", "(a)", "(a|b)", r"\b", "(?:a|b)a", "(.)"])
            if "(" in body.replace("(?:", ""):
                g.count += 1
                g.closed.append(g.count)
            return rnd.choice(["(?<=", "(?<!"]) + body + ")"
        kind = rnd.choice(["(", "(", "(", "(?:", "(?=", "(?!", "(?>"])
        k = None
        if kind == "(":
            g.count += 1
            k = g.count
        body = alt(d + 1, g)
        if k:
            g.closed.append(k)
        return kind + body + ")"

    def piece(d, g):
        a = atom(d, g)
        if a not in ("", "^", "$", r"\b", r"\B") and rnd.random() < 0.4:
            a += rnd.choice(["*", "+", "?", "{2}", "{1,2}", "{0,2}", "*?", "+?", "??", "{1,2}?", "*+", "++", "?+"])
        return a

    def seq(d, g):
        return "".join(piece(d, g) for _ in range(rnd.randint(1, 3)))

    def alt(d, g):
        s = seq(d, g)
        while rnd.random() < 0.3:
            s += "|" + seq(d, g)
        return s

    out = []
    for _ in range(n):
        g = Groups()
        s = alt(0, g)
        if g.closed and rnd.random() < 0.5:
            s += r"\%d" % rnd.choice(g.closed)
        out.append(s)
    return out


MIXED_TEXTS = [
    "", "a", "A", "aA", "ab AB", "123", "a1_", " \t\n", "x\ny", "héllo wörld", "HÉLLO", "ıIiİ", "ſsS", "kK\u212a",
    "ßẞss", "σςΣ", "²½Ⅻ①", "e\u0301", "\x1c\x1d\x85\xa0\u2028", "😀x😀", "—–-", "[a]{b}(c)", "a.b*c+d?",
    "foo@bar.com", "2024-01-31T10:00", "Total: 42.50", "\\", "$^", "abcabc", "aaab", "Ω\u2126ω", "µμΜ", "ǅǆǄ",
    "ﬅst", "\u0345ιΙ\u1fbe",
]

MIXED_ATOMS = [
    "a", "b", "A", "B", "x", "1", "_", " ", "-", ".", r"\.", r"\-", "é", "É", "ı", "İ", "ſ", "s", "S", "k", "K",
    "\u212a", "ß", "σ", "Σ", "µ", r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", r"\b", r"\B", "^", "$", r"\A", r"\Z",
    r"\x41", r"\x61", r"\u00e9", r"\U0001F600", r"\N{LATIN SMALL LETTER A}", r"\N{EM DASH}", r"\n", r"\t", r"\0",
    r"\101", r"\\", r"\$", r"\^", "😀", "—", r"\{", "{", "}", "]", r"\]",
]

MIXED_SET_MEMBERS = [
    "a", "b", "A-Z", "a-z", "0-9", r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", "_", "-", "ı", "İ", "ſ", "K", "k",
    "é-ë", r"\x00-\x7f", r"\u0100-\u017f", "σ", "ß", r"\]", r"\\", "^", "[", ".", "$", r"\n", r"\b", r"\N{EM DASH}",
]


def mixed_patterns(n, seed):
    """Patterns mixing every kind of item: escapes of each form, sets,
    scoped flags, named groups and references to them, comments,
    look-arounds, conditionals, quantifiers of each kind."""
    rnd = random.Random(seed)

    def atom(d, g):
        r = rnd.random()
        if d > 2 or r < 0.45:
            return rnd.choice(MIXED_ATOMS)
        if r < 0.6:
            members = "".join(rnd.choice(MIXED_SET_MEMBERS) for _ in range(rnd.randint(1, 3)))
            return "[" + rnd.choice(["", "", "^"]) + members + "]"
        if r < 0.65 and g[0]:
            k = rnd.randint(1, g[0])
            return rnd.choice([r"\%d" % k, "(?(%d)%s|%s)" % (k, seq(d + 1, g), seq(d + 1, g)), "(?P=g%d)" % k])
        if r < 0.7:
            body = rnd.choice(["a", "ab", r"\w", "[ab]", "a|b", r"\d\d", ".", r"\b", "x{2}", "(?:ab|cd)"])
            return rnd.choice(["(?<=", "(?<!"]) + body + ")"
        kind = rnd.choice(["(", "(", "(?:", "(?=", "(?!", "(?>", "(?i:", "(?-i:", "(?a:", "(?s:", "(?m:", "(?x:",
                           "(?u:", "(?P<", "(?#c)"])
        if kind == "(?#c)":
            return kind
        if kind in ("(", "(?P<"):
            g[0] += 1
            kind = "(?P<g%d>" % g[0]
        return kind + alt(d + 1, g) + ")"

    def piece(d, g):
        a = atom(d, g)
        if rnd.random() < 0.35:
            a += rnd.choice(["*", "+", "?", "{2}", "{1,3}", "{,2}", "{2,}", "{0}", "*?", "+?", "??", "{1,2}?", "*+",
                             "++", "?+", "{2}+"])
        return a

    def seq(d, g):
        return "".join(piece(d, g) for _ in range(rnd.randint(1, 4)))

    def alt(d, g):
        s = seq(d, g)
        while rnd.random() < 0.25:
            s += "|" + seq(d, g)
        return s

    out = []
    for _ in range(n):
        s = alt(0, [0])
        if rnd.random() < 0.3:
            s = rnd.choice(["(?i)", "(?a)", "(?m)", "(?s)", "(?x)", "(?ai)", "(?im)", "(?is)", "(?u)", "(?x)# c\n"]) + s
        out.append(s)
    return out


def run(pattern, texts):
    try:
        c = re.compile(pattern)
    except Exception as e:  # re.error, OverflowError, ValueError, RecursionError
        return {"p": pattern, "error": type(e).__name__ if not isinstance(e, re.error) else "re.error",
                "message": str(e)}
    spans = []
    for t in texts:
        try:
            m = c.search(t)
        except SystemError:
            # sre sometimes reads a group it never wrote ("The span of
            # capturing group is wrong"): no answer to hold us to.
            return None
        spans.append(None if m is None else list(m.span()))
    return {"p": pattern, "spans": spans}


CHARSET_PATTERNS = [
    r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", ".", "(?s).", r"(?a)\w", r"(?a)\W", r"(?a)\d", r"(?a)\s", r"(?a)\S",
    "(?i)k", "(?i)K", "(?i)s", "(?i)ſ", "(?i)i", "(?i)ı", "(?i)İ", "(?i)σ", "(?i)ß", "(?i)µ", "(?i)ǅ", "(?i)ι",
    "(?i)\u0345", "(?i)𐐀", "(?ai)k", "(?ai)s", "(?ai)é", "(?i)[^k]", "(?i)[a-z]", "(?i)[^a-z]", "(?ai)[a-z]",
    r"(?i)[\W\d]", r"(?i)[^\W\d_]", r"[^\W\d_]", r"(?i)[\w]", "(?i)[0-9A-F]", "(?i)[ſ-ſ]", "(?i)[İ-ı]",
    r"(?i)[\u0100-\U00010000]", r"(?i)[a-\U00010400]", "(?i)[𐐀x]", r"(?i)[\U00010400-\U00010410]",
    r"(?ai)[\x00-\U00010000]", "(?i)[À-Þ]", "(?i)[Ā-ſ]", r"(?i)[^\x00-\xff]", r"(?i)[\dA]", r"(?i)[^\WA]",
    "(?i)[ﬅx]", "(?i)[ΐx]", "(?i)[Ⅰ-Ⅻ]", "(?i)[ⓐ-ⓩ]", r"(?i)[\u10a0-\u10ff]", "(?i)[Ꭰ-ꮿ]", r"(?i)[\u1e9e]",
    r"(?i)[\u2126\u212a\u212b]", r"(?i)[^\u0345]", r"(?a)[^\W\d_]", r"(?ai)[^\W]", r"(?i)\S",
]


def charset_ranges(patterns):
    """For patterns that match one character: every code point they accept,
    as [lo, hi] ranges (re.fullmatch over all of Unicode)."""
    compiled = [re.compile(p) for p in patterns]
    out = [[] for _ in patterns]
    for c in range(0x110000):
        ch = chr(c)
        for i, r in enumerate(compiled):
            if r.fullmatch(ch):
                rs = out[i]
                if rs and rs[-1][1] == c - 1:
                    rs[-1][1] = c
                else:
                    rs.append([c, c])
    return [{"p": p, "ranges": rs} for p, rs in zip(patterns, out)]


def unique(ps):
    seen, out = set(), []
    for p in ps:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def main():
    # The charsets table tests every code point for each of CHARSET_PATTERNS.
    suites = [
        ("unicode", TEXTS, unique(hand_picked() + systematic() + random_patterns(1500, 20231121))),
        ("backtracking", AB_TEXTS, unique(backtracking_patterns(2500, 20231122))),
        ("mixed", MIXED_TEXTS, unique(mixed_patterns(1200, 20231123))),
    ]
    out = {
        "python": sys.version.split()[0],
        "note": "generated by gen_vectors.py: re.compile errors and re.search spans of CPython %s" % sys.version.split()[0],
        "suites": [{"name": n, "texts": t, "vectors": [v for v in (run(p, t) for p in ps) if v]} for n, t, ps in suites],
        "charsets": charset_ranges(CHARSET_PATTERNS),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json.gz")
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as f:
            f.write(json.dumps(out, ensure_ascii=False, indent=0).encode("utf-8"))
    for suite in out["suites"]:
        errors = sum(1 for v in suite["vectors"] if "error" in v)
        print("%s: %d patterns (%d refused) x %d texts" % (suite["name"], len(suite["vectors"]), errors,
                                                          len(suite["texts"])))


main()
