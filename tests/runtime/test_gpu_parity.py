"""The fake-CUDA observer behaves as a real GPU does: tests/data/gpu_parity/cases.py run under the observer
(fake mode, this CPU machine) ends every case as it ended with plain torch on an NVIDIA H200
(tests/data/gpu_parity/h200.jsonl, recorded with the command in docs/gpu-runs.md).

Per case: the same outcome (``ok`` with the same devices, or the same exception type); for a failure, the same
MV2xx family as the classifier reads it; where the observer writes the text itself (the checks fake mode lacks),
CUDA's exact text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import real_cuda_count  # noqa: E402

from runtime_shim.torch_observer import cli  # noqa: E402
from runtime_shim.torch_observer.classify import code_for_message, is_device_mismatch  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_parity"
REFERENCE = {r["case"]: r for r in map(json.loads, (DATA / "h200.jsonl").read_text().splitlines())}
# Cases whose failure text the observer raises itself (fake mode has no such check): CUDA's words exactly.
OWN_TEXT = {
    "conv1d_weight_on_cuda_input_on_cpu", "conv2d_weight_on_cuda_input_on_cpu", "conv3d_weight_on_cuda_input_on_cpu",
    "conv_transpose2d_weight_on_cuda_input_on_cpu", "conv2d_weight_on_cpu_input_on_cuda",
    "masked_fill_cpu_mask_on_cuda_tensor", "masked_fill_cuda_mask_on_cpu_tensor",
    "shuffled_loader_with_cuda_default_device",
}


def family(message: str) -> str | None:
    return code_for_message(message) or ("device mismatch" if is_device_mismatch(message) else None)


@pytest.fixture(scope="module")
def observed() -> dict[str, dict]:
    if real_cuda_count():
        pytest.skip("fake mode is for CPU builds of torch; on a GPU machine the cases run for real")
    outcome = cli.run_program(DATA / "cases.py", timeout=300)
    assert outcome.status == "ok", f"{outcome.status}: {outcome.detail}\n{outcome.stderr[-3000:]}"
    results = [json.loads(line) for line in outcome.stdout.splitlines() if line.startswith("{")]
    return {r["case"]: r for r in results}


def test_every_reference_case_ran(observed: dict[str, dict]) -> None:
    assert set(observed) == set(REFERENCE)
    assert set(REFERENCE) >= OWN_TEXT


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_fake_cuda_ends_the_case_as_the_h200_did(case: str, observed: dict[str, dict]) -> None:
    real, fake = REFERENCE[case], observed[case]
    assert fake["outcome"] == real["outcome"], f"H200: {real}\nobserver: {fake}"
    if real["outcome"] == "ok":
        assert fake["value"] == real["value"]
        return
    assert family(fake["message"]) == family(real["message"]), f"H200: {real}\nobserver: {fake}"
    if case in OWN_TEXT:
        assert fake["message"] == real["message"]
