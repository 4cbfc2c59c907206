"""Helpers the benchmarks share: what produced the numbers, and markdown and JSON output."""

from __future__ import annotations

import hashlib
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

import runtime_shim as rs
from bench.report import markdown_table, write_json  # noqa: F401 - re-exported for the benchmarks
from bench.tools import git_revision


def cuda_count() -> int:
    """The CUDA devices torch sees (0 without CUDA)."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def source_digest() -> str:
    """A short hash of runtime_shim's sources: names the code measured where there is no git (device copies)."""
    package = Path(rs.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def environment() -> dict[str, Any]:
    """Versions, devices and runtime_shim's mode and profile, for every result file."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "cuda_devices": [torch.cuda.get_device_name(i) for i in range(cuda_count())],
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "git": git_revision(),
        "runtime_shim_sources": source_digest(),
        "runtime_shim_mode": rs.mode(),
        "runtime_shim_profile": rs.current_profile(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
