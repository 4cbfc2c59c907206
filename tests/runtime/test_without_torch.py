"""Without torch, the numpy backends work and torch backends say how to get torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent("""
    import sys
    sys.modules["torch"] = None  # as if torch were not installed: importing it fails
    import runtime_shim as rs
    from runtime_shim import Device, Tensor, reveal_device

    flex = Device.flex().autodiff()
    w = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], flex).require_grad()
    grads = (w * w).sum().backward()
    print("grad", w.grad(grads).to_list())
    print("moved", reveal_device(w.inner().to_device(Device.ndarray())))
    for factory in (Device.cpu, Device.libtorch, lambda: Device.cuda(0)):
        for virtual in (False, True):
            with rs.virtual_devices(virtual):
                try:
                    factory()
                except rs.BackendUnavailable as error:
                    print(error.code, "pip install" in str(error), "torch" in str(error))
    print("torch imported:", sys.modules["torch"] is not None)
""")


def test_numpy_backends_work_and_torch_backends_explain_without_torch() -> None:
    result = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "grad [[2.0, 4.0], [6.0, 8.0]]"
    assert lines[1] == "moved NdArray float"
    assert lines[2:8] == ["MV112 True True"] * 6
    assert lines[8] == "torch imported: False"
