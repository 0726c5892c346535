"""Schema migrations: each ``migrate_N_to_N+1`` turns version N of a document into N+1.

Reading a file walks the registry from the file's version up to this launchprof's, so an
old report or run keeps loading after the format grows (pyperf keeps its old files
readable the same way). A version newer than this launchprof knows is a usage error that
says to upgrade.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from launchprof.errors import UsageError
from launchprof.run.header_records import RUN_FORMAT_VERSION
from launchprof.model.core import SCHEMA_VERSION

Migration = Callable[[dict[str, Any]], dict[str, Any]]


def migrate_report_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 had the prediction only as a number, and no speedup method.

    Version 1 computed the speedup as the ratio of the medians with a bootstrap interval,
    so that is what its ``method`` says. Hazard fingerprints are derived on load."""
    out = dict(data)
    if isinstance(out.get("speedup"), dict):
        out["speedup"] = {"method": "ratio of medians; 95% bootstrap interval (in-loop timings)", **out["speedup"]}
    if out.get("prediction") is None and isinstance(out.get("predicted_speedup"), (int, float)):
        out["prediction"] = {"median": out["predicted_speedup"], "basis": "version 1 report: point estimate only"}
    for part in ("eager", "replay"):
        if isinstance(out.get(part), dict):
            out[part] = {"timing": "in-loop", **out[part]}
    out["schema_version"] = 2
    return out


def migrate_report_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 had ``buckets`` as a list, one entry per varying argument, with an
    estimated pool; version 3 has one measured plan (launchprof.model.bucket_plan)."""
    from launchprof.run.migrate_buckets import plan_from_list

    out = dict(data)
    out["buckets"] = plan_from_list(out.get("buckets"))
    out["schema_version"] = 3
    return out


REPORT_MIGRATIONS: dict[int, Migration] = {1: migrate_report_1_to_2, 2: migrate_report_2_to_3}
# The run file starts at format 1; a future format 2 adds ``1: migrate_run_1_to_2`` here.
RUN_MIGRATIONS: dict[int, Migration] = {}


def migrate(data: dict[str, Any], key: str, current: int, migrations: dict[int, Migration], what: str) -> dict[str, Any]:
    """Walk ``data`` from its version (``data[key]``) up to ``current``."""
    version = data.get(key)
    if version is None:
        raise UsageError(f"not a launchprof {what}: it has no {key}")
    if not isinstance(version, int) or isinstance(version, bool):
        raise UsageError(f"{what} has no valid {key} (found {version!r}): not a launchprof {what}")
    if version > current:
        raise UsageError(
            f"{what} {key} {version} is newer than this launchprof reads ({current}): upgrade launchprof"
        )
    while version < current:
        step = migrations.get(version)
        if step is None:
            raise UsageError(f"{what} {key} {version} is too old for this launchprof (it reads {current}); re-run analyze")
        data = step(data)
        version = data[key]
    return data


def migrate_report(data: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise UsageError("not a launchprof report (top level is not an object)")
    return with_text_hazards(migrate(data, "schema_version", SCHEMA_VERSION, REPORT_MIGRATIONS, "report"))


# A hazard written before hazards had codes has only its words. The one figure a renderer
# needs from them, the max |diff| a replay-mismatch names (the report's validation row
# states its own), is read here, once, so no renderer parses a sentence.
_NUMBER = r"[-+]?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?"
_DIFFS = (
    re.compile(r"\s*\(max\s*(?:\|diff\||abs diff)\s*" + _NUMBER + r"\)"),
    re.compile(r"[,:;]?\s*max\s*(?:\|diff\||abs diff)\s*" + _NUMBER),
)


def with_text_hazards(data: dict[str, Any]) -> dict[str, Any]:
    """Hazards without a code get the ``text`` code: their message, and the message less
    the max |diff| it names (``without_diff``), where it names one."""
    hazards = data.get("hazards")
    if not isinstance(hazards, list) or all(not isinstance(h, dict) or h.get("code") for h in hazards):
        return data
    out = []
    for h in hazards:
        if isinstance(h, dict) and not h.get("code") and isinstance(h.get("message"), str):
            params: dict[str, Any] = {"text": h["message"]}
            if any(p.search(h["message"]) for p in _DIFFS):
                base = h["message"]
                for pattern in _DIFFS:
                    base = pattern.sub("", base)
                params["without_diff"] = base.rstrip(" ;,:")
            h = {**h, "code": "text", "params": params}
        out.append(h)
    return {**data, "hazards": out}


def migrate_header(data: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise UsageError("not a launchprof run (its header is not an object)")
    return migrate(data, "format_version", RUN_FORMAT_VERSION, RUN_MIGRATIONS, "run file")
