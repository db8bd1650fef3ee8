"""Decoding source bytes into text, treating every file as hostile.

Policy (a pure function of the bytes and the module's declared source
encoding):

1. a byte-order mark decides (UTF-8, UTF-16 LE/BE); the BOM is removed;
2. strict UTF-8;
3. the module's declared ``project.build.sourceEncoding`` (strict), when given;
4. GB18030 (a superset of GBK, the usual legacy encoding of Chinese estates) when
   the bytes decode strictly and the non-ASCII text is mostly CJK — short GBK
   files are otherwise easily mistaken for EUC-KR or Big5 by statistical detection —
   unless the bytes are Japanese or Korean on firm evidence: Shift-JIS when, read so,
   kana make up a fifth of the non-ASCII text (GBK text never reads as kana there);
   EUC-KR when, read so, the text is mostly Hangul and charset-normalizer, asked to
   choose between the two, rejects GB18030 outright (short files, where it cannot tell, stay
   GB18030);
5. the encoding detector (charset-normalizer) restricted to the encodings seen
   in Chinese and Western Java estates, then a strict decode with its answer;
6. otherwise UTF-8 with replacement characters: the decode is *lossy* and the
   caller records ENCODING_FALLBACK.

Steps 4 and 5 are guesses (:attr:`DecodedText.guessed`, the reason in :data:`GUESS_REASONS`):
the scan names them, one ENCODING_GUESSED per module and encoding. A decode is in *doubt*
(:attr:`DecodedText.doubt`, ENCODING_UNCERTAIN per file) when lines of a file read in another
encoding than UTF-8 are valid UTF-8 with non-ASCII text (the file mixes encodings: those lines are
misread), or when the detector finds another encoding as likely that reads the file differently.

Line ends (one rule for the scanner and ``diting verify``): a line ends at ``\\r\\n``, at a lone
``\\r`` (old Mac files) or at ``\\n`` — where javac, ``java.util.Properties``, XML and YAML end
lines. :func:`decode_bytes` and :func:`decode_as` return the text with every lone ``\\r`` made a
``\\n`` (:func:`normalize_line_ends`): one character for one, and CR and LF have one width in every
encoding diting decodes (one byte in UTF-8, GB18030 and the other ASCII-compatible codecs, two in
UTF-16), so character offsets — and the byte offsets of the re-encoded UTF-8 a parser reads — stay
those of the file. Every reader then counts lines on ``\\n`` alone (tree-sitter rows, lxml's
``sourceline``, YAML marks, regex line counts, :func:`split_lines`) and they all agree with the
verifier. The ``\\r`` of a CRLF stays in its line (docs/ir.md §6: ``\\r`` kept), so a segment's content
is its lines joined by ``\\n``: a CRLF file's text as written, a lone-CR file's with LF for CR.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, replace

import charset_normalizer

#: encodings the detector may choose among (order is irrelevant to it)
DETECTOR_CANDIDATES = ["gb18030", "big5", "shift_jis", "euc_kr", "cp1252", "latin_1"]

DETECTOR_NAME = "charset-normalizer"
DETECTOR_VERSION = charset_normalizer.__version__


#: why an encoding was guessed (:attr:`DecodedText.basis` of a guess), as a clause of a message
GUESS_REASONS = {
    "cjk": "GB18030 reads their non-ASCII text as mostly CJK ideographs",
    "kana": "Shift-JIS reads a fifth or more of their non-ASCII text as Japanese kana",
    "hangul": "EUC-KR reads their text as mostly Hangul, and charset-normalizer rejects GB18030 for them",
    "detector": "charset-normalizer chose it among " + ", ".join(DETECTOR_CANDIDATES),
}


@dataclass(frozen=True)
class DecodedText:
    """Decoded text of a file: ``encoding`` is a Python codec name, ``lossy`` is True
    when bytes had to be replaced, ``bom`` when a byte-order mark was removed. ``basis`` says how
    the encoding was chosen: ``bom``, ``utf-8``, ``declared`` (facts), ``cjk``, ``kana``, ``hangul``,
    ``detector`` (guesses, :data:`GUESS_REASONS`) or ``fallback`` (lossy); ``doubt`` why the text
    may be misread although it decoded (see the module docstring), else None."""

    text: str
    encoding: str
    lossy: bool
    bom: bool
    basis: str = "utf-8"
    doubt: str | None = None
    #: the lines (1-based) a doubt is about (lines of another encoding), empty when it is the whole file
    doubt_lines: tuple[int, ...] = ()

    @property
    def guessed(self) -> bool:
        """Whether the encoding is a guess (neither a byte-order mark, UTF-8 nor a declaration)."""
        return self.basis in GUESS_REASONS


_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds a surrogate code point (a C-speed scan)."""
    return not text.isascii() and _ANY_SURROGATE.search(text) is not None


