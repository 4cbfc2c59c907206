"""The library models the engine asks, in the order it asks them (the first answer wins)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import LibraryModel


def default_models() -> tuple[type[LibraryModel], ...]:
    """Every registered model. Imported here, not at the top: the models import the engine's leaf modules,
    the engine imports this one."""
    from .accelerate_model import AccelerateModel
    from .argparse_model import ArgparseModel
    from .array_consumers import ArrayConsumers
    from .copies import Copies
    from .entry_points import EntryPoints
    from .hf_datasets import HFDatasets
    from .hf_models import HFModels
    from .hf_trainer import HFTrainer
    from .library_refs import LibraryReferences
    from .numpy_model import NumpyModel
    from .plots import Plots
    from .progress_bars import ProgressBars
    from .pyg_model import PygModel
    from .records import Records
    from .string_methods import StringMethods
    from .torch_model import TorchModel
    from .torchaudio_model import TorchaudioModel

    # Python's string methods first (they answer only known strings); transformers' models before torch: they
    # are layers whose calls, ``.device`` and ``generate`` it answers (the rest of nn.Module's API is torch's);
    # PyG's message-passing calls with features on the weights' device too (their edge index is an index); torch
    # then answers numpy calls that take tensors (``np.asarray(t)``) before numpy's own table; torchaudio and PyG
    # make library layers the torch model then calls and moves; the library references last: the calls of them
    # no model above answered are unknown
    return (StringMethods, HFModels, PygModel, TorchModel, NumpyModel, ArgparseModel, Copies, EntryPoints,
            ArrayConsumers, Plots, ProgressBars, HFTrainer, AccelerateModel, TorchaudioModel, HFDatasets, Records,
            LibraryReferences)
