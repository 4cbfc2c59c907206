"""The observer: a TorchFunctionMode that sees every torch call of a program, classifies each
failure (classify.py), records it with the user's call site in runtime_shim's record format, and
re-raises what PyTorch raises, so the program behaves as under plain torch.
"""

from __future__ import annotations

import contextlib
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakIdKeyDictionary

try:  # fake mode's subclass of the mismatch error (torch 2.12+); older releases raise a plain RuntimeError
    from torch._subclasses.fake_tensor import FakeTensorDeviceMismatchError
except ImportError:  # pragma: no cover - depends on the torch release
    class FakeTensorDeviceMismatchError(RuntimeError):  # type: ignore[no-redef]
        """Never raised by this torch: nothing to re-raise as a plain RuntimeError."""

from .. import recorder
from . import fake_values, loaders, patches, sites
from .classify import INDEX_ARGS, Operand, classify
from .fake_cuda import FakeCuda

PROFILE = f"torch-{torch.__version__}"
MODES = ("fake", "real")

_MOVES = {torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu}
_GRAD = torch._C.TensorBase.__dict__["grad"]
_MODULE_CALLS = {torch.nn.Module._call_impl.__code__}


@dataclass
class Failure:
    """One recorded failure (also written to the runtime_shim record when recording is on)."""

    code: str
    message: str
    op: str
    site: dict
    extra: dict = field(default_factory=dict)

    @property
    def line(self) -> int | None:
        return self.site.get("line")


def op_name(func: Callable[..., Any]) -> str:
    owner = getattr(func, "__objclass__", None) or getattr(getattr(func, "__self__", None), "__objclass__", None)
    name = getattr(func, "__name__", None) or repr(func)
    if (owner is not None and issubclass(owner, torch._C.TensorBase)) \
            or getattr(func, "__qualname__", "").startswith("Tensor."):
        return f"Tensor.{name}"
    module = getattr(func, "__module__", None) or ""
    return f"{module.replace('torch._C._nn', 'torch.nn.functional')}.{name}" if module.startswith("torch") else name


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_flatten(value)[0] if isinstance(leaf, torch.Tensor)]


