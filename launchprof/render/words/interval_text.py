"""The speedup's method in words: how its median and its 95% interval were built.

The analysis fills ``Speedup.method`` from its records (launchprof.analysis.timing), so a JSON
reader has the sentence beside the figures it names (``within_low``/``within_high``, and
``between_process`` with the step's host-paced parts and the factor's basis).
"""

from __future__ import annotations

from launchprof.model.step_timing import HostVariation
from launchprof.render.words.format import interval, ratio

BASIS_WORDS = {
    "default": "the default: a host-paced step's measured spread between processes on an H200",
    "run-vs-profile": "this run's host against the device profile's",
    "profile-rounds": "the device profile's rounds",
    "run-samples": "this run's host samples",
}


def speedup_method(bursts: bool, burst_spread: bool, variation: HostVariation | None) -> str:
    """``bursts``: the step times are interleaved bursts (else the script's in-loop calls);
    ``burst_spread``: the within-process interval also spans the per-burst ratios."""
    how = "interleaved bursts" if bursts else "in-loop calls"
    within = "samples and bursts" if burst_spread else "samples"
    text = f"ratio of the eager and replay step medians ({how}); 95% interval of this process's {within}"
    if variation is None:
        return text
    basis = BASIS_WORDS.get(variation.basis, variation.basis)
    return (
        f"{text}, widened {interval(variation.low_factor, variation.high_factor)} for another process's host, "
        f"up to {ratio(variation.factor)} faster or slower ({basis})"
    )
