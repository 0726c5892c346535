"""Code that runs in the child process next to the user's script.

The CLI never runs user code in its own process: it starts ``python -m launchprof.worker
CONFIG`` (``analyze``: ``--wait OUT ERR``, told its config on standard input, see
launchprof/commands/warm_worker.py) and reads the events this package appends to a file as
it goes, so a crash of the user's code (exception, segfault, sticky CUDA error) never loses
what was measured.
"""
