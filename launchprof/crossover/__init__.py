"""The device profile behind ``launchprof crossover``: sweep (GPU), fit (CPU), profile (file), plot.

Split so that everything but :mod:`launchprof.crossover.sweep` runs without a GPU:
the fit can be redone offline from the raw samples a profile keeps, which is how
the CPU tests check it against data recorded on an H200.
"""
