"""A project optimizer: a subclass of ``torch.optim.Optimizer`` (or of a library optimizer) whose ``__init__``
calls ``super().__init__(params, defaults)`` and whose ``step`` walks ``self.param_groups``.

The library's constructor keeps the parameters in ``param_groups``: a list of dicts, each with the group's
``"params"`` and the defaults' other keys. Storing that on the instance lets ``for group in self.param_groups:
for p in group["params"]: ... p.grad`` follow the model's parameters (and so their device) into the project's
own update rule, as PyTorch's optimizers do. Anything else the base keeps (``state``) stays unknown."""

from __future__ import annotations

from collections.abc import Callable

from ..domain import TOP, DictAtom, V, Value, seq_of
from ..engine.program import ClassInfo

#: ``super().__init__`` of a project optimizer, bound to the instance
OPTIMIZER_INIT = "@optimizer_init"
#: the attribute the library's constructor sets up
PARAM_GROUPS = "param_groups"
#: the library base a project optimizer class is noted with
OPTIMIZER_TYPE = "torch.optim.Optimizer"


def optimizer_class(path: str) -> bool:
    """``torch.optim.Optimizer``, ``torch.optim.SGD``, ``torch.optim.optimizer.Optimizer``: an optimizer class
    (not a learning-rate scheduler)."""
    return path.startswith("torch.optim.") and "lr_scheduler" not in path and path.rpartition(".")[2][:1].isupper()


def is_project_optimizer(cls: ClassInfo) -> bool:
    """A project class deriving from ``torch.optim.Optimizer`` or a library optimizer (``torch.optim.SGD``)."""
    return cls.has_library_base(OPTIMIZER_TYPE)


def param_groups(params: Value, defaults: Value | None, element: Callable[[Value], Value]) -> Value:
    """What ``Optimizer.__init__(params, defaults)`` (or an inherited library optimizer's constructor, whose
    keyword arguments are not followed: ``defaults`` None) keeps as ``param_groups``: for an iterable of tensors, one
    group of them with the defaults' keys; for an iterable of dicts (explicit groups), those dicts with the
    defaults' keys they leave out. ``element``: what iterating a value gives."""
    items = element(params)
    base: tuple = ()
    rest: Value | None = TOP
    if defaults is not None and not defaults.top and len(defaults.atoms) == 1:
        known = next(iter(defaults.atoms))
        if isinstance(known, DictAtom) and known.rest is None:
            base, rest = tuple(known.items), TOP
    groups = [a for a in items.atoms if isinstance(a, DictAtom)]
    if groups and len(groups) == len(items.atoms) and not items.top:
        out = Value()
        for group in groups:
            keys = {k for k, _v in group.items}
            given = tuple((k, element(v) if k == "params" else v) for k, v in group.items)
            listed = tuple((k, V(seq_of("list", v)) if k == "params" else v) for k, v in given)
            out = out.join(V(DictAtom((*listed, *((k, v) for k, v in base if k not in keys)), rest)))
        return V(seq_of("list", out))
    if any(isinstance(a, DictAtom) for a in items.atoms):
        return TOP  # groups mixed with something else: not followed
    group = DictAtom((("params", V(seq_of("list", items))), *((k, v) for k, v in base if k != "params")), rest)
    return V(seq_of("list", V(group)))
