"""Spring Boot configuration of one deployable module, with the precedence of docs/scanning.md §10.

Sources, first wins: (2) remote config committed in the repository — files a native Spring Cloud
Config server serves (config/configserver.py), then Nacos exports bound by a naming rule
(config/remote.py); (3) ``application-{p}`` of the active profiles, last listed first; (4)
``application``; (5) ``bootstrap-{p}``, then ``bootstrap``; (6) ``@PropertySource`` /
``<context:property-placeholder>`` / placeholder-configurer files, added by the probes stage once
the Spring context is known. Within a rank ``config/`` beats the resource root and ``.properties``
beats ``.yml``; a file named by ``spring.config.import`` (``classpath:``/``file:``) ranks just above
its importer; a disagreement between equal ranks is AMBIGUOUS. Files of inactive profiles are never
read for values, and environments are never merged. The snapshot (rank 1) is consulted before this
object by probes/context.py.

The active profile set is ``--profile``, else ``spring.profiles.active`` of the base
application/bootstrap file, then ``spring.profiles.include``, expanded by
``spring.profiles.group``; else ``default`` (see :func:`load_spring_config`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from diting.config.sources import ConfigEntry, ConfigFile, canonical_key, filter_resource, parse_config

_NAME = re.compile(r"^(application|bootstrap)(?:-([^./]+))?\.(properties|yml|yaml)$")
#: a resolved config value longer than this is treated as no value (placeholder bombs)
MAX_VALUE_CHARS = 65536


@dataclass(frozen=True)
class ConfigFileRef:
    """A config file diting read: path and blob sha (goes into analysis_input)."""

    path: str
    blob: str


@dataclass(frozen=True)
class ResolvedValue:
    """A config value with where it came from.

    ``status``: RESOLVED, AMBIGUOUS (equal-rank sources disagree: ``candidates``),
    UNKNOWN (key absent or a placeholder without value). ``basis`` says how
    placeholders were filled (``PLACEHOLDER_DEFAULT`` when only a ``${x:default}``
    default applied)."""

    key: str
    status: str
    value: str | None
    entry: ConfigEntry | None = None
    path: str | None = None
    candidates: tuple[tuple[str, str, int], ...] = ()
    basis: str = "CONFIG_FILE"
    missing: tuple[str, ...] = ()


@dataclass
class _Source:
    #: (tier, profile order, location — odd for a location, fractions below it for its imports, extension)
    rank: tuple[int, int, float, int]
    path: str
    file: ConfigFile
    profile: str | None
    #: chosen by ``spring.application.name`` (a Nacos data id or config-server file named after it)
    by_name: bool = False


@dataclass
class SpringConfig:
    """The config sources of one module for one profile set."""

    profiles: list[str]
    profile_basis: str
    sources: list[_Source] = field(default_factory=list)
    files_read: list[ConfigFileRef] = field(default_factory=list)
    unreadable: list[tuple[str, str, int | None]] = field(default_factory=list)
    unfiltered: list[tuple[str, str]] = field(default_factory=list)
    #: keys asked for whose placeholders reach beyond :data:`MAX_PLACEHOLDER_DEPTH` → (path, line)
    #: of the key's entry (None, 0 for a value expanded outside the configuration)
    too_deep: dict[str, tuple[str | None, int]] = field(default_factory=dict)

    def add_source(self, path: str, file: ConfigFile, blob: str, tier: int, order: int,
                   profile: str | None = None, by_name: bool = False) -> None:
        """Add a parsed file as a source of rank ``(tier, order)``: tier -2 for config-server files,
        -1 for committed remote-config files (docs/scanning.md §10.1, rank 2), 4 for property-source files
        (rank 6); a lower ``order`` wins inside a tier. ``by_name``: the file was chosen by
        ``spring.application.name`` (it never supplies that name). Resolution starts afresh
        (memoised values are dropped)."""
        ext = 0 if path.endswith(".properties") else 1
        self.sources.append(_Source((tier, order, 0, ext), path, file, profile, by_name))
        self.sources.sort(key=lambda s: (s.rank, s.path))
        if all(r.path != path for r in self.files_read):
            self.files_read.append(ConfigFileRef(path, blob))
            self.files_read.sort(key=lambda r: r.path)
        self._forget()

    def _forget(self) -> None:
        """Drop what resolution memoised (the sources or the profiles changed)."""
        self.__dict__.pop("_memo", None)
        self.__dict__.pop("_hits", None)
        self.__dict__.pop("_entry_index", None)

    def not_chosen_by_name(self) -> "SpringConfig":
        """This configuration without the sources chosen by ``spring.application.name`` — where the
        name itself is read from (a file found by the name cannot say what the name is)."""
        return SpringConfig(self.profiles, self.profile_basis, [s for s in self.sources if not s.by_name],
                            too_deep=self.too_deep)

    def entries_of(self, key: str) -> list[tuple[str, ConfigEntry]]:
        """Every active entry of ``key`` and of its indexed forms (``key[0]``, ``key[1]``…) in
        precedence order: ``(path, entry)``."""
        ck = canonical_key(key)
        out: list[tuple[str, ConfigEntry]] = []
        for src in self.sources:
            for doc in src.file.documents:
                if doc.profiles is not None and not profiles_match(doc.profiles, self.profiles):
                    continue
                out.extend((src.path, e) for e in doc.entries
                           if e.key == ck or (e.key.startswith(ck + "[") and "." not in e.key[len(ck):]))
        return out

    def list_items(self, key: str) -> list[tuple[str, dict[str, ConfigEntry]]]:
        """The items of a list of objects (``key[0].uri``, ``key[0].predicates[1].name`` …) as
        Spring binds it: from the highest-ranked source that sets the list at all (a higher
        source's list replaces a lower one's whole). One ``(path, {sub-key: entry})`` per item in
        index order; sub-keys are canonical and relative (``uri``, ``predicates[1].name``); a
        later document of the file wins for a sub-key. Values are raw (see :meth:`expand`)."""
        ck = canonical_key(key) + "["
        for src in self.sources:
            items: dict[int, dict[str, ConfigEntry]] = {}
            for doc in src.file.documents:
                if doc.profiles is not None and not profiles_match(doc.profiles, self.profiles):
                    continue
                for e in doc.entries:
                    if not e.key.startswith(ck):
                        continue
                    idx, _, rest = e.key[len(ck):].partition("]")
                    if idx.isdigit():
                        items.setdefault(int(idx), {})[rest.removeprefix(".")] = e
            if items:
                return [(src.path, items[i]) for i in sorted(items)]
        return []

    def map_keys(self, prefix: str) -> list[tuple[str, str]]:
        """The map keys set under ``prefix`` by any active source (``zuul.routes.users.path`` →
        ``users``), as ``(canonical element, element as written)``, sorted; maps merge across
        sources, so :meth:`get` of ``prefix.element…`` gives each value with precedence."""
        cp = canonical_key(prefix) + "."
        raw_depth = len(prefix.split("."))
        out: dict[str, str] = {}
        for src in self.sources:
            for doc in src.file.documents:
                if doc.profiles is not None and not profiles_match(doc.profiles, self.profiles):
                    continue
                for e in doc.entries:
                    if e.key.startswith(cp):
                        element = e.key[len(cp):].split(".", 1)[0].split("[", 1)[0]
                        raw = e.raw_key.split(".")
                        out.setdefault(element, raw[raw_depth].split("[", 1)[0] if len(raw) > raw_depth else element)
        return sorted(out.items())

    def has_prefix(self, prefix: str) -> bool:
        """Whether any active source sets a key under ``prefix`` (canonical form)."""
        cp = canonical_key(prefix) + "."
        return any(e.key.startswith(cp) for src in self.sources for doc in src.file.documents
                   if doc.profiles is None or profiles_match(doc.profiles, self.profiles) for e in doc.entries)

    def expand(self, value: str) -> str | None:
        """``value`` with its ``${…}`` placeholders filled from this configuration, or None."""
        out, basis, missing, _ = self._placeholders(value, {}, 0)
        if basis == "BUDGET_EXHAUSTED":
            self.too_deep.setdefault(missing[-1], (None, 0))
        return out

    def _fill_nested(self, text: str, name: str, missing: list[str], active: dict[str, None], depth: int,
                     nesting: int, height: int) -> tuple[str | None, tuple | None, int]:
        """``text`` — a nested default, or a placeholder name holding placeholders — expanded a level
        below the placeholder ``name`` of a value ``depth`` levels down: ``(expanded, None, height)``,
        or ``(None, what the value's expansion returns, height)`` when it does not expand (nested more
        than :data:`MAX_NESTING` deep, over the depth budget, or a key of it without a value)."""
        if nesting >= MAX_NESTING:
            return None, (None, "PLACEHOLDER_UNRESOLVED", missing + [name], height), height
        got, why, more, below = self._placeholders(text, active, depth + 1, nesting + 1)
        height = max(height, below + 1)
        if why == "BUDGET_EXHAUSTED":
            return None, (None, why, more, _TOO_DEEP), _TOO_DEEP
        if got is None:
            return None, (None, why, missing + more if why == "PLACEHOLDER_UNRESOLVED" else more, height), height
        return got, None, height

    def fill_key(self, name: str) -> tuple[str, str | None] | None:
        """A placeholder's name holding placeholders of its own (``q.${env}:9``, the body of
        ``${q.${env}:9}``) as Spring reads it: ``(key, default)`` once they are filled — a default is
        split off the filled name at its first ``:`` unless a source has the whole name as a key —
        or None when they do not fill (:meth:`get` of the name says why)."""
        got, _, _, _ = self._placeholders(name, {}, 0)
        return None if got is None else self._split_filled(got)

    def _split_filled(self, name: str) -> tuple[str, str | None]:
        """A filled placeholder name as ``(key, default)`` (Spring's order: the whole name as a key
        first, then split at the first ``:``)."""
        if ":" in name and not self._entries(canonical_key(name)):
            key, default = name.split(":", 1)
            return key, default
        return name, None

    def _entries(self, key: str) -> list[tuple[_Source, ConfigEntry]]:
        """Each source's entry of ``key``: its own, or — for a list written item by item
        (``key[0]``, ``key[1]`` …) — one entry of the items joined by commas, as Spring binds a
        list or a comma-separated string (a higher source's list replaces a lower one's whole).
        Looked up in :meth:`_index`, built once per set of sources."""
        hits: list[tuple[_Source, ConfigEntry]] = []
        for src, index in zip(self.sources, self._index()):
            found, items = index.get(key, (None, None))
            if items:
                first, last = items[min(items)], items[max(items)]
                found = ConfigEntry(key, first.raw_key.rsplit("[", 1)[0], ",".join(items[i].value for i in sorted(items)),
                                    first.line, max(last.end_line, first.line))
            if found is not None:
                hits.append((src, found))
        return hits

    def _index(self) -> list[dict[str, list]]:
        """Per source (in order), canonical key → ``[its last entry, {item index: entry}]`` over the
        documents active for the profiles: later documents and later keys win inside one file, and
        an entry of the key itself drops the items written before it (``key[N]`` entries are also
        items of ``key``)."""
        got = self.__dict__.get("_entry_index")
        if got is None:
            got = self.__dict__["_entry_index"] = []
            for src in self.sources:
                index: dict[str, list] = {}
                for doc in src.file.documents:
                    if doc.profiles is not None and not profiles_match(doc.profiles, self.profiles):
                        continue
                    for e in doc.entries:
                        index[e.key] = [e, {}]
                        if e.key.endswith("]"):
                            cut = e.key.rfind("[")
                            number = e.key[cut + 1:-1]
                            if cut > 0 and number.isascii() and number.isdigit():
                                index.setdefault(e.key[:cut], [None, {}])[1][int(number)] = e
                got.append(index)
        return got

    def value(self, key: str) -> str | None:
        """``key``'s RESOLVED value stripped, None when it is not resolved or blank."""
        rv = self.get(key)
        return rv.value.strip() if rv.status == "RESOLVED" and rv.value and rv.value.strip() else None

    def get(self, key: str) -> ResolvedValue:
        """Resolve ``key`` (any relaxed form) with precedence and placeholders. Each key is
        resolved once (memoised); a key that refers to itself is a cycle, never expanded
        (PLACEHOLDER_CYCLE, ``missing`` the keys of the cycle in order, its first key again last),
        a value its placeholders make longer than :data:`MAX_VALUE_CHARS` is VALUE_TOO_LONG, and a
        key whose placeholders reach further than :data:`MAX_PLACEHOLDER_DEPTH` levels is
        BUDGET_EXHAUSTED (and listed in :attr:`too_deep`); each of the three reaches every key whose
        value names it without a default, as does PLACEHOLDER_UNRESOLVED (``missing`` the keys no
        source has). Placeholders inside a key — ``key`` itself, or a name in a value
        (``${db.${env}.url}``) — are filled first, as Spring fills them; ``${w.${w}}`` in ``w``'s
        value is a cycle."""
        if "${" in key:  # a key read with placeholders of its own (${a.${env}}) is read once they are filled
            name, why, missing, _ = self._placeholders(key, {}, 0)
            if name is None:
                if why == "BUDGET_EXHAUSTED":
                    self.too_deep.setdefault(missing[-1], (None, 0))
                return ResolvedValue(key, "UNKNOWN", None, basis=why, missing=tuple(missing))
            key = name
        ck = canonical_key(key)
        rv, _ = self._get(ck, {}, 0)
        if rv.basis == "BUDGET_EXHAUSTED":
            self.too_deep.setdefault(ck, (rv.path, rv.entry.line if rv.entry else 0))
        return rv

    def _get(self, ck: str, active: dict[str, None], depth: int) -> tuple[ResolvedValue, int]:
        """``ck`` resolved ``depth`` levels below the key or value asked for, and its height (how
        many levels below it its resolution went). Recursion stays bounded: a resolution that
        would go beyond :data:`MAX_PLACEHOLDER_DEPTH` is cut (BUDGET_EXHAUSTED). A cut is memoised
        only for the key asked for — a key cut deeper down may resolve when asked for itself — and
        a memoised value is used only where its height still fits, so the outcome of every key is
        the same whatever was asked first."""
        memo = self.__dict__.setdefault("_memo", {})
        if ck in memo:
            rv, height = memo[ck]
            fits = depth + height <= MAX_PLACEHOLDER_DEPTH or rv.basis == "BUDGET_EXHAUSTED"
            return (rv, height) if fits else (_cut(ck), _TOO_DEEP)
        if ck in active:  # the keys being resolved, in order: the cycle is ck … ck
            chain = list(active)
            return ResolvedValue(ck, "UNKNOWN", None, basis="PLACEHOLDER_CYCLE",
                                 missing=(*chain[chain.index(ck):], ck)), 0
        if depth > MAX_PLACEHOLDER_DEPTH:
            return _cut(ck), _TOO_DEEP
        active[ck] = None
        try:
            result, height = self._resolve(ck, active, depth)
        finally:
            active.pop(ck, None)
        if result.basis == "BUDGET_EXHAUSTED":
            height = _TOO_DEEP
            if depth > 0:
                return result, height
        memo[ck] = (result, height)
        return result, height

    def _resolve(self, ck: str, active: dict[str, None], depth: int) -> tuple[ResolvedValue, int]:
        found = self.__dict__.setdefault("_hits", {})  # a cut key is resolved again when asked for itself
        hits = found[ck] if ck in found else found.setdefault(ck, self._entries(ck))
        if not hits:
            return ResolvedValue(ck, "UNKNOWN", None), 0
        # .properties beats .yml inside a rank; .yml and .yaml of one rank can disagree
        top_rank = hits[0][0].rank
        same = [(s, e) for s, e in hits if s.rank == top_rank]
        values = {e.value for _, e in same}
        if len(values) > 1:
            return ResolvedValue(ck, "AMBIGUOUS", None, candidates=tuple(sorted((s.path, e.value, e.line)
                                                                                for s, e in same))), 0
        src, entry = hits[0]
        value, basis, missing, height = self._placeholders(entry.value, active, depth)
        if value is None:
            return ResolvedValue(ck, "UNKNOWN", None, entry, src.path, basis=basis, missing=tuple(missing)), height
        return ResolvedValue(ck, "RESOLVED", value, entry, src.path, basis=basis), height

    def _placeholders(self, value: str, active: dict[str, None], depth: int,
                      nesting: int = 0) -> tuple[str | None, str, list[str], int]:
        """Expand ``${name:default}`` left to right (each placeholder once; defaults are not
        re-expanded) for a value ``depth`` levels down: its keys are one level further, a nested
        default's keys two. A value longer than :data:`MAX_VALUE_CHARS` is not a value. Returns
        the value (None when unresolved), its basis, the keys missing and the height reached."""
        basis = "CONFIG_FILE"
        missing: list[str] = []
        parts: list[str] = []
        pos = 0
        size = 0
        height = 0
        for ph in placeholders(value):
            name, default = ph.name, ph.default
            if "${" in name:  # Spring fills a key's own placeholders first (${db.${env}.url}): a level down
                got, failed, height = self._fill_nested(name, name, missing, active, depth, nesting, height)
                if failed is not None:  # ${w.${w}} in w's value is circular, as Spring says
                    return failed
                name, default = self._split_filled(got)
            inner, below = self._get(canonical_key(name), active, depth + 1) if name.strip() else \
                (ResolvedValue(name, "UNKNOWN", None), 0)
            height = max(height, below + 1)
            if inner.basis == "BUDGET_EXHAUSTED":  # no default in its place: the key may well have a value
                # the chain as (deepest key reached, key this value names)
                return None, "BUDGET_EXHAUSTED", [*inner.missing[:1], name], _TOO_DEEP
            if inner.status == "RESOLVED" and inner.value is not None:
                rep = inner.value
                if inner.basis != "CONFIG_FILE":
                    basis = inner.basis
            elif inner.basis == "PLACEHOLDER_CYCLE":  # a default does not break a cycle: Spring refuses it
                return None, inner.basis, list(inner.missing), height
            elif default is not None:
                rep = default
                if "${" in default:  # a nested default: ${a:${b:30}}
                    rep, failed, height = self._fill_nested(default, name, missing, active, depth, nesting, height)
                    if failed is not None:
                        return failed
                basis = "PLACEHOLDER_DEFAULT"
            elif inner.basis in _PASSED_ON:  # why the key has no value is why this one has none
                return None, inner.basis, list(inner.missing), height
            else:
                missing.append(name)
                return None, "PLACEHOLDER_UNRESOLVED", missing, height
            parts.append(value[pos:ph.start])
            parts.append(rep)
            size += ph.start - pos + len(rep)
            pos = ph.end
            if size > MAX_VALUE_CHARS:
                return None, "VALUE_TOO_LONG", missing, height
        parts.append(value[pos:])
        out = "".join(parts)
        if len(out) > MAX_VALUE_CHARS:
            return None, "VALUE_TOO_LONG", missing, height
        return out, basis, missing, height


