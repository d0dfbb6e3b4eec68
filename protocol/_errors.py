"""Errors a user sees as one line: a bad ``-T`` value, a bad reference-agent name.

Inspect's CLI prints an exception raised while it builds a task or a model as a long
traceback. A ``SilentException`` is the one exception it ends on quietly (exit 1) in
every display mode; our errors print their own line and derive from it. Inspect has
no public way to do this, so it is imported from a private module in this one place:
``tests/evals/test_cli.py`` pins the behaviour (one line on stderr, exit 1, in every
display mode), and without the class the errors still work, shown with a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

try:
    from inspect_ai._util.error import (  # inspect-evals-lint: ignore[private_api_imports] -- no public quiet exit
        SilentException as QuietExit,
    )
except ImportError:  # pragma: no cover
    QuietExit = Exception  # type: ignore[misc,assignment]


__all__ = ["QuietExit", "TaskParameterError", "reported"]


class TaskParameterError(ValueError, QuietExit):
    """A bad ``-T`` value: a ValueError whose message :func:`reported` prints as one line.

    Not Inspect's PrerequisiteError: its CLI prints that through the rich console,
    which ``--display none`` makes quiet, so the message would be lost.
    """

    reported = False
    """True once the message is printed, so a caller does not print it again."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = message

    def __str__(self) -> str:
        return str(self.args[0])


@contextmanager
def reported() -> Iterator[None]:
    """Print a TaskParameterError raised inside as one line on stderr, then re-raise it.

    The task prints the line itself because Inspect's CLI shows nothing for this
    error under ``--display none``; the error stays silent to the CLI otherwise, so
    every display mode shows the same single line on stderr and exits 1.
    """
    try:
        yield
    except TaskParameterError as error:
        if not error.reported:
            print(error, file=sys.stderr, flush=True)
            error.reported = True
        raise
