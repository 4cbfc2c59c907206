"""Python-level torch APIs the function mode cannot see: the optimizer's parameter check (MV205)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from .observer import Observer


def install(observer: Observer) -> Callable[[], None]:
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