def _running_module() -> torch.nn.Module | None:
    """The innermost nn.Module whose ``__call__`` is on the stack."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code in _MODULE_CALLS:
            module = frame.f_locals.get("self")
            return module if isinstance(module, torch.nn.Module) else None
        frame = frame.f_back
    return None


class Observer:
    """Runs a program's torch calls through :class:`ObserverMode`; ``failures`` lists what failed."""

    def __init__(self, mode: str = "fake") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
        self.mode = mode
        self.fake = FakeCuda() if mode == "fake" else None
        self.failures: list[Failure] = []
        # Non-leaf tensors produced by moving a requires-grad tensor, with the device they came from (MV205).
        self.moved: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._stack: contextlib.ExitStack | None = None
        self.cuda_used = False  # some torch call made or read a CUDA tensor (a forked worker cannot use CUDA then)
        self.forked_worker = False  # fetching a batch as a DataLoader worker started by fork would (loaders.py)
        self.loader_sites: list[list] = []  # [file, line, col] of the loaders starting or yielding a batch

    # --- recording -----------------------------------------------------------------------------
    def record(self, code: str, message: str, op: str, site: dict, **extra: Any) -> None:
        self.failures.append(Failure(code, message, op, site, extra))
        recorder.record_finding(op, code, message, site, profile=PROFILE, mode=self.mode, **extra)

    def failed(self, op: str, exc: BaseException, operands: list[Operand],
               **extra: Any) -> BaseException:
        """Record ``exc`` when it is an MV2xx failure; the exception to raise (what torch raises)."""
        if getattr(exc, "runtime_shim_code", None) or not isinstance(exc, Exception):
            return exc
        message = str(exc)
        code = classify(message, operands, op.rpartition(".")[2])
        if code is None:
            return exc
        if isinstance(exc, FakeTensorDeviceMismatchError):  # real torch raises a plain RuntimeError
            exc = RuntimeError(message)
        exc.runtime_shim_code = code  # type: ignore[attr-defined]  # read by the runner's bootstrap
        site = sites.user_site()
        if self.loader_sites:  # the line that built the loader chose its sampler, pinning and workers
            site["callers"] = [*site.get("callers", []), *reversed(self.loader_sites)]
        self.record(code, message, op, site, **extra)
        return exc

    @contextlib.contextmanager
    def iterating(self, loader_site: list | None) -> Iterator[None]:
        """A loader (built at ``loader_site``) starts or yields a batch."""
        if loader_site is None:
            yield
            return
        self.loader_sites.append(loader_site)
        try:
            yield
        finally:
            self.loader_sites.pop()

    @contextlib.contextmanager
    def in_worker(self, forked: bool) -> Iterator[None]:
        """A batch fetched as a DataLoader worker; ``forked``: one that fork started after CUDA was used."""
        previous, self.forked_worker = self.forked_worker, forked
        try:
            yield
        finally:
            self.forked_worker = previous

    def operands(self, func: Callable[..., Any], args: tuple, kwargs: dict) -> list[Operand]:
        tensors = _tensors((args, kwargs))
        if not tensors:
            return []
        module = _running_module()
        owned = set()
        if module is not None:
            owned = {id(t) for t in (*module.parameters(), *module.buffers())}
        indices: set[int] = set()
        role = INDEX_ARGS.get(getattr(func, "__name__", ""))
        if role is not None:
            position, keyword = role
            value = args[position] if len(args) > position else kwargs.get(keyword)
            indices = {id(t) for t in _tensors(value)}
        return [Operand(str(t.device), t.dim(), id(t) in owned, id(t) in indices) for t in tensors]

    def moved_from(self, tensors: list[torch.Tensor]) -> dict[str, str]:
        for t in tensors:
            source = self.moved.get(t)
            if source is not None:
                return {"moved_from": source}
        return {}

    # --- calls -----------------------------------------------------------------------------------
    def call(self, func: Callable[..., Any], args: tuple, kwargs: dict, caller: types.FrameType) -> Any:
        if self.fake is not None:
            args, kwargs = fake_values.normalize_devices(self.fake, func, args, kwargs)
        try:
            if getattr(func, "__self__", None) is _GRAD:
                return self.read_grad(func, args, kwargs)
            if self.forked_worker and loaders.touches_cuda(args, kwargs):
                raise loaders.bad_fork()  # the first CUDA call of a forked child initialises CUDA, and cannot
            handler = fake_values.HANDLERS.get(func) if self.fake is not None else None
            result = handler(func, args, kwargs) if handler is not None else func(*args, **kwargs)
            if not self.cuda_used and isinstance(result, torch.Tensor) and result.device.type == "cuda":
                self.cuda_used = True
            elif self.forked_worker and loaders.touches_cuda(result):
                raise loaders.bad_fork()
        except Exception as exc:
            extra = self.moved_from(_tensors((args, kwargs)))
            raised = self.failed(op_name(func), exc, self.operands(func, args, kwargs), **extra)
            if raised is exc:
                raise
            raise raised from None  # FakeTensor's subclass replaced by torch's RuntimeError
        if func in _MOVES:
            self.after_move(func, args, kwargs, result, caller)
        return result

    def after_move(self, func: Callable[..., Any], args: tuple, kwargs: dict, result: Any,
                   caller: types.FrameType) -> None:
        source = args[0]
        if func is torch.Tensor.to and not fake_values.to_moves(args, kwargs):
            return  # .to(dtype): a cast, not a move
        if isinstance(result, torch.Tensor) and result is not source and source.requires_grad \
                and not result.is_leaf:
            self.moved[result] = str(source.device)
        if sites.is_user_frame(caller) and sites.result_discarded(caller):
            name = func.__name__
            self.record("MV206", f"the result of Tensor.{name}() is discarded: a tensor does not move in place "
                                 f"(assign it: x = x.{name}(...))",
                        f"Tensor.{name}", recorder.frame_site(caller), source_device=str(source.device))

    def read_grad(self, func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        tensor = args[0]
        if tensor.is_leaf or tensor.retains_grad or not tensor.requires_grad:
            return func(*args, **kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = func(*args, **kwargs)
        site = sites.user_site()
        for warning in caught:
            message = str(warning.message)
            if classify(message, []) == "MV205":
                self.record("MV205", message, "Tensor.grad", site, **self.moved_from([tensor]))
            # Hand the warning on, attributed to the user's line as torch does, for the program's filters.
            warnings.warn_explicit(warning.message, warning.category, site["file"] or warning.filename,
                                   site["line"] or warning.lineno)
        return result

    # --- lifetime ---------------------------------------------------------------------------------
    def start(self) -> Observer:
        stack = contextlib.ExitStack()
        if self.fake is not None:
            stack.enter_context(self.fake.active())
        stack.callback(patches.install(self))
        stack.callback(loaders.install(self))
        stack.enter_context(ObserverMode(self))
        self._stack = stack
        return self

    def stop(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None


class ObserverMode(TorchFunctionMode):
    """Sees each torch call (functions, methods, attribute reads) and hands it to the observer."""

    def __init__(self, observer: Observer) -> None:
        super().__init__()
        self.observer = observer

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
        return self.observer.call(func, args, kwargs or {}, sys._getframe(1))


@contextlib.contextmanager
def observe(mode: str = "fake") -> Iterator[Observer]:
    """Run the block under the observer: ``with observe() as obs: ...; obs.failures``."""
    observer = Observer(mode).start()
    try:
        yield observer
    finally:
        observer.stop()
