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
#: ``query --max-rows``: rows printed at most (more are cut, and a note says so)
DEFAULT_MAX_ROWS, MAX_QUERY_ROWS = 10_000, 100_000_000
#: ``query --timeout``: seconds a query may run before it is interrupted (exit 2)
DEFAULT_QUERY_TIMEOUT, MAX_QUERY_TIMEOUT = 60, 86_400
#: ``query --max-value-chars``: characters of one text value printed at most (a longer one is cut)
DEFAULT_MAX_VALUE_CHARS, MAX_VALUE_CHARS_LIMIT = 100_000, 100_000_000
