"""The device profile behind ``launchprof crossover`` and ``analyze``'s predictions.

Split so that everything but the GPU measurements runs without a GPU: the fit can be redone
offline from the raw samples a profile keeps, which is how the CPU tests check it against
data recorded on an H200.

- ``plans``: what a sweep measures (quick, default, and the calibration inside analyze);
- ``sweep``: the phases in order; ``host`` (host costs in interleaved rounds) and
  ``phases`` (device costs) measure; ``gpu``, ``rawgraph`` and ``recorder`` help them;
- ``fit``: samples to coefficients and the crossover; ``spread``: per-round medians, spread
  and the noisy flag; ``uncertainty``: intervals carried into predictions; ``determined``:
  which coefficients the sweep leaves undetermined; ``setup_cost``: capture + instantiate
  with its interval, and the replays to pay it back;
- ``profile``: the validated profile file, its migration and the cache; ``cache_files``:
  where the cache is, and the worker's look at a cached profile without pydantic;
- ``calibrate``: ``ensure_profile``, called by analyze's worker before the script;
- ``simulate``: a stand-in sweep with known coefficients, for tests; ``plot``: the curves.
"""
