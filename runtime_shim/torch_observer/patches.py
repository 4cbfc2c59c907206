"""Python-level torch APIs the function mode cannot see: the optimizer's parameter check (MV205) and
``nn.DataParallel``'s module check (MV202), which a fake run also needs to scatter without CUDA."""

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
    undo = [_install_optimizer(observer), _install_data_parallel(observer)]

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
