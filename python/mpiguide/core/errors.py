"""The one exception type that reaches the user as a message instead of a traceback."""


class MpiguideError(Exception):
    """A problem the user can fix: the message says what, where, and what to do."""