#: why a key a placeholder names has no value, passed on to every key whose value names it (without
#: a default): a cycle, a value over the size budget, or keys no source has
_PASSED_ON = ("PLACEHOLDER_CYCLE", "VALUE_TOO_LONG", "PLACEHOLDER_UNRESOLVED")


def _cut(ck: str) -> ResolvedValue:
    """The value of a key placeholders reach too deep to follow."""
    return ResolvedValue(ck, "UNKNOWN", None, basis="BUDGET_EXHAUSTED")


#: placeholders are followed at most this many levels deep — keys whose values name keys, and
#: defaults nested in defaults, together (the resolver recurses once per level: a longer chain is
#: BUDGET_EXHAUSTED, never a RecursionError)
MAX_PLACEHOLDER_DEPTH = 64
#: the height of a resolution that was cut: it fits nowhere
_TOO_DEEP = MAX_PLACEHOLDER_DEPTH + 1


#: nested placeholder defaults followed at most this deep
MAX_NESTING = 32


@dataclass(frozen=True)
class Placeholder:
    """A top-level ``${name[:default]}`` of a value: ``[start, end)`` offsets; the default may hold
    nested placeholders (``${a:${b:30}}``), None when there is no ``:``."""

    start: int
    end: int
    name: str
    default: str | None


