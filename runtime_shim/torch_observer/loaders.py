"""``DataLoader`` iteration under the observer: worker processes, pinning, and the line a loader's failure names.

A real ``DataLoader`` with ``num_workers > 0`` starts worker processes that call the dataset's ``__getitem__``
and the ``collate_fn``, and with ``pin_memory=True`` on a machine with an accelerator pins every batch. Fake
tensors and the observer's mode cannot cross a process boundary (fake tensors do not pickle; a spawned child
has no fake CUDA) and a CPU build has no accelerator to pin for, so in fake mode a loader that has workers or
pins fetches its batches in this process, with the checks a real run makes, where it makes them:

* **a worker started by ``fork``** (``multiprocessing_context`` unset: the default start method, ``fork`` on
  Linux before Python 3.14; or ``"fork"``) after the program used CUDA (a CUDA tensor was made, a module moved
  to the GPU): every torch call the worker makes that creates, moves to or reads a CUDA tensor raises torch's
  ``Cannot re-initialize CUDA in forked subprocess. ...`` (``torch.cuda._lazy_init`` in the child, whose CUDA
  state the fork left unusable), recorded at that call (the ``.cuda()`` in ``__getitem__``, a transform, the
  ``collate_fn``). The main process then raises ``Caught RuntimeError in DataLoader worker process 0. ...`` at
  the loop, as ``ExceptionWrapper.reraise`` does. A ``spawn`` or ``forkserver`` worker is a fresh interpreter:
  CUDA works there, and nothing is checked. A fork before any CUDA use is not checked either (the child may
  initialise CUDA itself).
* **``pin_memory=True``**: the batch goes through ``torch.utils.data._utils.pin_memory.pin_memory`` as on a
  CUDA machine; ``Tensor.pin_memory()`` of a GPU tensor raises ``cannot pin 'torch.cuda.FloatTensor' only
  dense CPU tensors can be pinned`` (``fake_values.pin_memory``), recorded at the loop; with workers the main
  process raises it as from the pin-memory thread (``Caught RuntimeError in pin memory thread for device 0``).
  The CPU build's warning that no accelerator is found is not shown (a CUDA machine gives none).
* every failure raised while a loader starts or yields a batch (in either mode) also names, among its
  ``callers``, the line that built the loader: ``shuffle``, ``sampler``, ``generator``, ``pin_memory`` and
  ``num_workers`` are chosen there, and the analyzer reports MV210 and MV211 there (a sampler's CPU generator
  under a CUDA default device fails in ``torch.randperm`` inside ``RandomSampler.__iter__``).

In real mode the loader runs as torch runs it; only the loader's line is added to the records.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
import torch.multiprocessing
from torch.utils.data import DataLoader
from torch.utils.data import _utils as data_utils
from torch.utils.data.dataloader import _BaseDataLoaderIter, _DatasetKind, _SingleProcessDataLoaderIter

from ..torch_semantics import BAD_FORK_MESSAGE, worker_message
from . import sites

if TYPE_CHECKING:
    from .observer import Observer

_SITE = "_runtime_shim_site"
_NO_ACCELERATOR = "'pin_memory' argument is set as true but no accelerator is found"


def install(observer: Observer) -> Callable[[], None]:
    """Wrap ``DataLoader.__init__`` (remember the user's line), ``DataLoader._get_iterator`` and
    ``_BaseDataLoaderIter.__next__`` (name that line in failures; fetch in process in fake mode); the undo."""
    init, get_iterator = DataLoader.__dict__["__init__"], DataLoader.__dict__["_get_iterator"]
    next_batch = _BaseDataLoaderIter.__dict__["__next__"]

    def __init__(self: DataLoader, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        site = sites.user_site()
        object.__setattr__(self, _SITE, [site["file"], site["line"], site["col"]])

    def _get_iterator(self: DataLoader) -> _BaseDataLoaderIter:
        with observer.iterating(getattr(self, _SITE, None)):
            if observer.fake is None or (self.num_workers == 0 and not self.pin_memory):
                return get_iterator(self)
            return _InProcessIterator(self, observer)

    def __next__(self: _BaseDataLoaderIter) -> Any:
        with observer.iterating(getattr(getattr(self, "_runtime_shim_loader", None), _SITE, None)):
            return next_batch(self)

    base_init = _BaseDataLoaderIter.__dict__["__init__"]
    _BaseDataLoaderIter.__init__ = _remembering_loader(base_init)  # type: ignore[method-assign]
    DataLoader.__init__ = __init__  # type: ignore[method-assign]
    DataLoader._get_iterator = _get_iterator  # type: ignore[method-assign]
    _BaseDataLoaderIter.__next__ = __next__  # type: ignore[method-assign]

    def uninstall() -> None:
        DataLoader.__init__ = init  # type: ignore[method-assign]
        DataLoader._get_iterator = get_iterator  # type: ignore[method-assign]
        _BaseDataLoaderIter.__next__ = next_batch  # type: ignore[method-assign]
        _BaseDataLoaderIter.__init__ = base_init  # type: ignore[method-assign]
    return uninstall


def _remembering_loader(original: Callable[..., None]) -> Callable[..., None]:
    """``_BaseDataLoaderIter.__init__`` that keeps its loader (whose line a failure names)."""
    def __init__(self: _BaseDataLoaderIter, loader: DataLoader) -> None:
        self._runtime_shim_loader = loader
        original(self, loader)
    return __init__


def start_method(loader: DataLoader) -> str:
    """How the loader's workers start: its ``multiprocessing_context``'s method, else the default one."""
    context = loader.multiprocessing_context
    if context is None:
        return torch.multiprocessing.get_start_method(allow_none=True) \
            or torch.multiprocessing.get_context().get_start_method()
    return context.get_start_method()


def touches_cuda(*values: Any) -> bool:
    """Some tensor among ``values`` (nested) is on a CUDA device."""
    from torch.utils._pytree import tree_flatten

    return any(isinstance(leaf, torch.Tensor) and leaf.device.type == "cuda" for leaf in tree_flatten(values)[0])


def bad_fork() -> RuntimeError:
    return RuntimeError(BAD_FORK_MESSAGE)


def _reraised(exc: Exception, where: str) -> Exception:
    """The exception the main process raises for ``exc`` raised in a worker or the pin-memory thread."""
    kind = type(exc)
    try:
        wrapped = kind(worker_message(str(exc), where, kind.__name__))
    except Exception:  # an exception type that takes other arguments: torch raises it the same way and fails too
        wrapped = RuntimeError(worker_message(str(exc), where, kind.__name__))
    code = getattr(exc, "runtime_shim_code", None)
    if code is not None:
        wrapped.runtime_shim_code = code  # type: ignore[attr-defined]
    return wrapped


class _InProcessIterator(_SingleProcessDataLoaderIter):
    """The batches of a loader with workers or pinning, fetched in this process with a real run's checks."""

    def __init__(self, loader: DataLoader, observer: Observer) -> None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NO_ACCELERATOR)
            _BaseDataLoaderIter.__init__(self, loader)  # (not the single-process check of num_workers)
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last)
        self._observer = observer
        self._workers = loader.num_workers
        self._forked = loader.num_workers > 0 and start_method(loader) == "fork" and observer.cuda_used
        self._pin = loader.pin_memory

    def _next_data(self) -> Any:
        index = self._next_index()  # may raise StopIteration
        if not self._workers:
            data = self._dataset_fetcher.fetch(index)
        else:
            try:
                with self._observer.in_worker(self._forked):
                    data = self._dataset_fetcher.fetch(index)
            except StopIteration:
                raise
            except Exception as exc:
                raise _reraised(exc, "DataLoader worker process 0") from None
        if self._pin:
            try:
                data = data_utils.pin_memory.pin_memory(data)
            except Exception as exc:
                if not self._workers:
                    raise
                raise _reraised(exc, "pin memory thread for device 0") from None
        return data
