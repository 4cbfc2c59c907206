"""The observer's ``torch.load``: a checkpoint saved under fake CUDA comes back on the device ``map_location``
names (a string, a ``torch.device``, an int ``i``: ``cuda:i``), on the host otherwise (a dict, a function, none)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import real_cuda_count  # noqa: E402

from runtime_shim.torch_observer import cli  # noqa: E402


def test_map_location_places_every_tensor_of_the_checkpoint(tmp_path: Path) -> None:
    if real_cuda_count():
        pytest.skip("fake CUDA's loading: on a GPU machine torch loads for real (and restores saved devices)")
    program = tmp_path / "load_places.py"
    program.write_text(textwrap.dedent(f"""
        import torch

        path = {str(tmp_path / "ckpt.pt")!r}
        torch.save({{"w": torch.ones(2).cuda(), "nested": [torch.zeros(3)], "epoch": 1}}, path)
        for where in ("cpu", "cuda", "cuda:1", torch.device("cuda", 1), 0, 1, {{"cuda:0": "cpu"}},
                      lambda storage, loc: storage, None):
            ckpt = torch.load(path, map_location=where)
            print(ckpt["w"].device, ckpt["nested"][0].device, ckpt["epoch"])
    """).lstrip(), encoding="utf-8")
    outcome = cli.run_program(program)
    assert outcome.status == "ok", outcome.stderr
    assert outcome.stdout.splitlines() == [
        "cpu cpu 1", "cuda:0 cuda:0 1", "cuda:1 cuda:1 1", "cuda:1 cuda:1 1", "cuda:0 cuda:0 1",
        "cuda:1 cuda:1 1", "cpu cpu 1", "cpu cpu 1", "cpu cpu 1"]


def test_a_resumed_adam_reads_its_saved_step_count(tmp_path: Path) -> None:
    """Adam divides by ``1 - beta ** step``: a step count saved and loaded back must not read as zero."""
    if real_cuda_count():
        pytest.skip("fake CUDA's loading: on a GPU machine torch loads for real")
    program = tmp_path / "resume_adam.py"
    program.write_text(textwrap.dedent(f"""
        import torch
        import torch.nn as nn

        path = {str(tmp_path / "ckpt.pt")!r}
        model = nn.Linear(4, 2).cuda()
        opt = torch.optim.Adam(model.parameters())
        for _ in range(3):
            model(torch.randn(8, 4, device="cuda")).sum().backward()
            opt.step()
        torch.save(opt.state_dict(), path)
        for where in ("cuda", "cpu"):
            resumed = torch.optim.Adam(model.parameters())
            resumed.load_state_dict(torch.load(path, map_location=where))
            state = resumed.state_dict()["state"][0]
            print(state["exp_avg"].device, int(state["step"]), state["step"].item())
            model(torch.randn(8, 4, device="cuda")).sum().backward()
            resumed.step()  # (divides by 1 - beta ** step)
    """).lstrip(), encoding="utf-8")
    outcome = cli.run_program(program)
    assert outcome.status == "ok", outcome.stderr
    assert outcome.stdout.splitlines() == ["cuda:0 3 3.0", "cuda:0 3 3.0"]