def scrub_surrogates(text: str) -> str:
    """``text`` with every surrogate pair joined into its character and every lone surrogate
    replaced by U+FFFD, so that it can be written as UTF-8 (escapes in Java, properties and
    YAML can spell surrogates one by one)."""
    if not has_surrogates(text):
        return text

    def repl(m: re.Match[str]) -> str:
        g = m.group()
        if len(g) == 2:
            return chr(0x10000 + ((ord(g[0]) - 0xD800) << 10) + (ord(g[1]) - 0xDC00))
        return "\ufffd"

    return _SURROGATES.sub(repl, text)


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError, ValueError):
        return None
    if has_surrogates(text):
        return None  # no text encoding yields surrogates; an escape codec does
    return text


#: codecs that turn bytes into text by interpreting escapes or transforms, never a charset
_NOT_CHARSETS = ("unicode_escape", "raw_unicode_escape", "punycode", "idna", "undefined", "unicode_internal")


def _codec_name(encoding: str) -> str | None:
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name.replace("-", "_") in _NOT_CHARSETS:
        return None
    return info.name


_LONE_CR = re.compile("\r(?!\n)")


def normalize_line_ends(text: str) -> str:
    """``text`` with each lone ``\\r`` (one not followed by ``\\n``) replaced by ``\\n``; same length,
    CRLF kept (see the module docstring)."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


def decode_bytes(data: bytes, declared: str | None = None) -> DecodedText:
    """Decode ``data`` by the policy above, lone CRs made LFs (:func:`normalize_line_ends`). Never raises."""
    d = _decode(data, declared)
    text = normalize_line_ends(d.text)
    return d if text is d.text else replace(d, text=text)


def decode_as(data: bytes, encoding: str) -> str:
    """``data`` decoded as a scan recorded it: ``encoding`` (a Python codec name; an unknown one
    reads as UTF-8) with replacement characters, its byte-order mark removed, lone CRs made LFs —
    the text :func:`decode_bytes` gave when it chose ``encoding``. Never raises."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if encoding == enc and data.startswith(bom):
            data = data[len(bom):]
            break
    try:
        text = data.decode(encoding, "replace")
    except LookupError:
        text = data.decode("utf-8", "replace")
    return normalize_line_ends(text)


def _decode(data: bytes, declared: str | None) -> DecodedText:
    if data.startswith(codecs.BOM_UTF8):
        body = data[len(codecs.BOM_UTF8):]
        text = _strict(body, "utf-8")
        if text is not None:
            return DecodedText(text, "utf-8", False, True, "bom")
        return DecodedText(body.decode("utf-8", "replace"), "utf-8", True, True, "fallback")
    for bom, enc in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            body = data[len(bom):]
            text = _strict(body, enc)
            if text is not None:
                return DecodedText(text, enc, False, True, "bom")
            return DecodedText(body.decode(enc, "replace"), enc, True, True, "fallback")
    text = _strict(data, "utf-8")
    if text is not None:
        return DecodedText(text, "utf-8", False, False)
    if declared:
        name = _codec_name(declared)
        if name and name != "utf-8":
            text = _strict(data, name)
            if text is not None:
                return _mixed(DecodedText(text, name, False, False, "declared"), data)
    text = _strict(data, "gb18030")
    if text is not None and _mostly_cjk(text):
        return _mixed(_japanese_or_korean(data) or DecodedText(text, "gb18030", False, False, "cjk"), data)
    matches = charset_normalizer.from_bytes(data, cp_isolation=DETECTOR_CANDIDATES)
    best = matches.best()
    if best is not None:
        name = _codec_name(best.encoding)
        if name:
            text = _strict(data, name)
            if text is not None:
                return _mixed(DecodedText(text, name, False, False, "detector", _contested(data, text, best, matches)),
                              data)
    return DecodedText(data.decode("utf-8", "replace"), "utf-8", True, False, "fallback")


