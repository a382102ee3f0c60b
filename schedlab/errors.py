"""The one exception type that reaches the user as a one-line message."""


class UserError(Exception):
    """A problem the user can fix: the CLI prints ``error: <message>`` and exits non-zero.

    The message must name the problem and the fix in one line, e.g.
    ``unknown machine 'foo'; run 'python3 run.py machines' to list them``.
    """
