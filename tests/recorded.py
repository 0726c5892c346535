"""Raw worker runs recorded on an H200 (scripts/gpu-check + scripts/record-test-data)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

from launchprof.evidence import Evidence, parse_events

DATA = Path(__file__).parent / "data"
RUNS = DATA / "runs"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def run_names() -> list[str]:
    return sorted(p.name for p in RUNS.iterdir() if (p / "events.jsonl.gz").exists()) if RUNS.exists() else []


def load_events(name: str, tmp: Path) -> list[dict[str, Any]]:
    """Events of one run, with trace paths pointing at unpacked copies under ``tmp`` and
    source paths at this checkout's sample_models (the run was recorded elsewhere)."""
    run = RUNS / name
    with gzip.open(run / "events.jsonl.gz", "rt", encoding="utf-8") as fh:
        events = [json.loads(line) for line in fh if line.strip()]
    text = json.dumps(events)
    text = re.sub(r'"/[^"]*?/sample_models/', json.dumps(str(SAMPLES) + "/")[:-1], text)
    events = json.loads(text)
    for e in events:
        if e.get("type") == "trace":
            packed = run / (Path(e["path"]).name + ".gz")
            if packed.exists():
                out = tmp / f"{name}-{Path(e['path']).name}"
                with gzip.open(packed, "rb") as fin, open(out, "wb") as fout:
                    shutil.copyfileobj(fin, fout)
                e["path"] = str(out)
            else:
                e["path"] = str(tmp / "missing.json")
    return events


def load_evidence(name: str, tmp: Path) -> Evidence:
    return parse_events(load_events(name, tmp))


def expected_markers(path: Path) -> set[tuple[str, str, int]]:
    """``# expect: kind[, kind]`` markers in a sample model: (kind, file name, line)."""
    out = set()
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = re.search(r"#\s*expect:\s*([a-z\-, ]+)", line)
        if m:
            for kind in m.group(1).split(","):
                out.add((kind.strip(), path.name, i))
    return out
