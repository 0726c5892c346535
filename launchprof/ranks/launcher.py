"""``python -m launchprof.ranks.launcher EXITS.json TORCHRUN_ARGS...``: torch's own launcher
(``torch.distributed.run``, the code behind ``torchrun``), with each rank's exit kept.

It parses the arguments with torchrun's own parser and runs torchrun's own ``run``, so
every option, the rendezvous and the signal handling are torch's. The one difference: when
ranks fail, torchrun prints a table and exits 1; here each failed rank's exit status (or
signal) is also written to ``EXITS.json`` (``{"RANK": {"exitcode", "signal", "pid"}}``),
so the report can say which rank died and how. Ranks missing from it ended with status 0,
or were stopped by the launcher after another rank failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def failures_of(exc: Any) -> dict[str, dict[str, Any]]:
    """``ChildFailedError.failures`` (global rank -> ProcessFailure) as plain data."""
    out: dict[str, dict[str, Any]] = {}
    for rank, failure in (getattr(exc, "failures", None) or {}).items():
        code = getattr(failure, "exitcode", None)
        try:
            signal = failure.signal_name() if isinstance(code, int) and code < 0 else None
        except Exception:
            signal = None
        out[str(rank)] = {"exitcode": code, "signal": signal, "pid": getattr(failure, "pid", None)}
    return out


def main(argv: list[str]) -> int:
    exits = Path(argv[0])
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    args = parse_args(argv[1:])
    try:
        run(args)
    except ChildFailedError as exc:
        exits.write_text(json.dumps(failures_of(exc)), encoding="utf-8")
        return 1
    exits.write_text("{}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
