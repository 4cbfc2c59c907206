"""The observer's DataLoader (runtime_shim/torch_observer/loaders.py): forked workers that use CUDA, pinned GPU
batches and a sampler's generator against the default device fail as on a CUDA machine, where torch fails. That
each loader fixture fails exactly at its markers (the loader's line among a failure's callers) is checked with every
other PyTorch fixture (tests/runtime/test_torch_observer.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from runtime_shim import torch_semantics as T  # noqa: E402
from runtime_shim.torch_observer import cli  # noqa: E402
from runtime_shim.torch_observer.classify import code_for_message  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LOADER_FIXTURES = sorted((REPO / "fixtures" / "torch").glob("loader_*.py"))


def test_there_are_failing_and_correct_loader_fixtures() -> None:
    names = {p.stem for p in LOADER_FIXTURES}
    assert {"loader_workers_make_cuda_tensors", "loader_workers_cuda_ok", "loader_pin_memory_gpu_batches",
            "loader_pin_memory_host_batches_ok", "loader_shuffle_under_cuda_default_device",
            "loader_shuffle_cuda_generator_ok", "loader_workers_option_default"} <= names


@pytest.mark.parametrize(("message", "code"), [
    (T.BAD_FORK_MESSAGE, "MV209"),
    (T.worker_message(T.BAD_FORK_MESSAGE), "MV209"),
    (T.pin_message("torch.cuda.FloatTensor"), "MV210"),
    (T.generator_message("cuda", "cpu"), "MV211"),
    ("Caught RuntimeError in DataLoader worker process 0.", None),
])
def test_loader_messages_are_classified(message: str, code: str | None) -> None:
    assert code_for_message(message) == code


def test_texts_are_torchs() -> None:
    assert T.pin_message("torch.cuda.FloatTensor") == \
        "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned"
    assert T.generator_message("cuda", "cpu") == "Expected a 'cuda' device type for generator but found 'cpu'"
    assert T.worker_message("boom").startswith("Caught RuntimeError in DataLoader worker process 0.\nOriginal ")


def test_workers_forked_before_any_cuda_use_and_spawned_workers_may_use_cuda(tmp_path: Path) -> None:
    program = tmp_path / "early_fork.py"
    program.write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader

        def to_gpu(samples):
            return torch.stack(samples).cuda()

        samples = [torch.zeros(3)] * 4
        for batch in DataLoader(samples, batch_size=2, num_workers=2, collate_fn=to_gpu):
            print(batch.device)  # the parent had not initialised CUDA: the child may
        for batch in DataLoader(samples, batch_size=2, num_workers=2, collate_fn=to_gpu,
                                multiprocessing_context="spawn"):
            print(batch.device)
        try:
            torch.zeros(3, device="cuda").pin_memory()
        except RuntimeError as error:
            print(error)
        print(torch.Generator(device="cuda").device, torch.Generator().device)
    """).lstrip(), encoding="utf-8")
    outcome = cli.run_program(program)
    assert outcome.status == "ok", outcome.stderr
    assert outcome.stdout.splitlines() == ["cuda:0"] * 4 + [
        "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned", "cuda:0 cpu"]
    assert [(r["line"], r["outcome"]["code"]) for r in outcome.records if isinstance(r.get("outcome"), dict)] \
        == [(14, "MV210")]
