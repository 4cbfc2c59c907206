"""``reveal_device`` on PyTorch values at run time, and the fake CUDA guard's compiler error.

``from devicelint import reveal_device`` is runtime_shim's function: for a torch tensor, module or device
it prints the analyzer's reveal text (device; requires grad as a leaf or a non-leaf) to stderr, as
``typing.reveal_type`` does, and returns it; runtime_shim values keep their text. Both are recorded
(confirm compares them with the analyzer's reveal: tests/confirm/test_confirm_projects.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from devicelint import reveal_device  # noqa: E402

from runtime_shim import Device, Tensor  # noqa: E402
from runtime_shim import reveal_device as shim_reveal_device  # noqa: E402
from runtime_shim.torch_observer import guard_ext  # noqa: E402


def test_the_analyzer_package_exports_runtime_shims_reveal() -> None:
    assert reveal_device is shim_reveal_device


@pytest.mark.parametrize(("make", "text"), [
    (lambda: torch.ones(2, 3), "cpu tensor"),
    (lambda: torch.ones(2, requires_grad=True), "cpu tensor, requires grad (leaf)"),
    (lambda: torch.ones(2, requires_grad=True) * 2, "cpu tensor, requires grad (non-leaf)"),
    (lambda: torch.tensor(1.5), "cpu tensor, 0-dim"),
    (lambda: torch.ones(2, device="meta", requires_grad=True), "meta tensor, requires grad (leaf)"),
    (lambda: (torch.ones(2, requires_grad=True) * 2).detach(), "cpu tensor"),
    (lambda: torch.nn.Parameter(torch.ones(2)), "cpu tensor, requires grad (leaf), module weight"),
    (lambda: torch.nn.Linear(2, 2), "nn.Linear on cpu"),
    (lambda: torch.nn.Linear(2, 2, device="meta"), "nn.Linear on meta"),
    (lambda: torch.nn.ReLU(), "nn.ReLU"),
    (lambda: torch.device("cuda", 1), "torch.device('cuda:1')"),
])
def test_torch_values_are_printed_and_returned(make, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert reveal_device(make()) == text
    assert capsys.readouterr().err == f"reveal_device: {text}\n"


def test_a_module_split_across_devices_names_each() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2, device="meta"))
    assert reveal_device(model) == "nn.Sequential on cpu, meta"


def test_runtime_shim_values_keep_their_text_and_are_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    device = Device.flex()
    assert reveal_device(device) == repr(device)
    assert reveal_device(Tensor.ones([2], device=device)).startswith(repr(device))
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="reveal_device takes a Tensor or a Device, got int"):
        reveal_device(3)


def test_the_analyzer_imports_no_runtime_until_asked() -> None:
    code = ("import sys, analyzer, analyzer.cli; "
            "print('torch' in sys.modules, 'runtime_shim.reveal' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.skipif(not guard_ext.needed(), reason="a CUDA build of torch has its own guard")
def test_a_missing_compiler_is_a_one_line_error_saying_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNTIME_SHIM_TORCH_EXT_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-c++"))
    with pytest.raises(guard_ext.GuardUnavailable) as raised:
        guard_ext.build()
    message = str(raised.value)
    assert "\n" not in message
    assert message.endswith("install a C++ compiler (Debian: apt-get install g++) or set CXX")


@pytest.mark.skipif(not guard_ext.needed(), reason="a CUDA build of torch has its own guard")
def test_the_observer_cli_stops_on_a_missing_compiler_with_one_line(tmp_path: Path) -> None:
    program = tmp_path / "uses_cuda.py"
    program.write_text("import torch\nx = torch.ones(2, device='cuda', requires_grad=True)\n(x * 2).sum().backward()\n",
                       encoding="utf-8")
    env = {**__import__("os").environ, "RUNTIME_SHIM_TORCH_EXT_DIR": str(tmp_path / "cache"),
           "CXX": str(tmp_path / "no-such-c++")}
    proc = subprocess.run([sys.executable, "-m", "runtime_shim.torch_observer", str(program)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "no C++ compiler" in lines[0] and "apt-get install g++" in lines[0]
