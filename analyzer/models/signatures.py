"""The declared parameters of modelled library callables, and :func:`bind`, which maps a call's arguments
onto them as Python does (positionals in order, keywords by name, ``*args``/``**kwargs`` collecting the rest).

A signature is written as the text of a ``def``'s parameter list (``"input, *, dtype=None, device=None"``);
defaults are kept as source text (a model reads them, the engine never evaluates them)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # "positional" (or keyword), "positional_only", "keyword_only", "var_positional", "var_keyword"
    default: str | None = None  # the default's source text (None: required)


@dataclass(frozen=True)
class Signature:
    text: str
    parameters: tuple[Parameter, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)


@dataclass
class Bound(Generic[T]):
    """The arguments of one call by parameter name; ``rest``: the ``*args`` extras, ``extra``: the ``**kwargs``."""

    arguments: dict[str, T]
    rest: list[T]
    extra: dict[str, T]

    def get(self, name: str, default: T | None = None) -> T | None:
        return self.arguments.get(name, default)

    def __contains__(self, name: str) -> bool:
        return name in self.arguments


@cache
def parse_signature(text: str) -> Signature:
    """``"input, *, dtype=None"`` -> its parameters (a malformed text is a bug in the table: ValueError)."""
    try:
        tree = ast.parse(f"def _({text}): pass")
    except SyntaxError as error:
        raise ValueError(f"bad signature {text!r}: {error.msg}") from None
    args = tree.body[0].args  # type: ignore[attr-defined]
    params: list[Parameter] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional"
        params.append(Parameter(arg.arg, kind, default))
    if args.vararg is not None:
        params.append(Parameter(args.vararg.arg, "var_positional"))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Parameter(arg.arg, "keyword_only", None if default is None else ast.unparse(default)))
    if args.kwarg is not None:
        params.append(Parameter(args.kwarg.arg, "var_keyword"))
    return Signature(text, tuple(params))


def bind(signature: Signature | str, args: list[T], kwargs: dict[str, T], *,
         lenient: bool = False) -> Bound[T] | None:
    """The call's arguments by parameter name, as Python binds them; None where Python would raise
    ``TypeError`` (too many positionals, an unknown or repeated keyword), unless ``lenient``: then surplus
    positionals and unknown keywords are kept in ``rest``/``extra`` and a repeated one's keyword wins (the
    analysis reads what it can of a call the table does not describe fully). A missing required parameter is
    left out (the caller treats it as not given: the analysis may not see every argument)."""
    sig = parse_signature(signature) if isinstance(signature, str) else signature
    bound: dict[str, T] = {}
    rest: list[T] = []
    extra: dict[str, T] = {}
    positional = [p for p in sig.parameters if p.kind in ("positional_only", "positional")]
    star = any(p.kind == "var_positional" for p in sig.parameters)
    if len(args) > len(positional) and not star and not lenient:
        return None
    for param, value in zip(positional, args, strict=False):
        bound[param.name] = value
    rest = list(args[len(positional):])
    by_name = {p.name: p for p in sig.parameters if p.kind in ("positional", "keyword_only")}
    double_star = any(p.kind == "var_keyword" for p in sig.parameters)
    for name, value in kwargs.items():
        if name in by_name:
            if name in bound and not lenient:
                return None  # given twice
            bound[name] = value
        elif double_star or lenient:
            extra[name] = value
        else:
            return None
    return Bound(bound, rest, extra)


def signature_of(path: str) -> Signature | None:
    """The declared signature of a qualified name (None: not declared)."""
    for table in SIGNATURES.values():
        text = table.get(path)
        if text is not None:
            return parse_signature(text)
    return None


_CREATE = "*size, out=None, dtype=None, layout=None, device=None, requires_grad=False"
_LIKE = "input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None"

#: model name -> qualified name -> its parameters (the modelled callables; ``devicelint models`` lists them)
SIGNATURES: dict[str, dict[str, str]] = {
    "torch": {
        "torch.device": "type, index=None",
        "torch.tensor": "data, *, dtype=None, device=None, requires_grad=False, pin_memory=False",
        "torch.as_tensor": "data, dtype=None, device=None",
        "torch.from_numpy": "ndarray",
        "torch.zeros": _CREATE,
        "torch.ones": _CREATE,
        "torch.empty": _CREATE,
        "torch.rand": _CREATE,
        "torch.randn": _CREATE,
        "torch.full": "size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        "torch.arange": "start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, "
                        "requires_grad=False",
        "torch.randint": "*args, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        "torch.linspace": "start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        "torch.eye": "n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        "torch.zeros_like": _LIKE,
        "torch.ones_like": _LIKE,
        "torch.empty_like": _LIKE,
        "torch.full_like": "input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, "
                           "memory_format=None",
        "torch.rand_like": _LIKE,
        "torch.randn_like": _LIKE,
        "torch.randint_like": "input, low=0, high=None, *, dtype=None, layout=None, device=None, "
                              "requires_grad=False, memory_format=None",
        "torch.cat": "tensors, dim=0, *, out=None",
        "torch.stack": "tensors, dim=0, *, out=None",
        "torch.cuda.is_available": "",
        "torch.cuda.device_count": "",
        "torch.cuda.set_device": "device",
        "torch.set_default_device": "device",
        "torch.no_grad": "",
        "torch.enable_grad": "",
        "torch.inference_mode": "mode=True",
        "torch.nn.Parameter": "data=None, requires_grad=True",
        "torch.optim.*": "params, *args, **kwargs",
        "torch.nn.*": "*args, **kwargs",
        "torch.utils.data.DataLoader": "dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, "
                                       "num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, "
                                       "**kwargs",
        "torch.utils.data.TensorDataset": "*tensors",
    },
    "numpy": {
        "numpy.array": "object, dtype=None, *, copy=True, order='K', subok=False, ndmin=0, like=None",
        "numpy.asarray": "a, dtype=None, order=None, *, device=None, copy=None, like=None",
        "numpy.zeros": "shape, dtype=float, order='C', *, like=None",
        "numpy.ones": "shape, dtype=None, order='C', *, like=None",
        "numpy.random.default_rng": "seed=None",
    },
    "argparse": {
        "argparse.ArgumentParser": "*args, **kwargs",
        "argparse.Namespace": "**kwargs",
        "types.SimpleNamespace": "**kwargs",
    },
    "copy": {
        "copy.deepcopy": "x, memo=None",
    },
}
