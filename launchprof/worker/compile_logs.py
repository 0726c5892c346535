"""What torch.compile says about itself while it compiles: its log records and counters.

torch keeps skip reasons and graph breaks in logging "artifacts" that are off unless
TORCH_LOGS names them (``graph_breaks``, ``cudagraphs``, ``perf_hints``, ``recompiles``),
and in ``torch._dynamo.utils.counters``. :class:`TorchLogTap` turns those artifact loggers
on for the duration of a compile, collects their records without letting them reach the
user's terminal, and puts every logger back as it was. The records stay raw here: the
translation into hazard kinds is the analysis's (launchprof.analysis.compile_findings), so it
can be tested on recorded logs and re-run on old runs.
"""

from __future__ import annotations

import logging
from typing import Any

# torch's artifact loggers launchprof listens to (their qualified names end in ``.__NAME``).
ARTIFACTS = ("graph_breaks", "cudagraphs", "perf_hints", "recompiles")
# Ordinary loggers whose warnings say why compile fell back (recompile limit, skipped frames).
WARNING_LOGGERS = ("torch._dynamo", "torch._inductor")
MAX_RECORDS = 300
MAX_MESSAGE = 4000
# Counter groups of torch._dynamo.utils.counters the analysis reads.
COUNTER_GROUPS = ("graph_break", "inductor", "stats", "frames", "unimplemented", "recompiles")


class _Collect(logging.Handler):
    def __init__(self, records: list[dict[str, Any]]) -> None:
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) >= MAX_RECORDS:
            return
        try:
            message = record.getMessage()
        except Exception as exc:  # a malformed torch log call must not stop the compile
            message = f"{record.msg!r} ({type(exc).__name__})"
        self.records.append(
            {"logger": record.name, "level": record.levelname, "message": message[:MAX_MESSAGE]}
        )


def _artifact_loggers() -> list[logging.Logger]:
    """Every registered artifact logger of the wanted kinds (importing the modules that
    register them first: they are created on import)."""
    import torch._dynamo.convert_frame  # noqa: F401
    import torch._dynamo.symbolic_convert  # noqa: F401
    import torch._inductor.cudagraph_trees  # noqa: F401
    from torch._logging._internal import log_registry

    names = sorted(q for q in log_registry.artifact_log_qnames if q.rsplit(".__", 1)[-1] in ARTIFACTS)
    return [logging.getLogger(q) for q in names]


def _enable_artifacts() -> list[str]:
    """Some records are built only when torch's own log state names the artifact (the
    recompile reasons): name them for the duration, return the names added."""
    try:
        from torch._logging._internal import log_state
    except Exception:
        return []
    added = [a for a in ARTIFACTS if a not in log_state.artifact_names]
    for name in added:
        log_state.enable_artifact(name)
    return added


def _disable_artifacts(names: list[str]) -> None:
    try:
        from torch._logging._internal import log_state
    except Exception:
        return
    for name in names:
        log_state.artifact_names.discard(name)


class TorchLogTap:
    """Context manager: collect torch.compile's artifact records into ``records``."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._saved: list[tuple[logging.Logger, int, bool, bool]] = []
        self._handler = _Collect(self.records)
        self._enabled: list[str] = []
        self._detached: list[tuple[logging.Logger, logging.Handler]] = []  # torch's own, put back after

    def __enter__(self) -> TorchLogTap:
        try:
            artifacts = _artifact_loggers()
        except Exception:  # a torch without these modules: counters still work
            artifacts = []
        for log in artifacts:
            self._listen(log, logging.DEBUG, propagate=False)
        self._enabled = _enable_artifacts()
        for name in WARNING_LOGGERS:
            # launchprof's compile is not the user's: its warnings stay out of their terminal.
            log = logging.getLogger(name)
            self._saved.append((log, log.level, log.propagate, log.disabled))
            self._detached += [(log, h) for h in log.handlers]
            for h in list(log.handlers):
                log.removeHandler(h)
            log.propagate = False
            log.addHandler(self._warnings)
        return self

    @property
    def _warnings(self) -> logging.Handler:
        if not hasattr(self, "_warn_handler"):
            self._warn_handler = _Collect(self.records)
            self._warn_handler.setLevel(logging.WARNING)
        return self._warn_handler

    def _listen(self, log: logging.Logger, level: int, propagate: bool) -> None:
        self._saved.append((log, log.level, log.propagate, log.disabled))
        log.setLevel(level)
        log.propagate = propagate
        log.disabled = False
        log.addHandler(self._handler)

    def __exit__(self, *exc: Any) -> None:
        for log, level, propagate, disabled in reversed(self._saved):
            log.removeHandler(self._handler)
            log.removeHandler(self._warnings)
            log.setLevel(level)
            log.propagate = propagate
            log.disabled = disabled
        self._saved.clear()
        _disable_artifacts(self._enabled)
        for log, handler in self._detached:
            log.addHandler(handler)
        self._detached.clear()


def counters_now() -> dict[str, dict[str, int]]:
    """A plain copy of torch._dynamo's counters (the groups the analysis reads)."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return {}
    out: dict[str, dict[str, int]] = {}
    for group in COUNTER_GROUPS:
        values = counters.get(group) or {}
        out[group] = {str(k)[:MAX_MESSAGE]: int(v) for k, v in values.items()}
    return out


def clear_counters() -> None:
    try:
        from torch._dynamo.utils import counters

        counters.clear()
    except Exception:
        pass
