"""Reading repository files for the Gradle reader (docs/gradle.md): decoded and bounded text, each
build script parsed once, ``gradle.properties`` files, and a finding for every file that cannot be
read (too large, unreadable) or whose script has syntax errors. Used by ``inventory/gradle.py`` and
``inventory/gradle_settings.py``.
"""

from __future__ import annotations

from typing import Callable

from diting.config.sources import parse_properties
from diting.findings import Finding
from diting.inventory.gradle_ast import Script
from diting.inventory.gradle_script import read_script


class GradleFiles:
    """Repository files as the Gradle reader sees them (decoded, bounded, never outside the tree).

    ``read``: path → (text, encoding, problem) for a repository file; ``tree``: every regular path
    of the tree. ``scripts`` holds the syntax trees read so far (the model drops a build's once it
    is read), ``encodings`` and ``problems`` what reading each file gave, ``unread`` the build files
    that exist but could not be read."""

    def __init__(self, read: Callable[[str], tuple[str | None, str, str | None]], tree: set[str]) -> None:
        self._read = read
        self.tree = tree
        self.scripts: dict[str, Script] = {}
        self.encodings: dict[str, str] = {}
        self.problems: dict[str, str] = {}
        self.unread: set[str] = set()

    def text(self, path: str) -> str | None:
        """The decoded text of ``path``, or None when it cannot be read (the problem is kept)."""
        text, enc, problem = self._read(path)
        self.encodings[path] = enc
        if problem:
            self.problems[path] = problem
        return text

    def script(self, path: str) -> Script | None:
        """The syntax tree of the build script at ``path`` (read once), or None when it cannot be read."""
        if path in self.scripts:
            return self.scripts[path]
        text = self.text(path)
        if text is None:
            return None
        sc = read_script(path, text)
        self.scripts[path] = sc
        return sc

    def not_read(self, path: str, findings: list[Finding], module: str | None, what: str) -> None:
        """Count ``path`` as unread and say so in ``findings`` (FILE_TOO_LARGE or FILE_UNREADABLE of
        ``module``; ``what`` names what the file is to the build)."""
        self.unread.add(path)
        problem = self.problems.get(path, "unreadable")
        code = "FILE_TOO_LARGE" if problem.startswith("too_large") else "FILE_UNREADABLE"
        findings.append(Finding(code, f"{path} is not read ({problem}); {what}, what it declares is unknown",
                                path, 0, 0, module, f"not-read|{path}"))

    def properties(self, path: str, findings: list[Finding]) -> dict[str, str]:
        """The entries of the ``gradle.properties`` at ``path`` (key → value); empty when it cannot
        be read, and a PARSE_ERROR in ``findings`` when Gradle would fail to load it."""
        text = self.text(path)
        if text is None:
            self.not_read(path, findings, None, "Gradle properties")
            return {}
        cf = parse_properties(path, text)
        if cf.error:  # Gradle loads it with java.util.Properties: the build fails there
            self.unread.add(path)
            findings.append(Finding("PARSE_ERROR", f"{path}: {cf.error} (line {cf.error_line}); the build's "
                                    "properties are unknown", path, cf.error_line or 0, cf.error_line or 0, None,
                                    f"props-error|{path}"))
        return {e.raw_key: e.value for doc in cf.documents for e in doc.entries}


def script_errors(sc: Script, findings: list[Finding], module: str | None) -> None:
    """The reader's errors of ``sc`` (at most 20) as GRADLE_NOT_STATIC findings of ``module``."""
    for line, msg in sc.errors[:20]:
        findings.append(Finding("GRADLE_NOT_STATIC", f"{sc.path}:{line}: {msg}; the statement is not read",
                                sc.path, line, line, module, f"syntax|{line}|{msg}"))