def placeholders(value: str) -> list[Placeholder]:
    """The top-level placeholders of ``value``, braces balanced (linear; an unclosed ``${`` is text)."""
    out: list[Placeholder] = []
    i = value.find("${")
    while i >= 0:
        depth, j = 0, i + 2
        end = -1
        while j < len(value):
            if value.startswith("${", j):
                depth += 1
                j += 2
                continue
            if value[j] == "}":
                if depth == 0:
                    end = j
                    break
                depth -= 1
            j += 1
        if end < 0:
            break
        out.append(Placeholder(i, end + 1, *split_default(value[i + 2:end])))
        i = value.find("${", end + 1)
    return out


def split_default(body: str) -> tuple[str, str | None]:
    """A placeholder's body (what stands between ``${`` and ``}``) as ``(name, default)``: split at
    its first ``:`` unless a nested ``${`` comes first (then the name holds placeholders of its own,
    filled before a default is split off it: :meth:`SpringConfig._placeholders`); default None
    when there is no ``:``."""
    cut = body.find(":")
    nested = body.find("${")
    if cut >= 0 and (nested < 0 or cut < nested):
        return body[:cut], body[cut + 1:]
    return body, None


def profiles_match(condition: list[str], active: list[str]) -> bool:
    for p in condition:
        if p.startswith("!"):
            if p[1:] not in active:
                return True
        elif p in active:
            return True
    return False


