"""The bounds of every number a command-line option takes, in one module light enough for the CLI
to read while it parses (a value outside its bounds is a user error, exit 2, never a failure deep
inside the work); the modules that enforce them import them from here."""

from __future__ import annotations

#: more worker processes than this never help (and each costs a process start): ``--jobs`` 0..this
MAX_WORKERS = 64
#: the largest ``--max-file-bytes``: a blob is read whole into memory, and a package records the
#: budget as a 64-bit integer
MAX_FILE_BYTES_LIMIT = 1024 * 1024 * 1024
#: ``impact --depth``: cross-service hops
MIN_IMPACT_DEPTH, MAX_IMPACT_DEPTH = 1, 3
#: the largest ``impact --budget`` (walk states expanded)
MAX_IMPACT_BUDGET = 100_000_000
