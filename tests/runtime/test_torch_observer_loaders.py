"""The observer's DataLoader (runtime_shim/torch_observer/loaders.py): forked workers that use CUDA, pinned GPU
batches and a sampler's generator against the default device fail as on a CUDA machine, where torch fails, and
each loader fixture fails exactly at its markers (the loader's line is among a failure's callers)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from runtime_shim import torch_semantics as T  # noqa: E402
from runtime_shim.torch_observer import cli  # noqa: E402
from runtime_shim.torch_observer.classify import code_for_message  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LOADER_FIXTURES = sorted((REPO / "fixtures" / "torch").glob("loader_*.py"))


def _fixture_support():
    spec = importlib.util.spec_from_file_location("fixture_support_for_loaders",
                                                  REPO / "tests" / "analyzer" / "fixture_support.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SUPPORT = _fixture_support()


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    results = cli.run_programs(LOADER_FIXTURES, timeout=180, jobs=2)
    return {p.name: outcome for p, outcome in zip(LOADER_FIXTURES, results, strict=True)}


def test_there_are_failing_and_correct_loader_fixtures() -> None:
    names = {p.stem for p in LOADER_FIXTURES}
    assert {"loader_workers_make_cuda_tensors", "loader_workers_cuda_ok", "loader_pin_memory_gpu_batches",
            "loader_pin_memory_host_batches_ok", "loader_shuffle_under_cuda_default_device",
            "loader_shuffle_cuda_generator_ok", "loader_workers_option_default"} <= names


@pytest.mark.parametrize("program", LOADER_FIXTURES, ids=lambda p: p.stem)
def test_loader_fixture_fails_exactly_at_its_markers(program: Path, outcomes: dict) -> None:
    outcome = outcomes[program.name]
    assert outcome.status == "ok", f"{outcome.status}: {outcome.detail}\n{outcome.stderr[-3000:]}"
    fixture = SUPPORT.load_fixture(program)
    errors = {(line, code) for _file, line, code in fixture.errors}
    marked = errors | {(line, code) for _file, line, code in fixture.warnings}
    failures = [r for r in outcome.records if isinstance(r.get("outcome"), dict)]
    reported = [((r["line"], r["outcome"]["code"]),
                 {(r["line"], r["outcome"]["code"]),
                  *((line, r["outcome"]["code"]) for file, line, _col in r.get("callers", ())
                    if Path(file) == program.resolve())})
                for r in failures]
    happened = set().union(*(lines for _call, lines in reported))
    assert errors <= happened, f"predicted errors that did not happen: {sorted(errors - happened)}"
    assert not [call for call, lines in reported if not lines & marked], failures
    if not marked:
        assert not failures


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