def spring_config_files(paths: list[str], resource_roots: list[str]) -> list[tuple[str, str, str | None, str, int]]:
    """Spring Boot config files among ``paths``: ``(path, base, profile, ext, location rank)``.

    Location rank 0 is ``{root}/config/``, 1 the resource root itself."""
    out = []
    for p in paths:
        for root in resource_roots:
            prefix = f"{root}/" if root else ""
            if not p.startswith(prefix):
                continue
            rel = p[len(prefix):]
            loc = None
            if "/" not in rel:
                loc = 1
            elif rel.startswith("config/") and rel.count("/") == 1:
                loc = 0
                rel = rel[len("config/"):]
            if loc is None:
                continue
            m = _NAME.match(rel)
            if m:
                out.append((p, m.group(1), m.group(2), m.group(3), loc))
    return sorted(out)


def add_file_sources(cfg: SpringConfig, items: list[tuple[int, str, bool]], read_text, tier: int) -> list[str]:
    """Read, parse and add ``(order, path, by_name)`` files as sources of ``tier`` (see
    :meth:`SpringConfig.add_source`); returns the paths added. ``read_text(path)`` gives
    ``(text, blob_sha)`` or None; a file that cannot be read or parsed is listed in
    ``cfg.unreadable`` instead."""
    added: list[str] = []
    for order, path, by_name in items:
        got = read_text(path)
        if got is None:
            cfg.unreadable.append((path, "the file could not be read as text (binary, too large, or not a blob)",
                                   None))
            continue
        text, blob = got
        cf = parse_config(path, text)
        if cf.error:
            cfg.unreadable.append((path, cf.error, cf.error_line))
            continue
        cfg.add_source(path, cf, blob, tier, order, by_name=by_name)
        added.append(path)
    return added


