"""Test-only: launchprof's worker with its CUDA check answered "usable", so that a gloo script
runs on CPU ranks under torch's launcher. Not part of launchprof: the product never fakes CUDA;
the tests give this module to ``run_ranks(module=...)`` to exercise launching, per-rank events,
exits and stopping without a GPU."""

import sys

import launchprof.worker.__main__ as worker

worker.cuda_problem = lambda: None

if __name__ == "__main__":
    sys.exit(worker.main(sys.argv[1:]))
