"""torchaudio's transforms, its loader and its filter-bank builders, as the torch model sees them.

A transform of ``torchaudio.transforms`` is an ``nn.Module``. Those that hold tensors (``Spectrogram``'s
window, ``MelScale``'s filter bank, ``MFCC``'s DCT matrix, ``Resample``'s kernel ...) register them as buffers,
made on the CPU: the transform is a library layer with weights, like ``nn.Linear``. Calling it on a CUDA
waveform before ``transform.to(device)`` fails ("stft input and window must be on the same device but got self
on cuda:0 and window on cpu"), and ``transform.to(device)`` moves it (a transform kept outside the model is
not moved by ``model.to(device)``). The others (``AmplitudeToDB``, the maskings, ``Vol``, ``Fade`` ...) hold no
tensor: their output is where their input is.

``torchaudio.load(path)`` gives ``(waveform, sample_rate)``: a 2-d float tensor on the CPU and an int;
``torchaudio.functional.melscale_fbanks`` and ``create_dct`` build their matrices on the CPU (they take no
device). Everything else of torchaudio is a name of a library the analysis does not read (:mod:`.library_refs`).
"""

from __future__ import annotations

import ast

from ..domain import TOP, Atom, NumberAtom, V, Value, seq
from ..engine.flow_state import Frame, State
from ..torch_domain import CPU, NO_GRAD, TorchLayerAtom, TorchTensorAtom
from .base import UNHANDLED, LibraryModel, Unhandled
from .library_refs import LibraryRef, library_ref

ROOT = "torchaudio"
_TRANSFORMS = "torchaudio.transforms"
#: Transforms that register tensors (made on the CPU) as buffers in ``__init__``.
WITH_BUFFERS = frozenset({"Spectrogram", "InverseSpectrogram", "GriffinLim", "MelScale", "InverseMelScale",
                          "MelSpectrogram", "MFCC", "LFCC", "Resample", "SpectralCentroid", "TimeStretch"})
#: Transforms that hold no tensor: their output follows their input.
WITHOUT_BUFFERS = frozenset({"AmplitudeToDB", "MuLawEncoding", "MuLawDecoding", "ComputeDeltas", "FrequencyMasking",
                             "TimeMasking", "Vol", "Fade", "SlidingWindowCmn", "Vad", "Preemphasis", "Deemphasis",
                             "AddNoise", "Convolve", "FFTConvolve", "Loudness"})
#: ``torchaudio.functional`` builders of a matrix, always on the CPU (they take no device).
CPU_BUILDERS = frozenset({"melscale_fbanks", "linear_fbanks", "create_dct"})


def transform_name(path: str) -> str | None:
    """``MelSpectrogram`` for ``torchaudio.transforms.MelSpectrogram`` (or its private module's path)."""
    module, _, name = path.rpartition(".")
    if module != _TRANSFORMS and not module.startswith(_TRANSFORMS + "."):
        return None
    return name if name in WITH_BUFFERS or name in WITHOUT_BUFFERS else None


def buffers_only(layer_name: str) -> bool:
    """Is the layer a torchaudio transform, whose tensors are buffers (its output never requires grad for them)?"""
    return layer_name.startswith(_TRANSFORMS + ".")


class TorchaudioModel(LibraryModel):
    """torchaudio's names; the transforms it makes are library layers (called and moved by the torch model)."""

    name = "torchaudio"

    def import_ref(self, path: str) -> Value | None:
        return library_ref(path, frozenset({ROOT}))

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, LibraryRef) or not atom.path.startswith(ROOT + "."):
            return UNHANDLED
        if node is None:
            return TOP
        name = transform_name(atom.path)
        if name is not None:
            # its buffers are made on the CPU, whatever the arguments
            return V(TorchLayerAtom(f"{_TRANSFORMS}.{name}", CPU if name in WITH_BUFFERS else None,
                                    name in WITH_BUFFERS, (), self.origin(node, fr, f"{name} created")))
        if atom.path in (f"{ROOT}.load", f"{ROOT}.backend.load"):
            waveform = TorchTensorAtom(CPU, NO_GRAD, False, origin=self.origin(node, fr, "torchaudio.load"), ndim=2)
            return V(seq("tuple", (V(waveform), V(NumberAtom("int")))))
        module, _, function = atom.path.rpartition(".")
        if module == f"{ROOT}.functional" and function in CPU_BUILDERS:
            return V(TorchTensorAtom(CPU, NO_GRAD, False, origin=self.origin(node, fr, f"{function} result"),
                                     ndim=2))
        return UNHANDLED  # unknown (:class:`.library_refs.LibraryReferences`)
