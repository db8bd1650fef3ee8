"""diting: what the Java source of a microservice estate provably does.

The pipeline is visible in the package layout: ``source`` (git at a commit) →
``inventory`` (Maven modules, services) → ``java`` / ``config`` (parsing and
indexes) → ``ir`` (records, package writer, verifier) → ``coverage`` → ``cli``.
"""

__version__ = "0.1.0"
