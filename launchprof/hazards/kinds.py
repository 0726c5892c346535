"""The hazard kinds (docs/architecture.md "Hazard rules"): id and default severity.

The ids are a contract (JSON ``kind``, SARIF ``ruleId``). Each kind's title and fix hint
are words, so they live with the other sentences in launchprof.render.words.hazard_hints; a
kind reads them from there (``title``, ``hint``). Hints speak in the terms of the seeds:
keep varying scalars in device tensors, ``copy_`` into static inputs, join every forked
stream, bucket and pad shapes, share one pool largest-first, clone outputs that outlive
the next replay.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HazardKind:
    id: str
    severity: str

    @property
    def title(self) -> str:
        from launchprof.render.words.hazard_hints import TITLES

        return TITLES.get(self.id, self.id)

    @property
    def hint(self) -> str:
        from launchprof.render.words.hazard_hints import HINTS

        return HINTS.get(self.id, "")


KINDS: dict[str, HazardKind] = {
    k.id: k
    for k in (
        HazardKind("hidden-sync", "error"),
        HazardKind("unjoined-stream", "error"),
        HazardKind("pageable-copy", "error"),
        HazardKind("capture-allocation", "warning"),
        HazardKind("frozen-scalar", "warning"),
        HazardKind("reallocated-input", "info"),
        HazardKind("dynamic-shape", "warning"),
        HazardKind("data-dependent-control-flow", "error"),
        HazardKind("rng-state", "warning"),
        HazardKind("replay-mismatch", "error"),
        HazardKind("host-side-effect", "warning"),
        HazardKind("kept-output", "warning"),
        HazardKind("loop-back", "info"),
        HazardKind("capture-failed", "error"),
        HazardKind("stream-race", "error"),
        HazardKind("uncaptured-collective", "error"),
        HazardKind("collective-divergence", "error"),
        HazardKind("unresolved-call", "warning"),
        # Capture failures a training step meets, named from what torch and CUDA said
        # (launchprof.common.capture_causes); after the others, so SARIF's rule indices stay.
        HazardKind("kept-autograd-graph", "error"),
        HazardKind("optimizer-not-capturable", "error"),
        HazardKind("grad-scaler", "error"),
        HazardKind("legacy-stream", "error"),
    )
}

