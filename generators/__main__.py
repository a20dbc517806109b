"""Entry point of ``python -m generators``: a thin shim that runs ``driver.cli.main``.

The command lives in the driver layer (``driver/``, above ``generators`` and ``rulesets``); this module keeps
the command name users and the docs know. It is the one place where ``generators`` imports upward, and it is
never imported by anything (docs/architecture.md, "Layers"). Ctrl-C, even while modules load, is one line and
status 130; a driver that cannot be imported (a partial checkout) is one line and status 2.
"""

import os
import signal
import sys

PROG = "python -m generators"
USAGE = 2
INTERRUPTED = 130


def _interrupted(error: BaseException | None) -> bool:
    """Whether a Ctrl-C caused `error`: Python wraps a KeyboardInterrupt raised while a class body is set up
    (a pydantic model at import) in a RuntimeError whose cause it is."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__cause__ or error.__context__
    return False


def _run() -> int:
    try:
        from driver.cli import main
    except ImportError as error:
        sys.stderr.write(f"{PROG}: error: the driver cannot be imported: {error}\n")
        return USAGE
    return main()


try:
    status = _run()
    # The work is done. A Ctrl-C from here on would land in interpreter shutdown, where CPython has put back
    # the default handler (the process dies by the signal, saying nothing) or runs threading's shutdown hook
    # (a traceback after a finished run); ignoring it lets the run end with its own status.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
except BaseException as error:
    if not _interrupted(error):
        raise
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stderr.write(f"{PROG}: interrupted\n")
    status = INTERRUPTED
if status == INTERRUPTED:
    # CPython 3.11 ends the process by SIGINT, not with this status, once a KeyboardInterrupt has passed
    # through code run by exec() of a string (dataclasses build methods so), even one caught since.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(INTERRUPTED)
sys.exit(status)
