"""Where a Spring context looks, as Spring reads it (docs/scanning.md §12): Ant-style resource
patterns (``classpath*:spring/*.xml``, ``**``), resource locations relative to the file that names
them, component-scan base packages that are Ant patterns, and ``@Profile`` expressions
(``!a & (b | c)``) against the active profiles. All bounded: patterns match in linear time,
expressions past :data:`MAX_PROFILE_TOKENS` are not evaluated."""

from __future__ import annotations

import posixpath
import re


class AntPattern:
    """Spring's Ant-style path pattern: ``**`` any directories (none included), ``*`` any characters
    but ``/``, ``?`` one character but ``/``. :meth:`match` runs in time linear in pattern × path
    (no backtracking regular expression: patterns come from the scanned repository)."""

    def __init__(self, location: str) -> None:
        self.segments = location.split("/")

    def match(self, path: str) -> bool:
        """Whether ``path`` (``/``-separated) matches the whole pattern."""
        segs = path.split("/")
        pats = self.segments
        # reach[j]: the first j path segments are matched by the pattern segments seen so far
        reach = [True] + [False] * len(segs)
        for p in pats:
            if p == "**":
                nxt, seen = [], False
                for r in reach:
                    seen = seen or r
                    nxt.append(seen)
            else:
                nxt = [False] + [reach[j] and _glob(p, segs[j]) for j in range(len(segs))]
            reach = nxt
            if not any(reach):
                return False
        return reach[-1]


def _glob(pattern: str, text: str) -> bool:
    """One segment against ``*`` (any run) and ``?`` (one character): the greedy two-pointer match
    with one backtrack point (linear in practice, quadratic at worst; never exponential)."""
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        if p < len(pattern) and (pattern[p] == "?" or pattern[p] == text[t]):
            p += 1
            t += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, t
            p += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            t = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def ant_pattern(location: str) -> AntPattern:
    """The :class:`AntPattern` of a location or package pattern."""
    return AntPattern(location)


#: a location Spring reads as absolute: a ``classpath:`` / ``classpath*:`` prefix or any URL scheme
_ABSOLUTE_LOCATION = re.compile(r"[A-Za-z][A-Za-z0-9+.*-]*:")


def relative_location(base: str, location: str) -> str:
    """Where ``<import resource="location">`` of the XML file at classpath-relative ``base`` points:
    an absolute location (``classpath:``, ``classpath*:``, a URL) as written, else the location
    relative to the importing file's folder, a leading ``/`` ignored (Spring's
    ``Resource.createRelative`` and ``StringUtils.applyRelativePath``; ``..`` folded as ``cleanPath``
    does)."""
    loc = location.strip()
    if _ABSOLUTE_LOCATION.match(loc):
        return loc
    folder = base.rsplit("/", 1)[0] if "/" in base else ""
    joined = posixpath.normpath(f"{folder}/{loc.lstrip('/')}" if folder else loc.lstrip("/"))
    return "classpath:" + joined.lstrip("/")


class PackagePatterns:
    """Base packages of a scan (``@ComponentScan``, ``@EnableFeignClients``, ``@MapperScan``):
    Spring scans ``classpath*:{package as path}/**/*.class``, so a package is covered when it is a
    base package or below one; a base package may hold Ant patterns (``com.acme.**.feign``,
    ``com.acme.*.api``), matched against the package's path and its ancestors."""

    def __init__(self, packages: "set[str] | list[str]" = ()) -> None:
        self.plain: set[str] = set()
        self.patterns: dict[str, "re.Pattern[str]"] = {}
        self.update(packages)

    def update(self, packages: "set[str] | list[str]") -> bool:
        """Add base packages; True when one was new."""
        new = False
        for p in packages:
            p = p.strip().strip(".")
            if "*" in p or "?" in p:
                if p not in self.patterns:
                    self.patterns[p] = ant_pattern(p.replace(".", "/"))
                    new = True
            elif p not in self.plain:
                self.plain.add(p)
                new = True
        return new

    def __contains__(self, pkg: str) -> bool:
        """Whether classes of package ``pkg`` are scanned (linear in its depth for plain packages)."""
        while True:
            if pkg in self.plain or any(r.match(pkg.replace(".", "/")) for r in self.patterns.values()):
                return True
            if "." not in pkg:
                return False
            pkg = pkg.rsplit(".", 1)[0]


#: profile expressions longer than this (in tokens) are not evaluated
MAX_PROFILE_TOKENS = 200


def profile_condition_holds(expressions: list[str], active: list[str]) -> bool:
    """Whether ``@Profile(expressions)`` admits the active profiles: any expression holds. An
    expression is a profile name, ``!e``, ``e & e``, ``e | e`` or ``(e)`` (Spring's profile
    expressions); one that does not parse counts as holding (the declaration stays loaded, never
    dropped on a guess); no expression at all holds."""
    names = [e.strip() for e in expressions if e and e.strip()]
    on = set(active or ["default"])
    results = [_profile_expression(e, on) for e in names]
    return not names or any(r is not False for r in results)


def _profile_expression(text: str, active: set[str]) -> bool | None:
    """One profile expression evaluated against the active profiles; None when it does not parse."""
    tokens = re.findall(r"[()!&|]|[^()!&|\s]+", text)
    if len(tokens) > MAX_PROFILE_TOKENS:
        return None  # not evaluated (the walk below recurses per '!' and '('): the declaration stays loaded
    pos = 0

    def unary() -> bool | None:
        nonlocal pos
        if pos >= len(tokens):
            return None
        tok = tokens[pos]
        pos += 1
        if tok == "!":
            v = unary()
            return None if v is None else not v
        if tok == "(":
            v = binary()
            if pos >= len(tokens) or tokens[pos] != ")":
                return None
            pos += 1
            return v
        return None if tok in ")&|" else tok in active

    def binary() -> bool | None:
        nonlocal pos
        v = unary()
        op = None
        while v is not None and pos < len(tokens) and tokens[pos] in "&|":
            if op is not None and tokens[pos] != op:
                return None  # & and | mixed without parentheses: not a valid expression
            op = tokens[pos]
            pos += 1
            w = unary()
            v = None if w is None else (v and w if op == "&" else v or w)
        return v

    got = binary()
    return got if pos == len(tokens) else None
