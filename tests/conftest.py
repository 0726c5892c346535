"""Settings every test process shares.

The lent H200 machines require NVLink multicast off (it can take a shared host's GPUs down).
launchprof passes the user's environment to every rank unchanged, so the tests, like
scripts/gpu-check, set it themselves: every launchprof, torchrun and worker process a test
starts inherits it, whatever the calling shell had.
"""

from __future__ import annotations

import os

for _name, _value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_name] = _value
