"""The analysis side of ``confirm``: one analyzer run per distinct (profile, backends).

Confirm judges the analysis itself, so every rule is selected and neither ``noqa``
nor per-file ignores apply (a suppressed finding would otherwise show up as a miss).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from runtime_shim.launcher import base_env

from ..diagnostics import Diagnostic
from ..runner import check
from ..settings import Settings
from ..shim_api import BACKEND_NAMES

SettingsKey = tuple[str, frozenset[str] | None]  # (profile, backends)


def analyze(paths: list[str], base: Settings, key: SettingsKey) -> tuple[list[Diagnostic], int]:
    """Diagnostics of ``paths`` under ``key``'s profile and backends, and how many files were analysed."""
    profile, backends = key
    settings = Settings(profile=profile, backends=backends, respect_noqa=False, discovery=base.discovery,
                        cache_dir=base.cache_dir, jobs=base.jobs)
    report = check(paths, settings)
    return report.diagnostics, report.files_analyzed


_PROBE = r"""
import json
from runtime_shim.devices import BACKENDS, LIBTORCH_KINDS, availability_problem
names = set()
for name in BACKENDS:
    if name == "Capture":
        names.add(name)
    elif name == "LibTorch":
        if any(availability_problem(name, sub, 0, False) is None for sub in LIBTORCH_KINDS):
            names.add(name)
    elif availability_problem(name, None, 0, False) is None:
        names.add(name)
print(json.dumps(sorted(names)))
"""


def machine_backends(python: str | None = None) -> frozenset[str]:
    """The backends this machine runs for real (asked in a child: no CUDA state in this process)."""
    done = subprocess.run([python or sys.executable, "-c", _PROBE], env=base_env(), capture_output=True, text=True,
                          timeout=300, cwd=os.getcwd())
    if done.returncode != 0:
        raise RuntimeError(f"cannot list this machine's backends: {done.stderr.strip()[-500:]}")
    return frozenset(name for name in json.loads(done.stdout) if name in BACKEND_NAMES)
