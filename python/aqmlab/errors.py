"""Errors that the CLI turns into one line and exit code 2."""


class InputError(ValueError):
    """Bad user input. The message names the field and what is allowed.

    The CLI prints ``error: <message>`` on one line and exits with code 2.
    """
