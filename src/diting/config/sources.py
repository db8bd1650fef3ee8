"""Reading Spring configuration files into flat, line-addressed entries.

``.properties`` follow ``java.util.Properties.load`` (continuations, ``\\uXXXX``
escapes, ``=``/``:``/whitespace separators, ``#``/``!`` comments). YAML is
composed with PyYAML's safe loader and flattened to dotted keys with ``[n]``
indices; scalars stay strings (no type conversion, so no floats). Multi-document
YAML keeps each document's profile condition (``spring.profiles`` or
``spring.config.activate.on-profile``). Keys are compared in Spring's canonical
relaxed form (:func:`canonical_key`).
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

import yaml

from diting.source.text import scrub_surrogates

try:  # the C loader is faster and equally safe
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - pure-Python PyYAML
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: YAML nodes visited per file at most (aliases can multiply a small file)
MAX_YAML_NODES = 200_000


@dataclass(frozen=True)
class ConfigEntry:
    """One key of a config file: canonical key, raw key as written, string value, 1-based line."""

    key: str
    raw_key: str
    value: str
    line: int
    end_line: int


@dataclass
class ConfigDocument:
    """Entries of one document; ``profiles`` is the activation condition (None: always)."""

    entries: list[ConfigEntry]
    profiles: list[str] | None = None


@dataclass
class ConfigFile:
    """A parsed config file: its documents, or ``error`` (with line) when it could not be read."""

    path: str
    fmt: str  # properties | yaml
    documents: list[ConfigDocument] = field(default_factory=list)
    error: str | None = None
    error_line: int | None = None
    budget_exhausted: bool = False


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_INDEX = re.compile(r"\[(\d+)\]")


@functools.lru_cache(maxsize=65536)
def canonical_key(key: str) -> str:
    """Spring's canonical relaxed form: lower-case kebab elements, ``[n]`` indices.

    ``spring.applicationName`` and ``spring.application_name`` both give
    ``spring.application-name``; ``list.0.x`` stays, ``list[0].x`` keeps brackets.
    """
    out = []
    for element in key.strip().split("."):
        # the trailing [..][..] groups, found from the end in linear time (a regex with a lazy
        # prefix backtracks quadratically on long bracket runs)
        i = len(element)
        while i > 0 and element[i - 1] == "]":
            j = element.rfind("[", 0, i - 1)
            if j < 0 or "]" in element[j + 1:i - 1]:
                break
            i = j
        element, idx = element[:i], element[i:]
        element = _CAMEL.sub("-", element).replace("_", "-").lower()
        out.append(element + idx)
    return ".".join(out)


# ---------------------------------------------------------------- properties

_PROP_ESC = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
#: a ``\\u`` not followed by four hex digits: Spring Boot's loader and java.util.Properties throw
MALFORMED_ESCAPE = "malformed \\uxxxx encoding (java.util.Properties and Spring Boot refuse the file)"


class _MalformedEscape(ValueError):
    """A ``\\u`` escape without four hex digits at ``index`` of the text being unescaped."""

    def __init__(self, index: int) -> None:
        super().__init__(MALFORMED_ESCAPE)
        self.index = index


def _unescape_props(s: str) -> str:
    """``s`` with its escapes read as ``java.util.Properties`` reads them. Raises
    :class:`_MalformedEscape` at a ``\\u`` that four hex digits do not follow (Properties and Spring
    Boot's loader throw there: the file is refused, never read with a guess)."""
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u":
                if not _HEX4.fullmatch(s, i + 2, i + 6):
                    raise _MalformedEscape(i)
                out.append(chr(int(s[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_PROP_ESC.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _LineOf:
    """The 1-based line of a character offset as evidence counts lines (at ``\\r\\n``, a lone ``\\r``
    or ``\\n``, the rule of :mod:`diting.source.text`), whatever a parser counted (NEL, U+2028 …)."""

    def __init__(self, text: str) -> None:
        self.newlines = [m.start() for m in _LINE_END.finditer(text)]

    def __call__(self, index: int) -> int:
        return bisect.bisect_left(self.newlines, index) + 1


#: a line end as evidence counts it (the text of a scanned file has no lone CR left; a caller's may)
_LINE_END = re.compile("\n|\r(?!\n)")
#: line breaks YAML counts and evidence does not (NEL, LS, PS)
_ODD_BREAKS = re.compile("[\x85\u2028\u2029]")


def parse_properties(path: str, text: str) -> ConfigFile:
    """Parse ``.properties`` text. Never raises. Lines end at ``\\r\\n``, ``\\r`` or ``\\n``, where
    ``java.util.Properties`` and evidence end them alike. A malformed ``\\uxxxx`` escape in a key or
    value makes the file unreadable (``error``, ``error_line`` the line of the escape; no entries),
    as it is to Spring Boot."""
    lines = re.split(r"\r\n|\r|\n", text)
    try:
        return ConfigFile(path, "properties", [ConfigDocument(_property_entries(lines))])
    except _MalformedEscape as exc:
        return ConfigFile(path, "properties", error=MALFORMED_ESCAPE, error_line=exc.index + 1)


def _property_entries(lines: list[str]) -> list[ConfigEntry]:
    """The entries of a properties file's lines. Raises :class:`_MalformedEscape` whose ``index`` is
    the 0-based line of the malformed escape."""
    entries: list[ConfigEntry] = []
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        logical = line
        starts = [0]  # where each physical line begins in the logical line
        while _continues(logical) and i < len(lines):
            logical = logical[:-1]
            starts.append(len(logical))
            logical += lines[i].lstrip(" \t\f")
            i += 1
        if _continues(logical):
            logical = logical[:-1]
        j = 0
        while j < len(logical):
            c = logical[j]
            if c == "\\" and j + 1 < len(logical):
                j += 2
                continue
            if c in "=: \t\f":
                break
            j += 1
        key_end = j
        while j < len(logical) and logical[j] in " \t\f":
            j += 1
        if j < len(logical) and logical[j] in "=:":
            j += 1
            while j < len(logical) and logical[j] in " \t\f":
                j += 1
        raw_key = _unescape_span(logical, 0, key_end, start, starts)
        value = _unescape_span(logical, j, len(logical), start, starts)
        entries.append(ConfigEntry(canonical_key(raw_key), raw_key, value, start + 1, i))
    return entries


def _unescape_span(logical: str, a: int, b: int, first: int, starts: list[int]) -> str:
    """``logical[a:b]`` unescaped (surrogates scrubbed); a malformed escape is raised again with the
    0-based physical line holding it (``first`` the logical line's first, ``starts`` where each of its
    physical lines begins)."""
    try:
        return scrub_surrogates(_unescape_props(logical[a:b]))
    except _MalformedEscape as exc:
        raise _MalformedEscape(first + bisect.bisect_right(starts, a + exc.index) - 1) from None


def _continues(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


# ---------------------------------------------------------------- yaml


_PROFILE_KEYS = ("spring.profiles", "spring.config.activate.on-profile")


def _profile_condition(doc: list[ConfigEntry]) -> list[str] | None:
    """The document's profile condition: a scalar (``dev,test`` or ``dev | test``) or a YAML list
    (``[dev, test]``, flattened to ``key[0]``, ``key[1]``…); None when the document has none."""
    found: list[str] | None = None
    for e in doc:
        if e.key in _PROFILE_KEYS or any(e.key.startswith(k + "[") and e.key.endswith("]") for k in _PROFILE_KEYS):
            found = (found or []) + [p.strip() for p in re.split(r"[,|]", e.value) if p.strip()]
    return found


_MERGE_TAG = "tag:yaml.org,2002:merge"
#: key tags whose scalars SnakeYAML constructs into values (``1`` and ``0x1``, ``on`` and ``true`` are
#: one key); a key of any other tag is its text (Spring Boot resolves no timestamps)
_VALUE_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
               "tag:yaml.org,2002:null")
_KEY_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def duplicate_key(node: yaml.MappingNode) -> tuple[yaml.ScalarNode, yaml.ScalarNode] | None:
    """``(first, repeat)``: the first scalar key of ``node`` equal to an earlier key of the same
    mapping, as SnakeYAML compares keys with ``allowDuplicateKeys=false`` (how Spring Boot loads
    YAML): by constructed value for ints, floats, booleans and nulls, by text otherwise (``"1"`` and
    ``1`` are two keys); merge keys (``<<``) and non-scalar keys aside. None when every key is its own."""
    seen: dict[tuple[str, object], yaml.ScalarNode] = {}
    for k, _ in node.value:
        if not isinstance(k, yaml.ScalarNode) or k.tag == _MERGE_TAG:
            continue
        ident: tuple[str, object] = ("text", k.value)
        if k.tag in _VALUE_TAGS:
            try:
                ident = (k.tag, _KEY_CONSTRUCTOR.yaml_constructors[k.tag](_KEY_CONSTRUCTOR, k))
            except (yaml.YAMLError, ValueError, ArithmeticError):
                ident = (k.tag, k.value)
        if ident in seen:
            return seen[ident], k
        seen[ident] = k
    return None


class _Refused(ValueError):
    """What makes Spring Boot's YAML loader refuse a file, at evidence line ``line``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _DuplicateKey(_Refused):
    """A mapping repeats ``key`` (first at line ``first``, again at line ``line``)."""

    def __init__(self, key: str, first: int, line: int) -> None:
        super().__init__(f"duplicate key {key!r} (first at line {first}): Spring Boot refuses the file", line)


_STANDARD = "tag:yaml.org,2002:"
#: the tags SnakeYAML's SafeConstructor (Spring Boot's OriginTrackingConstructor) constructs, and the
#: merge key; ``value`` and ``yaml`` are what this parser's resolver gives a plain ``=`` (SnakeYAML reads
#: a string) and ``!``/``&``/``*``
_CONSTRUCTED_TAGS = frozenset(_STANDARD + t for t in (
    "null", "bool", "int", "float", "binary", "timestamp", "omap", "pairs", "set", "str", "seq", "map", "merge",
    "value", "yaml"))


def _tag_written(tag: str) -> str:
    """A node's tag as a document writes it (``!!python/object`` for the yaml.org namespace), at most
    80 characters."""
    shown = "!!" + tag[len(_STANDARD):] if tag.startswith(_STANDARD) else tag
    return shown if len(shown) <= 80 else shown[:79] + "…"


class _RefusedTag(_Refused):
    """A node carries a tag Spring Boot's loader constructs no value of (``!!python/object/apply:…``,
    ``!custom``, a Java class name): SnakeYAML's SafeConstructor fails on the whole file."""

    def __init__(self, tag: str, line: int) -> None:
        super().__init__(f"tag {scrub_surrogates(_tag_written(tag))!r}: Spring Boot's YAML loader constructs "
                         "only YAML's standard types and refuses the file", line)


def parse_yaml(path: str, text: str, allow_duplicate_keys: bool = False, allow_any_tag: bool = False) -> ConfigFile:
    """Parse YAML text into flattened documents. Never raises. A key repeated in one mapping
    (:func:`duplicate_key`) makes the file unreadable (``error`` naming the key, ``error_line`` the
    repeat; no documents), as it is to Spring Boot, unless ``allow_duplicate_keys`` (a reader such as
    ShardingSphere's that keeps the last one); so does a node whose tag Spring Boot's loader
    constructs nothing of (``!!python/object/apply:…``, ``!custom``: not one of
    :data:`_CONSTRUCTED_TAGS`), unless ``allow_any_tag`` (a file read by another loader:
    ShardingSphere's ``!SHARDING``). Tags are never constructed here either way."""
    cf = ConfigFile(path, "yaml")
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        cf.error = " ".join(str(getattr(exc, "problem", None) or exc).split())
        cf.error_line = None if mark is None else \
            _LineOf(text)(mark.index) if _ODD_BREAKS.search(text) else mark.line + 1
        return cf
    except (ValueError, RecursionError) as exc:
        cf.error = str(exc)
        return cf
    budget = [MAX_YAML_NODES]
    line_of = _LineOf(text) if _ODD_BREAKS.search(text) else None
    for node in nodes:
        if node is None:
            continue
        entries: list[ConfigEntry] = []
        try:
            _flatten(node, "", entries, budget, 0, line_of, allow_duplicate_keys, allow_any_tag)
        except _Refused as exc:
            return ConfigFile(path, "yaml", error=str(exc), error_line=exc.line)
        if budget[0] <= 0:
            cf.budget_exhausted = True
        cf.documents.append(ConfigDocument(entries, _profile_condition(entries)))
    return cf


def _flatten(node: yaml.Node, prefix: str, out: list[ConfigEntry], budget: list[int], depth: int,
             line_of: "_LineOf | None" = None, allow_duplicate_keys: bool = True, allow_any_tag: bool = True) -> None:
    """Entries of a composed YAML node. ``line_of`` maps marks to evidence lines when the text has
    line breaks YAML counts and evidence does not (by the mark's character index). Raises
    :class:`_DuplicateKey` at a mapping that repeats a key, unless ``allow_duplicate_keys``, and
    :class:`_RefusedTag` at a node (or key) whose tag is not one of :data:`_CONSTRUCTED_TAGS`, unless
    ``allow_any_tag``."""
    def at(mark: yaml.Mark) -> int:
        return line_of(mark.index) if line_of is not None else mark.line + 1

    stack: list[tuple[yaml.Node, str, int, int]] = [(node, prefix, at(node.start_mark), depth)]
    while stack:
        budget[0] -= 1
        if budget[0] <= 0:
            return
        cur, pre, line, d = stack.pop()
        if d > 100:
            continue
        if not allow_any_tag and cur.tag not in _CONSTRUCTED_TAGS:
            raise _RefusedTag(cur.tag, at(cur.start_mark))
        if isinstance(cur, yaml.MappingNode):
            dup = None if allow_duplicate_keys else duplicate_key(cur)
            if dup is not None:
                raise _DuplicateKey(scrub_surrogates(str(dup[1].value)), at(dup[0].start_mark), at(dup[1].start_mark))
            items = []
            for k, v in cur.value:
                if not allow_any_tag and k.tag not in _CONSTRUCTED_TAGS:
                    raise _RefusedTag(k.tag, at(k.start_mark))
                if not isinstance(k, yaml.ScalarNode):
                    continue
                name = scrub_surrogates(str(k.value))
                key = f"{pre}.{name}" if pre else name
                items.append((v, key, at(k.start_mark), d + 1))
            stack.extend(reversed(items))
        elif isinstance(cur, yaml.SequenceNode):
            items = [(v, f"{pre}[{i}]", at(v.start_mark), d + 1) for i, v in enumerate(cur.value)]
            stack.extend(reversed(items))
        elif isinstance(cur, yaml.ScalarNode):
            value = scrub_surrogates(str(cur.value)) if cur.tag != "tag:yaml.org,2002:null" else ""
            if line_of is not None:
                end = line_of(max(cur.start_mark.index, cur.end_mark.index - 1))
            else:
                end = cur.end_mark.line + 1 if cur.end_mark.column > 0 else cur.end_mark.line
            out.append(ConfigEntry(canonical_key(pre), pre, str(value), line, max(line, end)))


def parse_config(path: str, text: str, allow_any_tag: bool = False) -> ConfigFile:
    """Dispatch on the file extension (``.properties`` and ``spring.factories``, ``.yml``/``.yaml``);
    ``allow_any_tag`` as :func:`parse_yaml` takes it."""
    if path.endswith((".properties", ".factories")):
        return parse_properties(path, text)
    return parse_yaml(path, text, allow_any_tag=allow_any_tag)


# ---------------------------------------------------------------- Maven resource filtering

_AT_TOKEN = re.compile(r"@([A-Za-z0-9_][A-Za-z0-9_.\-]*)@")


def filter_resource(text: str, lookup) -> tuple[str, list[str]]:
    """Maven resource filtering with Spring Boot's ``@…@`` delimiter.

    ``lookup(name)`` gives a property value or None. Tokens that cannot be
    resolved stay as written and are returned as the second value.
    """
    missing: list[str] = []

    def repl(m: re.Match[str]) -> str:
        v = lookup(m.group(1))
        if v is None:
            if m.group(1) not in missing:
                missing.append(m.group(1))
            return m.group(0)
        return v

    return _AT_TOKEN.sub(repl, text), missing
