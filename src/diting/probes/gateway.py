"""API gateway routes: what a route matches and where it forwards (Spring Cloud Gateway, Zuul).

Pure functions over route declarations already read from configuration or code; the package
(``gateway_routes.py``) turns each :class:`Route` into a GATEWAY_ROUTE entry and a consumed contract.

* A route matches incoming path patterns (``Path=/api/x/**``; none: every path, ``/**``) and
  forwards to a ``uri``: ``lb://svc`` (a service id), ``scheme://host`` (an address, or a host the
  graph aligns only when it equals a service id), or something the gateway handles itself
  (``forward:``, ``no://op``).
* The forwarded path is the pattern after the filters, in order: ``StripPrefix=N`` drops the first
  N segments, ``PrefixPath=/p`` prepends, ``RewritePath=regex, replacement`` rewrites (the regex
  applied to the pattern text, Java named groups and ``${name}`` translated), ``SetPath=/t`` replaces it
  (``{var}`` of the Path predicate a one-segment hole). A forwarded pattern
  that is no longer a path pattern (``**`` other than last, a segment dropped from a ``**``) is
  unknown (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: filters whose effect on the path is modelled; any other filter leaves the path as it is
PATH_FILTERS = ("StripPrefix", "PrefixPath", "RewritePath", "SetPath")


@dataclass
class Route:
    """One route: id, incoming patterns, target uri (as written, placeholders filled), the HTTP
    methods a Method predicate admits (empty: any), path filters ``(name, args)`` in order, and
    whether the gateway strips the matched prefix (Zuul)."""

    route_id: str
    patterns: list[str]
    uri: str | None
    methods: list[str] = field(default_factory=list)
    filters: list[tuple[str, list[str]]] = field(default_factory=list)
    uri_expression: str | None = None


def shortcut(text: str) -> tuple[str, list[str]]:
    """``Name=a, b`` → ``("Name", ["a", "b"])`` (Spring Cloud Gateway's shortcut form)."""
    name, _, args = text.partition("=")
    return name.strip(), [a.strip() for a in args.split(",")] if args.strip() else []


def target(uri: str) -> tuple[str, str | None]:
    """``("SERVICE", id)`` for ``lb://id`` (also ``lb:ws://id``); ``("HOST", host[:port])`` for
    any other ``scheme://host`` (an address, or a name the graph aligns only when it equals a
    service id — an in-house load-balancing scheme such as ``grayLb://svc`` included);
    ``("OTHER", None)`` for ``forward:``, ``no://op`` and anything without a host."""
    u = uri.strip()
    m = re.match(r"^lb:(?:(?:ws|wss|http|https):)?//([^/?#:]+)", u, re.I)
    if m:
        return "SERVICE", m.group(1)
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]+)", u)
    if m and m.group(1).lower() != "no":
        return "HOST", m.group(2)
    return "OTHER", None


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _join(segs: list[str]) -> str:
    return "/" + "/".join(segs)


def _java_regex(rx: str) -> str:
    return re.sub(r"\(\?<([A-Za-z][A-Za-z0-9]*)>", r"(?P<\1>", rx)


#: RewritePath regular expressions longer than this are not run
MAX_REWRITE_REGEX = 512


def backtracking_risk(rx: str) -> bool:
    """Whether a regular expression from the repository could make a backtracking engine run for
    ever: longer than :data:`MAX_REWRITE_REGEX`, nested deeper than 32 groups, or a quantified group
    that holds a quantifier itself (``(a+)+``, ``(x*)*``, ``([a-z]+){2,}``) — the shape of every
    catastrophic pattern. A regex with that shape is not run (the route's forwarded path is unknown)."""
    if len(rx) > MAX_REWRITE_REGEX:
        return True
    stack: list[bool] = []  # per open group: whether it holds a quantifier
    i, in_class = 0, False
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            stack.append(False)
            if len(stack) > 32:
                return True
        elif c == ")" and stack:
            inner = stack.pop()
            quantified = i + 1 < len(rx) and rx[i + 1] in "*+{?"
            if inner and quantified and rx[i + 1] != "?":
                return True
            if stack and (inner or quantified):
                stack[-1] = True
        elif c in "*+{" and stack:
            stack[-1] = True
        i += 1
    return False


def _java_replacement(rep: str) -> str:
    rep = rep.replace("$\\{", "${")
    rep = re.sub(r"\$\{([A-Za-z][A-Za-z0-9]*)\}", r"\\g<\1>", rep)
    return re.sub(r"\$(\d)", r"\\\1", rep)


def forward(pattern: str, filters: list[tuple[str, list[str]]]) -> str | None:
    """The path pattern a route forwards for an incoming ``pattern`` as written (its ``{var}``
    names kept, so SetPath can use them), after its path filters; None when a filter's effect
    cannot be told."""
    path = pattern if pattern.startswith("/") else "/" + pattern
    for name, args in filters:
        if name == "StripPrefix":
            try:
                n = max(0, int(args[0])) if args else 1  # Spring strips no part for a negative count
            except ValueError:
                return None
            segs = _segments(path)
            if any("**" in s for s in segs[:n]):
                return None
            path = _join(segs[n:])
        elif name == "PrefixPath":
            if not args:
                return None
            path = _join(_segments(args[0]) + _segments(path))
        elif name in ("RewritePath", "SetPath"):
            if name == "SetPath":
                # SetPath=/{segment}: the template's variables are those of the Path predicate, each
                # one segment of the incoming path (a hole {}); any other variable is unknown
                named = set(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}", pattern))
                if not args or any(v not in named for v in re.findall(r"\{([^}]*)\}", args[0])):
                    return None
                path = re.sub(r"\{[^}]*\}", "{}", args[0])
                continue
            if len(args) < 2:
                return None
            if backtracking_risk(args[0]):
                return None
            try:
                path = re.sub(_java_regex(args[0]), _java_replacement(args[1]), path, count=1)
            except (re.error, IndexError, RecursionError):
                return None
    segs = _segments(path)
    if any(s != "**" and "**" in s for s in segs) or any(s == "**" for s in segs[:-1]):
        return None
    return _join(segs)



def split_args(text: str) -> list[str]:
    """A long-form argument value: a list written comma-separated (``patterns: /a/**,/b/**``)
    gives its items; a regular expression or replacement is one argument."""
    if text.startswith("/") and "," in text and "(" not in text:
        return [a.strip() for a in text.split(",") if a.strip()]
    return [text]


def fixed_segments(pattern: str) -> int:
    """How many leading segments of a path pattern are fixed (no ``*``, ``?`` or ``{…}``)."""
    n = 0
    for s in _segments(pattern):
        if any(ch in s for ch in "*?{"):
            break
        n += 1
    return n