def _share(text: str, ranges: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """``(characters in ranges, non-ASCII characters)`` of ``text``."""
    non_ascii = [ord(c) for c in text if ord(c) > 0x7F]
    return sum(1 for o in non_ascii if any(lo <= o <= hi for lo, hi in ranges)), len(non_ascii)


_CJK = ((0x4E00, 0x9FFF), (0x3000, 0x303F), (0xFF00, 0xFFEF), (0x3400, 0x4DBF), (0x20000, 0x2FFFF))
_KANA = ((0x3040, 0x30FF),)
_HANGUL = ((0xAC00, 0xD7A3),)


def _mostly_cjk(text: str) -> bool:
    """True when at least 60% of the non-ASCII characters are CJK ideographs, CJK
    punctuation or full-width forms — what a GBK/GB18030 source looks like once decoded."""
    cjk, non_ascii = _share(text, _CJK)
    return non_ascii > 0 and cjk * 10 >= non_ascii * 6


def _japanese_or_korean(data: bytes) -> DecodedText | None:
    """Bytes GB18030 reads as mostly CJK that are Japanese or Korean on firm evidence (step 4 of the
    policy), else None. Shift-JIS: kana are at least a fifth of its non-ASCII text (GBK bytes read
    as Shift-JIS give half-width katakana, never these). EUC-KR: mostly Hangul read so — which
    GBK's common ideographs also give — and charset-normalizer rejecting GB18030 (short files it
    cannot tell apart stay GB18030)."""
    text = _strict(data, "shift_jis")
    if text is not None:
        kana, non_ascii = _share(text, _KANA)
        if kana >= 2 and kana * 5 >= non_ascii:
            return DecodedText(text, "shift_jis", False, False, "kana")
    text = _strict(data, "euc_kr")
    if text is not None:
        hangul, non_ascii = _share(text, _HANGUL)
        if hangul * 10 >= non_ascii * 6:
            # confident only when it rejects GB18030 outright: its chaos scores of short GBK and EUC-KR
            # sources overlap (GBK files score up to 0.06 worse as GB18030 than as EUC-KR)
            found = {m.encoding for m in charset_normalizer.from_bytes(data, cp_isolation=["gb18030", "euc_kr"])}
            if found == {"euc_kr"}:
                return DecodedText(text, "euc_kr", False, False, "hangul")
    return None


def _contested(data: bytes, text: str, best, matches) -> str | None:
    """Why the detector's choice is weak: another candidate it rates as likely (no more chaos) reads
    the bytes strictly into other text; else None."""
    for m in matches:
        name = _codec_name(m.encoding)
        if m is best or name is None or m.chaos > best.chaos:
            continue
        other = _strict(data, name)
        if other is not None and other != text:
            return (f"charset-normalizer finds {name} as likely as {_codec_name(best.encoding)}, and it reads the "
                    "file differently")
    return None


def uncertain_message(path: str, encoding: str, basis: str, doubt: str) -> str:
    """The message of ENCODING_UNCERTAIN for ``path`` read as ``encoding`` (chosen by ``basis``)."""
    how = "a guess" if basis in GUESS_REASONS else "its declared encoding" if basis == "declared" else basis
    return f"{path}: read as {encoding} ({how}), but {doubt}"


def guessed_message(encoding: str, basis: str, paths: list[str], declared: str | None) -> str:
    """The message of ENCODING_GUESSED for the files ``paths`` of one module read as ``encoding``
    by the guess ``basis``; ``declared``: the module's project.build.sourceEncoding, if any."""
    named = ", ".join(paths[:_MAX_NAMED_FILES]) + (f" and {len(paths) - _MAX_NAMED_FILES} more"
                                                  if len(paths) > _MAX_NAMED_FILES else "")
    if not declared:
        decl = "not UTF-8 and the module declares no project.build.sourceEncoding"
    elif _codec_name(declared) == "utf-8":
        decl = f"not UTF-8, which the module declares ({declared}, project.build.sourceEncoding)"
    else:
        decl = f"neither UTF-8 nor {declared} (project.build.sourceEncoding)"
    return f"{len(paths)} file(s) of this module read as {encoding}, a guess: they are {decl}, and " \
           f"{GUESS_REASONS[basis]} ({named})"


#: files named in one ENCODING_GUESSED at most
_MAX_NAMED_FILES = 10
_LINE_END = re.compile(rb"\r\n|\r|\n")
#: lines named in a doubt at most
_MAX_NAMED_LINES = 5


def _mixed(d: DecodedText, data: bytes) -> DecodedText:
    """``d`` (bytes read in another encoding than UTF-8) with a doubt when some of its lines are valid
    UTF-8 with non-ASCII text: the file mixes encodings, and those lines are misread."""
    lines = [n for n, line in enumerate(_LINE_END.split(data), 1) if not line.isascii()
             and _strict(line, "utf-8") is not None]
    if not lines:
        return d
    named = ", ".join(map(str, lines[:_MAX_NAMED_LINES])) + (f" and {len(lines) - _MAX_NAMED_LINES} more"
                                                            if len(lines) > _MAX_NAMED_LINES else "")
    many = len(lines) > 1
    why = (f"line{'s' if many else ''} {named} {'are' if many else 'is'} valid UTF-8 with non-ASCII text although "
           f"the file as a whole is not: it mixes encodings, and {'those lines are' if many else 'that line is'} "
           f"likely misread as {d.encoding}")
    return replace(d, doubt=f"{d.doubt}; {why}" if d.doubt else why, doubt_lines=tuple(lines))


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` by the rule of the module docstring: split on ``\\n`` and on a lone ``\\r``
    (the ``\\r`` of a CRLF kept in its line). A trailing line end gives no extra line."""
    lines = normalize_line_ends(text).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/v1"


def is_lfs_pointer(data: bytes) -> bool:
    """A Git LFS pointer file in place of the real content."""
    return len(data) < 1024 and data.startswith(LFS_POINTER_PREFIX)
