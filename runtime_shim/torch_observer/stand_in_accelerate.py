"""The observer's stand-in for ``accelerate`` (see :mod:`.stand_ins`): what ``Accelerator`` does with devices
in one process, after ``accelerate/accelerator.py``, ``state.py`` and ``data_loader.py``.

``Accelerator(cpu=False, device_placement=True)``: its ``device`` is the CPU with ``cpu=True``, else
``mps`` / ``cuda`` (written without an index, as accelerate makes it for one process) / the CPU, whichever
is available first. ``prepare(*objects, device_placement=None)`` gives back each object prepared, in order (one
object: itself): a module moved to the device (``model.to(self.device)``), a ``DataLoader`` whose batches are
sent there (``send_to_device``), anything else as given; ``device_placement`` False (the accelerator's, or
the object's) leaves devices alone. ``backward`` is ``loss.backward()``; one process gathers nothing:
``gather``, ``gather_for_metrics``, ``reduce`` and ``pad_across_processes`` give back what they get.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

__version__ = "0.0.0+runtime-shim-stand-in"


def _default_device(cpu: bool) -> torch.device:
    if cpu:
        return torch.device("cpu")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def send_to_device(data: Any, device: torch.device) -> Any:
    if isinstance(data, Mapping):
        return type(data)({k: send_to_device(v, device) for k, v in data.items()})
    if isinstance(data, (tuple, list)):
        return type(data)(send_to_device(v, device) for v in data)
    if hasattr(data, "to") and not isinstance(data, nn.Module):
        return data.to(device)
    return data


class PartialState:
    def __init__(self, cpu: bool = False, **kwargs: Any) -> None:
        self.device = _default_device(cpu)
        self.num_processes = 1
        self.process_index = 0
        self.local_process_index = 0
        self.is_main_process = True
        self.is_local_main_process = True


class AcceleratorState(PartialState):
    pass


class DataLoaderShard:
    """A data loader whose batches are sent to ``device``."""

    def __init__(self, loader: DataLoader, device: torch.device) -> None:
        self.loader = loader
        self.device = device

    def __iter__(self) -> Iterator[Any]:
        for batch in self.loader:
            yield send_to_device(batch, self.device)

    def __len__(self) -> int:
        return len(self.loader)


class Accelerator:
    def __init__(self, device_placement: bool = True, split_batches: bool = False, mixed_precision: Any = None,
                 gradient_accumulation_steps: int = 1, cpu: bool = False, **kwargs: Any) -> None:
        self.state = AcceleratorState(cpu=cpu)
        self.device_placement = device_placement
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.num_processes = 1
        self.process_index = 0
        self.is_main_process = True
        self.is_local_main_process = True
        self.sync_gradients = True

    @property
    def device(self) -> torch.device:
        return self.state.device

    def _prepare_one(self, obj: Any, device_placement: bool | None) -> Any:
        place = self.device_placement if device_placement is None else device_placement
        if isinstance(obj, DataLoader):
            return DataLoaderShard(obj, self.device) if place else obj
        if isinstance(obj, nn.Module):
            return obj.to(self.device) if place else obj
        return obj

    def prepare(self, *args: Any, device_placement: list[bool | None] | None = None) -> Any:
        placements = device_placement if device_placement is not None else [None] * len(args)
        if len(placements) != len(args):
            raise ValueError(f"`device_placement` should be a list with {len(args)} elements (the number of "
                             "objects passed).")
        result = tuple(self._prepare_one(obj, d) for obj, d in zip(args, placements, strict=True))
        return result[0] if len(result) == 1 else result

    def prepare_model(self, model: nn.Module, device_placement: bool | None = None,
                      evaluation_mode: bool = False) -> nn.Module:
        return self._prepare_one(model, device_placement)

    def prepare_data_loader(self, data_loader: DataLoader, device_placement: bool | None = None) -> Any:
        return self._prepare_one(data_loader, device_placement)

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        loss.backward(**kwargs)

    def gather(self, tensor: Any) -> Any:
        return tensor

    def gather_for_metrics(self, input_data: Any, use_gather_object: bool = False) -> Any:
        return input_data

    def reduce(self, tensor: Any, reduction: str = "sum", scale: float = 1.0) -> Any:
        return tensor

    def pad_across_processes(self, tensor: Any, dim: int = 0, pad_index: int = 0, pad_first: bool = False) -> Any:
        return tensor

    def unwrap_model(self, model: nn.Module, keep_fp32_wrapper: bool = True,
                     keep_torch_compile: bool = True) -> nn.Module:
        return model

    def clip_grad_norm_(self, parameters: Any, max_norm: float, norm_type: float = 2) -> torch.Tensor:
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type=norm_type)

    def accumulate(self, *models: nn.Module) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def autocast(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def wait_for_everyone(self) -> None:
        pass

    def print(self, *args: Any, **kwargs: Any) -> None:
        print(*args, **kwargs)
