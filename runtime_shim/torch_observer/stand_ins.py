"""Stand-ins for the training frameworks a program may import where they are not installed: a small model of
what each does with devices, run instead of the library so that a program written against it runs under the
observer (the CI machine has neither).

* ``transformers`` (``stand_in_transformers``): ``TrainingArguments.device`` and the ``Trainer``'s placement: the
  model moved to ``args.device``, every batch's tensors moved there by ``_prepare_inputs`` before
  ``compute_loss(model, inputs)``, from ``training_step`` and ``prediction_step``; pretrained models, tokenizers,
  data collators and ``pipeline`` (``stand_in_hf_models``) placed as ``from_pretrained``/``BatchEncoding.to`` do;
* ``accelerate`` (``stand_in_accelerate``): ``Accelerator.device`` and ``prepare``: modules moved there, data
  loaders whose batches are sent there, the rest as given; ``backward`` and the one-process collectives;
* ``tqdm`` (``stand_in_tqdm``, also ``tqdm.auto``/``tqdm.notebook``/``tqdm.std``): bars that yield what they wrap;
* ``matplotlib.pyplot`` (``stand_in_pyplot``, in the package ``stand_in_matplotlib``): figures and axes whose
  plotting methods read their data with ``numpy.asarray``, as matplotlib's do;
* ``torchvision`` (``stand_in_torchvision``, with ``.models`` and ``.ops``): classifier builders whose weights are
  on the CPU, and box ops that need their tensors on one device;
* ``torchaudio`` (``stand_in_torchaudio``, with ``.transforms`` and ``.functional``): transforms whose windows,
  filter banks and kernels are buffers made on the CPU, ``load`` of a WAV file to a CPU tensor, the filter-bank
  builders (CPU matrices);
* ``torch_geometric`` (``stand_in_torch_geometric``, with ``.data``, ``.loader`` and ``.nn``): graphs whose
  ``to(device)`` moves their tensors in place, a loader of batches left where the graphs are, message-passing
  layers with CPU weights, the global poolings;
* ``datasets`` (``stand_in_datasets``): datasets of Python columns whose torch format gives CPU tensors, and a
  ``load_dataset`` of synthetic text-classification rows (nothing is downloaded).

The finder sits last on ``sys.meta_path``: an installed library is always found first and runs as it is. A
stand-in announces itself on stderr when it is imported. Nothing else of either library exists here: a
program that needs more fails with an ``AttributeError`` / ``ImportError`` naming what is missing.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

#: module name -> the stand-in module's file (beside this one); a submodule's parent stand-in is a package
STAND_INS = {"transformers": "stand_in_transformers.py", "accelerate": "stand_in_accelerate.py",
             **dict.fromkeys(("tqdm", "tqdm.auto", "tqdm.notebook", "tqdm.std"), "stand_in_tqdm.py"),
             "matplotlib": "stand_in_matplotlib.py", "matplotlib.pyplot": "stand_in_pyplot.py",
             "torchvision": "stand_in_torchvision.py", "torchvision.models": "stand_in_torchvision_models.py",
             "torchvision.ops": "stand_in_torchvision_ops.py", "torchaudio": "stand_in_torchaudio.py",
             "torchaudio.transforms": "stand_in_torchaudio_transforms.py",
             "torchaudio.functional": "stand_in_torchaudio_functional.py",
             "torch_geometric": "stand_in_torch_geometric.py",
             "torch_geometric.data": "stand_in_torch_geometric_data.py",
             "torch_geometric.loader": "stand_in_torch_geometric_loader.py",
             "torch_geometric.nn": "stand_in_torch_geometric_nn.py",
             "datasets": "stand_in_datasets.py"}


class StandInFinder(importlib.abc.MetaPathFinder):
    """Finds a stand-in for a framework no other finder found."""

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        file = STAND_INS.get(fullname)
        if file is None:
            return None
        print(f"runtime_shim: {fullname} is not installed: running with the observer's stand-in "
              f"(its device placement only; docs/torch_observer.md)", file=sys.stderr)
        return importlib.util.spec_from_file_location(fullname, os.path.join(os.path.dirname(__file__), file))


def install() -> None:
    """Add the finder (once), after every other finder."""
    if not any(isinstance(finder, StandInFinder) for finder in sys.meta_path):
        sys.meta_path.append(StandInFinder())
