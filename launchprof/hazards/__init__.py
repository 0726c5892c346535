"""Hazard rules: each is ``rule(evidence) -> list[Hazard]`` (pyinstrument's processors).

Rules read the worker's observations (launchprof.run.evidence.Evidence) and never touch a
GPU, so each one is tested on CPU against events recorded on a GPU. The package itself
loads nothing: ``lint`` needs only ``hazards.kinds`` and ``hazards.identity``, and loading
every runtime rule with them cost each lint run about a twentieth of its instructions, so
the rules are imported from ``launchprof.hazards.rules`` (``find_hazards``, ``RULES``).
"""
