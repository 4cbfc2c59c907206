"""The worlds of a PyTorch program: what ``torch.cuda.is_available()`` answers, and with it
``torch.cuda.device_count()`` and ``torch.backends.mps.is_available()``.

``device = "cuda" if torch.cuda.is_available() else "cpu"`` makes every later value depend on one answer: a
join of both answers would pair a CUDA model with a CPU batch (a mismatch no run can reach). So a program
that asks is analysed once per answer (:mod:`analyzer.engine.worlds`), and a site that fails in one world
only is a warning naming it ("... when CUDA is available").

A program that asks ``torch.cuda.device_count()`` picks devices by it (``"cuda:1" if
torch.cuda.device_count() > 1 else "cuda:0"``): its CUDA world is split in two, one GPU and several, so that
a model and its batches placed by the same answer are not paired across answers either. "Several" is
analysed as two GPUs (``cuda:0`` and ``cuda:1``): the count programs compare against and the devices they
pick by it; branches for three or more GPUs are not followed. Without CUDA the count is 0.

A program that asks ``torch.backends.mps.is_available()`` runs on a Mac too: its CPU world is split into
one with neither accelerator and one with MPS and no CUDA, where the device choices are MPS's; the question
answers False in the CUDA worlds.

``target-device = "cuda"`` / ``"cpu"`` keeps the CUDA worlds (one GPU and several are still both CUDA) or
the one with neither accelerator: a named machine is never the MPS one.
"""

from __future__ import annotations

from typing import Final

from .base import Assumption, Refinement, World, WorldAxis

#: what ``torch.cuda.is_available()`` returns
CUDA_AVAILABLE: Final[Assumption[bool]] = Assumption("torch.cuda.is_available")
#: what ``torch.cuda.device_count()`` returns
GPU_COUNT: Final[Assumption[int]] = Assumption("torch.cuda.device_count")
#: what ``torch.backends.mps.is_available()`` returns
MPS_AVAILABLE: Final[Assumption[bool]] = Assumption("torch.backends.mps.is_available")

CUDA_WORLD = "CUDA is available"
CPU_WORLD = "CUDA is not available"

TORCH_WORLDS: Final = WorldAxis(
    name="torch.cuda.is_available",
    questions=(b"cuda.is_available", b"cuda.device_count", b"mps.is_available"),
    worlds=(World(CUDA_WORLD, {CUDA_AVAILABLE: True}, target="cuda"),
            World(CPU_WORLD, {CUDA_AVAILABLE: False, GPU_COUNT: 0}, target="cpu")),
    refinements=(
        Refinement(b"cuda.device_count", CUDA_WORLD, (
            World("one GPU is available", {CUDA_AVAILABLE: True, GPU_COUNT: 1}, target="cuda"),
            World("several GPUs are available", {CUDA_AVAILABLE: True, GPU_COUNT: 2}, target="cuda"))),
        Refinement(b"mps.is_available", CPU_WORLD, (
            World("neither CUDA nor MPS is available", {CUDA_AVAILABLE: False, GPU_COUNT: 0, MPS_AVAILABLE: False},
                  target="cpu"),
            World("MPS is available", {CUDA_AVAILABLE: False, GPU_COUNT: 0, MPS_AVAILABLE: True})),
            elsewhere={MPS_AVAILABLE: False}),
    ),
)