#: rounds of ``spring.profiles.include`` read from profile-specific files (Boot < 2.4) at most
MAX_PROFILE_ROUNDS = 8
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _listed(rv: ResolvedValue) -> list[str]:
    return [p.strip() for p in (rv.value or "").split(",") if p.strip()] if rv.status == "RESOLVED" else []


def profile_set(names: list[str] | str, where: str) -> list[str]:
    """A profile set given by a user — ``dev,local`` or its items — as its names, each stripped.
    Raises :class:`~diting.errors.UserError` naming ``where`` when it names no profile or one of its
    names is empty or blank (``dev,,local``, ``,``): leaving the set out is how to ask for the
    default one (docs/scanning.md §10.2)."""
    from diting.errors import UserError
    items = names.split(",") if isinstance(names, str) else list(names)
    if not items or any(not isinstance(n, str) or not n.strip() for n in items):
        raise UserError(f"{where} {','.join(map(str, items))!r} names {'no profile' if not items else 'an empty profile'}: "
                        "give profile names separated by commas, or leave it out for the default profile set")
    return [n.strip() for n in items]


def expand_profiles(profiles: list[str], groups: dict[str, list[str]]) -> list[str]:
    """Spring Boot's profile-group expansion: each profile is followed by the members of its group
    (``spring.profiles.group.{name}``), recursively, each profile once."""
    stack = list(reversed(profiles))
    out: list[str] = []
    while stack:
        cur = stack.pop()
        if cur not in out:
            out.append(cur)
            stack.extend(reversed(groups.get(cur, [])))
    return out


