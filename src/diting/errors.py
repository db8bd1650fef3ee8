"""Errors a user can cause.

Every such error ends the command with one clear message and a non-zero exit
code; the CLI catches :class:`UserError` and never shows a traceback for it.
"""


class UserError(Exception):
    """A problem with the user's input (bad path, unknown commit, corrupt package).

    ``exit_code`` is the process exit status the CLI uses (default 2).
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
