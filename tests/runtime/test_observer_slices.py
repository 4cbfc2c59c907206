"""Slicing a tensor with sampled bounds (``data[i:i + block]`` for ``i`` in ``torch.randint(...)``, the
``get_batch`` of character-level language models) runs under the observer: fake mode has no value for the
bounds, so they read as 0, as ``.item()`` and numpy's slicing read them, and the program goes on to its real
device failures instead of crashing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from runtime_shim.torch_observer import cli  # noqa: E402


def test_sampled_slice_bounds_run_on_to_the_device_failure(tmp_path: Path) -> None:
    program = tmp_path / "get_batch.py"
    program.write_text(textwrap.dedent("""\
        import torch

        data = torch.randint(0, 50, (1000,))
        block = 16
        ix = torch.randint(len(data) - block, (4,))
        x = torch.stack([data[i:i + block] for i in ix]).to("cuda")
        y = torch.stack([data[i + 1:i + 1 + block] for i in ix])
        print(x.dim(), y.device)
        print(x + y)
        """))
    outcome = cli.run_program(program)
    assert outcome.stdout.splitlines()[0] == "2 cpu", outcome.stderr
    assert "Expected all tensors to be on the same device" in outcome.stderr
    assert "DataDependentOutputException" not in outcome.stderr
