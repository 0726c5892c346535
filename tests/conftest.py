"""Settings every test process shares.

The lent H200 machines require NVLink multicast off (it can take a shared host's GPUs down).
launchprof passes the user's environment to every rank unchanged, so the tests, like
scripts/gpu-check, set it themselves: every launchprof, torchrun and worker process a test
starts inherits it, whatever the calling shell had.

The temp folder is pytest's own for the session (see ``private_temp_folder``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

for _name, _value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_name] = _value


@pytest.fixture(autouse=True, scope="session")
def utf8_locale() -> Iterator[None]:
    """Run the suite under a UTF-8 locale whatever the machine's: a ``LANG=C`` shell makes
    launchprof print ASCII (tests/test_terminal_env.py sets each locale it checks), and most
    tests compare against the UTF-8 report."""
    names = ("LC_ALL", "LC_CTYPE", "LANG")
    before = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ.pop(name, None)
    os.environ["LANG"] = "C.UTF-8"
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(autouse=True, scope="session")
def private_temp_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point the temp folder (``TMPDIR``, inherited by every process a test starts) into
    pytest's own temporary folders, which pytest prunes (the last three sessions are kept).

    launchprof cleans up after itself, except what it keeps on purpose and names to the
    user: a failed script's or launcher's output log, a run file it could not write where
    asked, a crash's traceback. Tests provoke exactly those; in the shared temp folder they
    would pile up, run after run."""
    folder = tmp_path_factory.mktemp("tmp")
    before_env, before_module = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = before_module
        if before_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before_env
