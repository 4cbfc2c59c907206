"""Python-level torch APIs the function mode cannot see: the optimizer's parameter check (MV205),
``nn.DataParallel``'s module check (MV202), which a fake run also needs to scatter without CUDA, and
``DistributedDataParallel``'s constructor checks (MV202), which a fake run needs to reach without its
collectives. A world of one process started by ``torch.multiprocessing.spawn(fn, nprocs=1)`` runs in the
observed process (a spawned interpreter would run without the observer)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch.utils._pytree import tree_map

from ..torch_semantics import data_parallel_message

if TYPE_CHECKING:
    from .observer import Observer


def install(observer: Observer) -> Callable[[], None]:
    """Wrap ``Optimizer.add_param_group`` and ``DataParallel.forward``; the undo."""
    undo = [_install_optimizer(observer), _install_data_parallel(observer), _install_ddp(observer),
            _install_spawn()]

    def uninstall() -> None:
        for step in reversed(undo):
            step()
    return uninstall


def _install_optimizer(observer: Observer) -> Callable[[], None]:
    """Wrap ``Optimizer.add_param_group`` (every optimizer's constructor calls it); the undo."""
    optimizer = torch.optim.Optimizer
    original = optimizer.__dict__["add_param_group"]

    def add_param_group(self: torch.optim.Optimizer, param_group: dict[str, Any]) -> None:
        try:
            return original(self, param_group)
        except ValueError as exc:
            params = param_group.get("params") if isinstance(param_group, dict) else None
            tensors = [params] if isinstance(params, torch.Tensor) else list(params or [])
            non_leaf = [t for t in tensors if isinstance(t, torch.Tensor) and not t.is_leaf]
            observer.failed(f"{type(self).__name__}.add_param_group", exc, [], **observer.moved_from(non_leaf))
            raise

    add_param_group.__wrapped__ = original  # type: ignore[attr-defined]
    optimizer.add_param_group = add_param_group  # type: ignore[method-assign]
    return lambda: setattr(optimizer, "add_param_group", original)


def _install_data_parallel(observer: Observer) -> Callable[[], None]:
    """Record ``DataParallel``'s module check (plain Python, before any torch call). Under fake CUDA a CPU build
    has no ``scatter``/``gather`` kernels: one replica runs instead, on ``device_ids[0]``, with the inputs copied
    there and the outputs gathered on ``output_device``, the devices a real run gives."""
    wrapper = torch.nn.DataParallel
    original = wrapper.__dict__["forward"]

    def fake_forward(self: torch.nn.DataParallel, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(data_parallel_message(str(self.src_device_obj), str(t.device)))
        src = self.src_device_obj
        inputs, kwargs = tree_map(lambda v: v.to(src) if isinstance(v, torch.Tensor) else v, (inputs, kwargs))
        out = self.module(*inputs, **kwargs)
        if len(self.device_ids) == 1:
            return out
        target = torch.device(src.type, self.output_device)
        return tree_map(lambda v: v.to(target) if isinstance(v, torch.Tensor) else v, out)

    run = fake_forward if observer.fake is not None else original

    def forward(self: torch.nn.DataParallel, *inputs: Any, **kwargs: Any) -> Any:
        try:
            return run(self, *inputs, **kwargs)
        except RuntimeError as exc:
            if "(device_ids[0])" in str(exc):
                raise observer.failed("DataParallel.forward", exc, []) from None
            raise

    forward.__wrapped__ = original  # type: ignore[attr-defined]
    wrapper.forward = forward  # type: ignore[method-assign]
    return lambda: setattr(wrapper, "forward", original)


class _ChecksPassed(Exception):
    """Raised where ``DistributedDataParallel.__init__`` has made every argument and device check."""


def _install_ddp(observer: Observer) -> Callable[[], None]:
    """Record the constructor's checks (``ValueError`` when ``device_ids`` is given for a CPU module, or the module
    spans device types), raised by torch's own ``__init__``. Under fake CUDA the collectives after them (parameter
    verification, the broadcast of the module's state, the reducer) cannot run on fake tensors: the constructor
    stops where it builds the reducer's parameters, after the checks, and the forward does what DDP's does with
    the devices of a world of one process: inputs moved to ``device_ids[0]`` when given, then the module."""
    from torch.nn.parallel import distributed

    wrapper = distributed.DistributedDataParallel
    original_init = wrapper.__dict__["__init__"]
    original_forward = wrapper.__dict__["forward"]
    build = wrapper.__dict__["_build_params_for_reducer"]

    def stop(self: Any) -> Any:
        raise _ChecksPassed

    def fake_init(self: Any, module: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        wrapper._build_params_for_reducer = stop  # type: ignore[method-assign]
        try:
            original_init(self, module, *args, **kwargs)
        except _ChecksPassed:
            pass  # the checks passed; what follows synchronises processes
        finally:
            wrapper._build_params_for_reducer = build  # type: ignore[method-assign]

    def fake_forward(self: Any, *inputs: Any, **kwargs: Any) -> Any:
        if self.device_ids:
            target = torch.device(self.device_type, self.device_ids[0])
            inputs, kwargs = tree_map(lambda v: v.to(target) if isinstance(v, torch.Tensor) else v, (inputs, kwargs))
        return self.module(*inputs, **kwargs)

    run_init = fake_init if observer.fake is not None else original_init

    def init(self: Any, module: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        try:
            run_init(self, module, *args, **kwargs)
        except ValueError as exc:
            raised = observer.failed("DistributedDataParallel.__init__", exc, [])
            if raised is exc:
                raise
            raise raised from None

    init.__wrapped__ = original_init  # type: ignore[attr-defined]
    wrapper.__init__ = init  # type: ignore[method-assign]
    if observer.fake is not None:
        wrapper.forward = fake_forward  # type: ignore[method-assign]

    def undo() -> None:
        wrapper.__init__ = original_init  # type: ignore[method-assign]
        wrapper.forward = original_forward  # type: ignore[method-assign]
    return undo


def _install_spawn() -> Callable[[], None]:
    """``spawn(fn, args, nprocs=1)`` / ``start_processes(...)`` of one process: ``fn(0, *args)`` here, under the
    observer (a fresh interpreter would run unobserved, without fake CUDA); more processes: as torch starts them."""
    import sys

    import torch.multiprocessing as mp

    spawn_module = sys.modules["torch.multiprocessing.spawn"]  # (the package's ``spawn`` is the function)

    originals = {"spawn": spawn_module.spawn, "start_processes": spawn_module.start_processes}

    def one_process(name: str) -> Callable[..., Any]:
        original = originals[name]

        def launch(fn: Callable[..., Any], args: tuple = (), nprocs: int = 1, join: bool = True,
                   daemon: bool = False, *rest: Any, **kwargs: Any) -> Any:
            if nprocs == 1 and join and not rest:
                fn(0, *args)
                return None
            return original(fn, args, nprocs, join, daemon, *rest, **kwargs)

        launch.__wrapped__ = original  # type: ignore[attr-defined]
        return launch

    patched = {name: one_process(name) for name in originals}
    for name, function in patched.items():
        setattr(mp, name, function)
        setattr(spawn_module, name, function)

    def undo() -> None:
        for name, function in originals.items():
            setattr(mp, name, function)
            setattr(spawn_module, name, function)
    return undo