def load_spring_config(files: list[tuple[str, str, str | None, str, int]], read_text, maven_lookup,
                       explicit_profiles: list[str] | None, resolve_import=None) -> SpringConfig:
    """Build the :class:`SpringConfig` of one module.

    ``read_text(path)`` returns ``(text, blob_sha)`` or None; ``maven_lookup(name)``
    resolves ``@name@`` tokens (Maven resource filtering with default profiles).
    ``resolve_import(location)`` gives the repository path a ``spring.config.import`` location
    (``classpath:x.yml``, ``file:./x.yml``, ``x.yml``) names, or None (not in the repository).

    The active profiles are ``explicit_profiles`` or ``spring.profiles.active``, then
    ``spring.profiles.include`` (of the base files, and of active profile-specific files as
    Spring Boot before 2.4 read them), expanded by ``spring.profiles.group.{p}`` (Boot 2.4+ order:
    active, then included, each followed by its group); ``default`` when none.
    Each imported file ranks just above the file that imports it (a later import above an
    earlier one); imports are followed one level deep.
    """
    cfg = SpringConfig([], "default")
    parse = _FileParser(cfg, read_text, maven_lookup)
    base = _base_sources(files, parse)
    notes: list[str] = []
    if explicit_profiles:
        active = list(explicit_profiles)
        cfg.profile_basis = "--profile"
    else:
        rv = base.get("spring.profiles.active")
        active = _listed(rv)
        if active:
            cfg.profile_basis = f"spring.profiles.active in {rv.path}:{_line(rv)}"
    groups = _profile_groups(base)
    included: list[str] = []
    rv = base.get("spring.profiles.include")
    if _listed(rv):
        included = _listed(rv)
        notes.append(f"spring.profiles.include in {rv.path}:{_line(rv)}")
    for _ in range(MAX_PROFILE_ROUNDS):
        profiles = expand_profiles(list(dict.fromkeys(active + included)), groups) or ["default"]
        _profile_sources(cfg, files, parse, profiles)
        more = _specific_includes(cfg, included)
        if not more:
            break
        included += more
        notes.append("spring.profiles.include of profile-specific files or documents")
    if groups and any(p in groups for p in cfg.profiles):
        notes.append("spring.profiles.group")
    if notes:
        cfg.profile_basis = "; ".join([cfg.profile_basis] + notes)
    if resolve_import is not None:
        _add_imports(cfg, resolve_import, parse)
    cfg.files_read.sort(key=lambda r: r.path)
    return cfg


