"""Test modes: virtual devices by default (CI, no GPU); ``--real`` for a GPU machine.

In real mode CUDA devices are the machine's own GPUs and the suite's
CUDA-backed cases run on them; backends this machine has no hardware for
(Wgpu, Rocm, a second GPU, ...) are exercised inside ``virtual_devices()``
blocks, which the ``device_factories`` fixture says per device.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import pytest

import runtime_shim as rs

HAS_TORCH = importlib.util.find_spec("torch") is not None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--real", action="store_true", default=os.environ.get("RUNTIME_SHIM_TEST_REAL") == "1",
                     help="run on the machine's real devices (CUDA) instead of virtual ones")


def pytest_configure(config: pytest.Config) -> None:
    rs.set_virtual(not config.getoption("--real"))


def pytest_report_header(config: pytest.Config) -> str:
    cuda = "no torch"
    if HAS_TORCH:
        import torch

        cuda = f"torch {torch.__version__}, CUDA devices: {torch.cuda.device_count()}"
    return f"runtime_shim mode: {rs.mode()}; {cuda}"


@pytest.fixture(autouse=True)
def _restore_settings():
    """Every test starts in the session's mode and the default profile."""
    virtual, profile = rs.is_virtual(), rs.current_profile()
    yield
    rs.set_virtual(virtual)
    rs.set_profile(profile)


def real_cuda_count() -> int:
    if not HAS_TORCH:
        return 0
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


# name -> (factory, needs torch, real hardware it needs: None, or number of GPUs)
DEVICES = {
    "flex": (rs.Device.flex, False, None),
    "ndarray": (rs.Device.ndarray, False, None),
    "cpu": (rs.Device.cpu, True, None),
    "libtorch": (rs.Device.libtorch, True, None),
    "cuda0": (lambda: rs.Device.cuda(0), True, 1),
    "cuda1": (lambda: rs.Device.cuda(1), True, 2),
    "libtorch_cuda0": (lambda: rs.Device.libtorch_cuda(0), True, 1),
    "wgpu": (rs.Device.wgpu, False, "declared"),
    "rocm": (lambda: rs.Device.rocm(0), False, "declared"),
}


def device_available_here(name: str) -> bool:
    """Whether ``name`` can be built in the session's mode on this machine."""
    _factory, needs_torch, hardware = DEVICES[name]
    if needs_torch and not HAS_TORCH:
        return False
    if rs.is_virtual() or hardware is None:
        return True
    if hardware == "declared":
        return False
    return real_cuda_count() >= hardware


@pytest.fixture(scope="session")
def torch_fixtures_confirmed(request: pytest.FixtureRequest,
                             tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``devicelint confirm fixtures/torch`` with each program's observer run, made once per test session
    (tests/torch_fixture_runs.py): the observer's tests and confirm's tests both read it."""
    pytest.importorskip("torch")
    from session_cache import shared
    from torch_fixture_runs import confirm_torch_fixtures, key

    return shared(request.config, tmp_path_factory, "confirm-torch-fixtures", key(),
                  lambda: confirm_torch_fixtures(tmp_path_factory.mktemp("confirm_torch")))


@pytest.fixture(scope="session")
def all_rules_findings(request: pytest.FixtureRequest,
                       tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[dict]]:
    """``folder -> [d.to_json() for d in check([REPO / folder], Settings(jobs=1, select=("ALL",))).diagnostics]``,
    computed once per test session and folder (tests/fixture_findings.py); call it before patching anything."""
    from fixture_findings import all_rules_findings as findings
    from fixture_findings import key
    from session_cache import shared

    known: dict[str, list[dict]] = {}

    def get(folder: str) -> list[dict]:
        if folder not in known:
            known[folder] = shared(request.config, tmp_path_factory, "all-rules-" + folder.replace("/", "-"),
                                   key(folder), lambda: findings(folder))
        return known[folder]

    return get
