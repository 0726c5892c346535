"""The console script's entry point: Ctrl-C while the CLI's modules are still importing
(typer, rich, pydantic: a second or more on a slow disk) is one line and exit 130, as it
is once a command runs, not a traceback through the import machinery."""

from __future__ import annotations

import sys

INTERRUPTED = 130  # launchprof.errors.ExitCode.INTERRUPTED, not imported: it may be what was cut


def main() -> None:
    try:
        from launchprof.commands.warm_worker import prestart

        prestart(sys.argv[1:])  # analyze's worker imports torch while the CLI starts
        from launchprof.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("launchprof: error: interrupted\n")
        sys.exit(INTERRUPTED)
    cli_main()