class _FileParser:
    """Reads and parses the config files of one module once each (``parser(path)`` → the
    :class:`ConfigFile`, or None when ``read_text`` gives nothing), after Maven resource filtering.
    Records on ``cfg`` every file read (``files_read``), each ``@name@`` token left unfiltered
    (``unfiltered``) and each file that does not parse (``unreadable``)."""

    def __init__(self, cfg: SpringConfig, read_text, maven_lookup) -> None:
        self.cfg = cfg
        self.read_text = read_text
        self.maven_lookup = maven_lookup
        self.parsed: dict[str, ConfigFile] = {}

    def __call__(self, path: str) -> ConfigFile | None:
        if path in self.parsed:
            return self.parsed[path]
        got = self.read_text(path)
        if got is None:
            return None
        text, blob = got
        cfg = self.cfg
        cfg.files_read.append(ConfigFileRef(path, blob))
        filtered, missing = filter_resource(text, self.maven_lookup)
        for name in missing:
            cfg.unfiltered.append((path, name))
        cf = parse_config(path, filtered)
        if cf.error:
            cfg.unreadable.append((path, cf.error, cf.error_line))
        self.parsed[path] = cf
        return cf


def _line(rv: ResolvedValue) -> int:
    """The line of a resolved value's entry (0 when it has none)."""
    return rv.entry.line if rv.entry else 0


def _rank(base: str, profile: str | None, ext: str, loc: int, profiles: list[str]) -> tuple[int, int, float, int]:
    """The precedence rank of a config file (lower wins): its tier (``application`` above ``bootstrap``,
    a profile-specific file above its base file), its profile's order (the last listed of ``profiles``
    first), its location (odd; the files it imports take the fractions just below) and its extension
    (``.properties`` above ``.yml``)."""
    base_rank = 0 if base == "application" else 2
    if profile is None:
        tier = base_rank + 1
        pidx = 0
    else:
        tier = base_rank
        pidx = -profiles.index(profile)  # last listed first
    # odd: a file of a location; even and just below: the files it imports
    return (tier, pidx, 2 * loc + 1, 0 if ext == "properties" else 1)


