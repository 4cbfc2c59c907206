"""``torch.load`` and its siblings in the torch model: tensors where ``map_location`` (``device=``) puts them,
in a structure the analysis does not know; unknown where the file's own devices decide."""

from __future__ import annotations

import textwrap

import pytest
from devicelint.runner import check_source
from devicelint.settings import Settings


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


def reveals(source: str) -> list[str]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings())
    return [d.message.removeprefix("reveal_device: ") for d in report.diagnostics
            if d.message.startswith("reveal_device: ")]


@pytest.mark.parametrize(("location", "attribute"), [
    ('map_location="cpu"', "error"), ('map_location=torch.device("cpu")', "error"), ('"cpu"', "error"),
    ('map_location="cpu", weights_only=True', "error"), ("lambda storage, loc: storage", "error"),
    # a pickled object's ``.T`` may be anything: the CPU tensor's failure is one possibility of several
    ('map_location="cpu", weights_only=False', "warning"),
])
def test_a_checkpoint_mapped_to_the_cpu_holds_cpu_tensors_whatever_its_structure(location: str,
                                                                                attribute: str) -> None:
    # (line 11: the tensor possibility's ``values()`` is a sparse tensor's, whose rows may be 0-dim)
    assert findings(f"""
        import torch
        x = torch.randn(4, 3).cuda()
        stats = torch.load("stats.pt", {location})
        y = x - stats["mean"]
        z = x @ stats["nested"]["table"][0].T
        w = x * stats.get("scale", 1.0)
        for name, t in stats.items():
            x + t
        for t in stats.values():
            x + t
    """) == [(5, "MV201", "error"), (6, "MV201", attribute), (7, "MV201", "error"), (9, "MV201", "error"),
             (11, "MV201", "warning")]


@pytest.mark.parametrize("location", ['map_location={"cuda:0": "cpu"}', "map_location=lambda s, loc: s.cuda()",
                                      "", "map_location=None", "map_location=where"])
def test_the_files_own_devices_are_unknown(location: str) -> None:
    assert findings(f"""
        import os, torch
        where = os.environ["WHERE"]
        x = torch.randn(4, 3).cuda()
        stats = torch.load("stats.pt", {location})
        y = x - stats["mean"]
        z = x @ stats
    """) == []


def test_a_checkpoint_mapped_to_the_gpu_or_moved_after_loading_is_silent() -> None:
    assert findings("""
        import torch
        device = torch.device("cuda")
        x = torch.randn(4, 3).to(device)
        stats = torch.load("stats.pt", map_location=device)
        y = (x - stats["mean"]) / stats["std"]
        host = torch.load("stats.pt", map_location="cpu")
        mean, std = host["mean"].to(device), host["std"].cuda()
        y = (x - mean) / std
        on_first = torch.load("stats.pt", map_location=0)
        y = x * on_first["scale"]
    """) == []


def test_a_missing_key_is_never_claimed_and_a_key_may_hold_anything() -> None:
    assert reveals("""
        import torch
        from devicelint import reveal_device
        ckpt = torch.load("c.pt", map_location="cpu")
        reveal_device(ckpt["model"])
        reveal_device(ckpt.get("ema"))
        reveal_device(torch.load("c.pt", map_location={"cuda:1": "cuda:0"}))
    """) == ["cpu tensor", "cpu tensor", "Unknown"]


def test_attributes_of_a_container_from_a_weights_only_load_are_the_tensors_but_a_pickle_may_have_any() -> None:
    source = """
        import torch
        x = torch.randn(4, 3).cuda()
        emb = torch.load("emb.pt", map_location="cpu"{extra})
        y = x @ emb.T
    """
    assert findings(source.format(extra="")) == [(5, "MV201", "error")]
    assert findings(source.format(extra=", weights_only=False")) == [(5, "MV201", "warning")]
    hub = source.replace("torch.load", "torch.hub.load_state_dict_from_url")  # (weights_only=False by default)
    assert findings(hub.format(extra="")) == [(5, "MV201", "warning")]
    assert findings(hub.format(extra=", weights_only=True")) == [(5, "MV201", "error")]


def test_load_state_dict_keeps_the_module_where_it_is_and_the_optimizer_state_follows_the_parameters() -> None:
    assert findings("""
        import torch
        from torch import nn
        model = nn.Linear(3, 2).cuda()
        opt = torch.optim.Adam(model.parameters())
        ckpt = torch.load("c.pt", map_location="cpu")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        loss = model(torch.randn(4, 3).cuda()).sum()
        loss.backward()
        opt.step()
    """) == []


def test_a_torchscript_module_is_on_its_map_location() -> None:
    assert findings("""
        import torch
        scripted = torch.jit.load("m.pt", map_location="cpu")
        out = scripted(torch.randn(2, 3).cuda())
        gpu = torch.jit.load("m.pt", map_location="cuda")
        out = gpu(torch.randn(2, 3).cuda())
        unknown = torch.jit.load("m.pt")
        out = unknown(torch.randn(2, 3).cuda())
    """) == [(4, "MV202", "error")]


def test_safetensors_load_file_gives_a_dict_of_tensors_on_its_device() -> None:
    assert findings("""
        import torch
        from safetensors.torch import load_file
        import safetensors.torch
        x = torch.randn(2, 3).cuda()
        host = load_file("w.safetensors")
        y = x @ host["proj"]
        gpu = safetensors.torch.load_file("w.safetensors", device="cuda:0")
        y = x @ gpu["proj"]
        for t in host.values():
            x + t
    """) == [(7, "MV201", "error"), (11, "MV201", "error")]


def test_a_map_location_chosen_at_run_time_puts_the_checkpoint_with_the_batch() -> None:
    assert findings("""
        import os
        import torch
        device = "cuda" if os.environ.get("USE_GPU") else "cpu"
        x = torch.randn(4, 3).to(device)
        stats = torch.load("s.pt", map_location=device)
        y = x - stats["mean"]
        scripted = torch.jit.load("m.pt", map_location=device)
        scripted(x)
        host = torch.load("s.pt", map_location="cpu")
        z = x - host["mean"]
    """) == [(11, "MV201", "warning")]


def test_moving_what_a_load_gave_may_move_a_whole_pickled_module_in_place() -> None:
    # without weights_only=True the file may hold a module (the default before PyTorch 2.6): no MV206
    assert findings("""
        import torch
        device = torch.device("cuda")
        model = torch.load("model.pt", map_location="cpu")
        model.to(device)
        model.eval()
        ckpt = torch.load("c.pt", map_location="cpu", weights_only=False)
        ckpt["model"].cuda()
        emb = torch.load("emb.pt", map_location="cpu", weights_only=True)
        emb.to(device)
        scaled = torch.load("emb.pt", map_location="cpu")["table"] * 2
        scaled.to(device)
    """) == [(10, "MV206", "error"), (12, "MV206", "error")]
