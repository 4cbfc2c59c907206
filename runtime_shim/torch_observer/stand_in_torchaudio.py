"""The observer's stand-in for ``torchaudio`` (see :mod:`.stand_ins`): the package, whose ``transforms`` and
``functional`` are the stand-ins beside this one, and ``load``, which reads a PCM WAV file (with Python's ``wave``)
into a 2-d float tensor on the CPU, as torchaudio's backends do."""

from __future__ import annotations

import wave

import torch

__version__ = "0.0.0+runtime-shim-stand-in"
__path__: list[str] = []  # a package: its submodules are found by the stand-ins' finder

from torchaudio import functional, transforms  # noqa: E402 - the submodules, as ``import torchaudio`` binds them

__all__ = ["functional", "load", "transforms"]


def load(filepath: str, *args: object, **kwargs: object) -> tuple[torch.Tensor, int]:
    with wave.open(str(filepath), "rb") as audio:
        channels, width, rate = audio.getnchannels(), audio.getsampwidth(), audio.getframerate()
        frames = audio.readframes(audio.getnframes())
    dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[width]
    samples = torch.frombuffer(bytearray(frames), dtype=dtype).to(torch.float32)
    scale = 128.0 if width == 1 else float(2 ** (8 * width - 1))
    samples = (samples - 128.0) / scale if width == 1 else samples / scale
    return samples.view(-1, channels).t().contiguous(), rate