def _base_sources(files: list[tuple[str, str, str | None, str, int]], parse: _FileParser) -> SpringConfig:
    """The config of the module's base files only (those of no profile), which the active and included
    profiles and the profile groups are read from."""
    base = SpringConfig([], "default")
    for path, b, profile, ext, loc in files:
        if profile is None:
            cf = parse(path)
            if cf is not None:
                base.sources.append(_Source(_rank(b, None, ext, loc, []), path, cf, None))
    base.sources.sort(key=lambda s: (s.rank, s.path))
    return base


def _profile_groups(base: SpringConfig) -> dict[str, list[str]]:
    """``spring.profiles.group.{name}`` of the base files: group name → its member profiles (a higher
    source's group replaces a lower one's)."""
    groups: dict[str, list[str]] = {}
    group_prefix = "spring.profiles.group."
    for src in reversed(base.sources):  # a higher source's group replaces a lower one's
        for doc in src.file.documents:
            for e in doc.entries:
                if e.key.startswith(group_prefix):
                    name = e.key[len(group_prefix):].split("[", 1)[0]
                    rv = base.get(group_prefix + name)
                    if rv.status == "RESOLVED" and name and "." not in name:
                        groups[name] = _listed(rv)
    return groups


def _profile_sources(cfg: SpringConfig, files: list[tuple[str, str, str | None, str, int]], parse: _FileParser,
                     profiles: list[str]) -> None:
    """Set ``cfg`` to the profile set ``profiles`` and its sources: the base files and the files of
    those profiles, ranked (:func:`_rank`)."""
    cfg.profiles = profiles
    cfg.sources = []
    for path, b, profile, ext, loc in files:
        if profile is not None and profile not in profiles:
            continue
        cf = parse(path)
        if cf is not None:
            cfg.sources.append(_Source(_rank(b, profile, ext, loc, profiles), path, cf, profile))
    cfg.sources.sort(key=lambda s: (s.rank, s.path))
    cfg._forget()


def _specific_includes(cfg: SpringConfig, included: list[str]) -> list[str]:
    """Profiles named by ``spring.profiles.include`` of each source of ``cfg`` on its own (Boot < 2.4
    also read an include of a profile-specific file or document) that are neither in ``included``
    nor active yet, in order, each once."""
    profiles = cfg.profiles
    return list(dict.fromkeys(p for src in cfg.sources
                              for p in _listed(SpringConfig(profiles, "", [src]).get("spring.profiles.include"))
                              if p not in included and p not in profiles))


def _add_imports(cfg: SpringConfig, resolve_import, parse) -> None:
    """The ``classpath:``/``file:`` files of each source's ``spring.config.import`` (one level),
    each ranked just above its importer, a later import above an earlier one."""
    added: list[_Source] = []
    for src in list(cfg.sources):
        one = SpringConfig(cfg.profiles, "", [src])
        hits = one._entries("spring.config.import")
        # each entry expanded on its own: one that does not resolve drops itself, not the others
        written = [x.strip() for x in (hits[0][1].value if hits else "").split(",") if x.strip()]
        items = [cfg.expand(x) or "" for x in written]
        for i, item in enumerate(items):
            if not item:
                continue
            loc = item[len("optional:"):] if item.startswith("optional:") else item
            m = _SCHEME.match(loc)
            if m and m.group(0) not in ("classpath:", "file:"):
                continue  # nacos:, configserver:, apollo: … are not files
            path = resolve_import(loc)
            if path is None or any(path == x.path for x in cfg.sources + added) or \
                    not path.endswith((".properties", ".yml", ".yaml")):
                continue
            cf = parse(path)
            if cf is None or cf.error:
                continue
            tier, pidx, loc_rank, _ = src.rank
            rank = (tier, pidx, loc_rank - (i + 1) / (len(items) + 1), 0 if path.endswith(".properties") else 1)
            added.append(_Source(rank, path, cf, src.profile))  # type: ignore[arg-type]
    if added:
        cfg.sources = sorted(cfg.sources + added, key=lambda s: (s.rank, s.path))
        cfg._forget()
