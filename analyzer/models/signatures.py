"""The declared parameters of modelled library callables, and :func:`bind`, which maps a call's arguments
onto them as Python does (positionals in order, keywords by name, ``*args``/``**kwargs`` collecting the rest).

A signature is written as the text of a ``def``'s parameter list (``"input, *, dtype=None, device=None"``);
defaults are kept as source text (a model reads them, the engine never evaluates them)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Generic, TypeVar, overload

from ..domain import TOP
from .array_consumers import CONSUMERS, KEYWORDS_ONLY
from .progress_bars import AROUND_BUILTINS, WRAPPERS

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

    def __post_init__(self) -> None:
        # what binding asks of every call (a signature is parsed once, bound often)
        params = self.parameters
        object.__setattr__(self, "positional", tuple(p.name for p in params
                                                     if p.kind in ("positional_only", "positional")))
        object.__setattr__(self, "by_name", frozenset(p.name for p in params
                                                      if p.kind in ("positional", "keyword_only")))
        object.__setattr__(self, "star", any(p.kind == "var_positional" for p in params))
        object.__setattr__(self, "double_star", any(p.kind == "var_keyword" for p in params))

    positional: tuple[str, ...] = field(init=False, repr=False, compare=False)
    by_name: frozenset[str] = field(init=False, repr=False, compare=False)
    star: bool = field(init=False, repr=False, compare=False)
    double_star: bool = field(init=False, repr=False, compare=False)

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)


@dataclass
class Bound(Generic[T]):
    """The arguments of one call by parameter name; ``rest``: the ``*args`` extras, ``extra``: the ``**kwargs``."""

    arguments: dict[str, T]
    rest: list[T]
    extra: dict[str, T]

    @overload
    def get(self, name: str) -> T | None: ...
    @overload
    def get(self, name: str, default: T) -> T: ...

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
    positional = sig.positional
    if len(args) > len(positional) and not sig.star and not lenient:
        return None
    bound: dict[str, T] = dict(zip(positional, args, strict=False))
    rest = list(args[len(positional):])
    extra: dict[str, T] = {}
    for name, value in kwargs.items():
        if name in sig.by_name:
            if name in bound and not lenient:
                return None  # given twice
            bound[name] = value
        elif sig.double_star or lenient:
            extra[name] = value
        else:
            return None
    return Bound(bound, rest, extra)


@lru_cache(maxsize=8192)  # (by the names programs call: bounded, as an editor's server lives on)
def signature_of(path: str) -> Signature | None:
    """The declared signature of a qualified name, or of the longest ``prefix.*`` that covers it (None: not
    declared)."""
    for table in SIGNATURES.values():
        text = table.get(path)
        if text is not None:
            return parse_signature(text)
    module = path
    while "." in module:
        module = module.rpartition(".")[0]
        for table in SIGNATURES.values():
            text = table.get(f"{module}.*")
            if text is not None:
                return parse_signature(text)
    return None


_ANYTHING = parse_signature("*args, **kwargs")


def bind_call(path: str, args: list[T], kwargs: dict[str, T]) -> Bound[T]:
    """A call of ``path`` bound (leniently) to its declared parameters; an undeclared one binds no name."""
    bound = bind(signature_of(path) or _ANYTHING, args, kwargs, lenient=True)
    assert bound is not None  # lenient binding always binds
    return bound


def argument(path: str, args: list[T], kwargs: dict[str, T], name: str, default: Any = TOP) -> Any:
    """One argument of a call of ``path`` by parameter name (``default`` where it is not given)."""
    return bind_call(path, args, kwargs).arguments.get(name, default)


_SIZE = "*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False"
_FACTORY = "out=None, dtype=None, layout=None, device=None, requires_grad=False"
_LIKE = "input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None"
_LEGACY = "*args, device=None"
_NO_ARGUMENTS = ""
_SEQUENCE = "tensors, dim=0, *, out=None"

#: model name -> qualified name (or ``prefix.*``: every name under it) -> its parameters: the modelled
#: callables, as ``devicelint models`` lists them
SIGNATURES: dict[str, dict[str, str]] = {
    "torch": {
        # creators: on ``device=`` (else the default device)
        "torch.tensor": "data, *, dtype=None, device=None, requires_grad=False, pin_memory=False",
        "torch.as_tensor": "data, dtype=None, device=None",
        "torch.scalar_tensor": f"s, *, {_FACTORY}",
        "torch.fft.fft": "input, n=None, dim=-1, norm=None, *, out=None",
        "torch.fft.ifft": "input, n=None, dim=-1, norm=None, *, out=None",
        "torch.fft.rfft": "input, n=None, dim=-1, norm=None, *, out=None",
        "torch.fft.irfft": "input, n=None, dim=-1, norm=None, *, out=None",
        "torch.fft.hfft": "input, n=None, dim=-1, norm=None, *, out=None",
        "torch.fft.ihfft": "input, n=None, dim=-1, norm=None, *, out=None",
        "torch.fft.fft2": "input, s=None, dim=(-2, -1), norm=None, *, out=None",
        "torch.fft.ifft2": "input, s=None, dim=(-2, -1), norm=None, *, out=None",
        "torch.fft.rfft2": "input, s=None, dim=(-2, -1), norm=None, *, out=None",
        "torch.fft.irfft2": "input, s=None, dim=(-2, -1), norm=None, *, out=None",
        "torch.fft.fftn": "input, s=None, dim=None, norm=None, *, out=None",
        "torch.fft.ifftn": "input, s=None, dim=None, norm=None, *, out=None",
        "torch.fft.rfftn": "input, s=None, dim=None, norm=None, *, out=None",
        "torch.fft.irfftn": "input, s=None, dim=None, norm=None, *, out=None",
        "torch.fft.fftshift": "input, dim=None",
        "torch.fft.ifftshift": "input, dim=None",
        "torch.fft.fftfreq": "n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        "torch.fft.rfftfreq": "n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        "torch.zeros": _SIZE,
        "torch.ones": _SIZE,
        "torch.empty": _SIZE,
        "torch.rand": f"*size, generator=None, {_FACTORY}, pin_memory=False",
        "torch.randn": f"*size, generator=None, {_FACTORY}, pin_memory=False",
        "torch.full": f"size, fill_value, *, {_FACTORY}",
        "torch.arange": f"start=0, end=None, step=1, *, {_FACTORY}",
        "torch.linspace": f"start, end, steps, *, {_FACTORY}",
        "torch.logspace": f"start, end, steps, base=10.0, *, {_FACTORY}",
        "torch.eye": f"n, m=None, *, {_FACTORY}",
        "torch.randint": f"*args, generator=None, {_FACTORY}",
        "torch.randperm": f"n, *, generator=None, {_FACTORY}, pin_memory=False",
        "torch.normal": f"mean, std=1.0, size=None, *, generator=None, {_FACTORY}",
        "torch.bernoulli_like": f"input, *, generator=None, {_FACTORY}",
        **{f"torch.{name}_window": f"window_length, periodic=True, {extra}*, {_FACTORY}" for name, extra in (
            ("hann", ""), ("hamming", "alpha=0.54, beta=0.46, "), ("blackman", ""), ("bartlett", ""),
            ("kaiser", "beta=12.0, "))},
        "torch.tril_indices": "row, col, offset=0, *, dtype=None, device=None, layout=None",
        "torch.triu_indices": "row, col, offset=0, *, dtype=None, device=None, layout=None",
        "torch.zeros_like": _LIKE,
        "torch.ones_like": _LIKE,
        "torch.empty_like": _LIKE,
        "torch.full_like": "input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, "
                           "memory_format=None",
        "torch.rand_like": _LIKE,
        "torch.randn_like": _LIKE,
        "torch.randint_like": "input, low=0, high=None, *, dtype=None, layout=None, device=None, "
                              "requires_grad=False, memory_format=None",
        **{f"torch.{name}": _LEGACY for name in (
            "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
            "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")},
        "torch.sparse_coo_tensor": "indices, values, size=None, *, dtype=None, device=None, pin_memory=False, "
                                   "requires_grad=False, check_invariants=None, is_coalesced=None",
        "torch.Tensor": "*args",
        "torch.nn.utils.rnn.pad_sequence": "sequences, batch_first=False, padding_value=0.0, padding_side='right'",
        "torch.from_numpy": "ndarray",
        "torch.from_dlpack": "ext_tensor",
        "torch.utils.dlpack.from_dlpack": "ext_tensor",
        "torch.autograd.Variable": "data, requires_grad=False, volatile=False",
        "torch.nn.utils.clip_grad_norm_": "parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None",
        "torch.nn.utils.clip_grad.clip_grad_norm_": "parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, "
                                                    "foreach=None",
        "torch.nn.utils.clip_grad_norm": "parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None",
        "torch.nn.utils.get_total_norm": "tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None",
        "torch.autograd.grad": "outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, "
                               "only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False",
        "torch.autograd.backward": "tensors, grad_tensors=None, retain_graph=None, create_graph=False, "
                                   "grad_variables=None, inputs=None",
        "torch.autograd.variable.Variable": "data, requires_grad=False, volatile=False",
        **{f"torch.cuda.{name}": _LEGACY for name in (
            "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
            "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")},
        **{name: "module, device_ids=None, output_device=None, dim=0" for name in (
            "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel")},
        **{name: "module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True, "
                 "process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False, "
                 "gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None, "
                 "param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None, "
                 "skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False, "
                 "forward_sync_buffers=None" for name in (
            "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")},
        "torch.distributions.kl_divergence": "p, q",
        "torch.distributions.kl.kl_divergence": "p, q",
        "torch.backends.mps.is_available": _NO_ARGUMENTS,
        "torch.nn.Parameter": "data=None, requires_grad=True",
        "torch.nn.parameter.Parameter": "data=None, requires_grad=True",
        "torch.nn.Embedding.from_pretrained": "embeddings, freeze=True, padding_idx=None, max_norm=None, "
                                              "norm_type=2.0, scale_grad_by_freq=False, sparse=False",
        "torch.nn.EmbeddingBag.from_pretrained": "embeddings, freeze=True, max_norm=None, norm_type=2.0, "
                                                 "scale_grad_by_freq=False, mode='mean', sparse=False, "
                                                 "include_last_offset=False, padding_idx=None",
        # devices and modes
        "torch.device": "type, index=None",
        "torch.set_default_device": "device",
        "torch.compile": "model=None, *, fullgraph=False, dynamic=None, backend='inductor', mode=None, options=None, "
                         "disable=False",
        "torch.jit.script": "obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None",
        "torch.nn.utils.rnn.pack_padded_sequence": "input, lengths, batch_first=False, enforce_sorted=True",
        "torch.set_default_tensor_type": "t",
        "torch.cuda.is_available": _NO_ARGUMENTS,
        "torch.cuda.device_count": _NO_ARGUMENTS,
        "torch.cuda.current_device": _NO_ARGUMENTS,
        "torch.cuda.set_device": "device",
        "torch.cuda.device": "device",
        "torch.no_grad": "orig_func=None",
        "torch.enable_grad": "orig_func=None",
        "torch.inference_mode": "mode=True",
        "torch.set_grad_enabled": "mode",
        # sequences of tensors
        **{f"torch.{name}": _SEQUENCE for name in (
            "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack")},
        "torch.block_diag": "*tensors",
        "torch.cartesian_prod": "*tensors",
        "torch.broadcast_tensors": "*tensors",
        "torch.meshgrid": "*tensors, indexing=None",
        # processes
        "torch.multiprocessing.spawn": "fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'",
        "torch.multiprocessing.spawn.spawn": "fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'",
        "torch.multiprocessing.start_processes": "fn, args=(), nprocs=1, join=True, daemon=False, "
                                                 "start_method='spawn'",
        "torch.multiprocessing.Process": "group=None, target=None, name=None, args=(), kwargs={}, *, daemon=None",
        # data
        "torch.utils.data.DataLoader": "dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, "
                                       "num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, "
                                       "timeout=0, worker_init_fn=None, multiprocessing_context=None, "
                                       "generator=None, *, prefetch_factor=None, persistent_workers=False, "
                                       "pin_memory_device=''",
        "torch.utils.data.TensorDataset": "*tensors",
        "torch.utils.data.RandomSampler": "data_source, replacement=False, num_samples=None, generator=None",
        "torch.Generator": "device='cpu'",
        "torch._C.Generator": "device='cpu'",
        "torch.manual_seed": "seed",
        "torch.random.manual_seed": "seed",
        "torch.utils.data.sampler.RandomSampler": "data_source, replacement=False, num_samples=None, generator=None",
        # methods
        "torch.Tensor.cuda": "device=None, non_blocking=False, memory_format=None",
        "torch.Tensor.type_as": "other",
        "torch.Tensor.type": "dtype=None, non_blocking=False, **kwargs",
        # (the cast overload: the device overloads are resolved by the torch model's ``_to_targets``)
        "torch.Tensor.to": "dtype=None, non_blocking=False, copy=False, *args, memory_format=None, **kwargs",
        "torch.Tensor.numpy": "*, force=False",
        "torch.Tensor.backward": "gradient=None, retain_graph=None, create_graph=False, inputs=None",
        "torch.Tensor.requires_grad_": "requires_grad=True",
        "torch.nn.Module.forward": "input, *args, **kwargs",
        # checkpoints (:mod:`.torch_load`)
        "torch.load": "f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args",
        "torch.serialization.load": "f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, "
                                    "**pickle_load_args",
        "torch.hub.load_state_dict_from_url": "url, model_dir=None, map_location=None, progress=True, "
                                              "check_hash=False, file_name=None, weights_only=False",
        "torch.jit.load": "f, map_location=None, _extra_files=None, _restore_shapes=False",
        "torch.jit._serialization.load": "f, map_location=None, _extra_files=None, _restore_shapes=False",
        "safetensors.torch.load_file": "filename, device='cpu'",
        "torch.nn.Sequential.forward": "input",
        "torch.nn.modules.loss._Loss.forward": "input, target, *args, **kwargs",
        "torch.nn.Module.cuda": "device=None",
        "torch.nn.Module.requires_grad_": "requires_grad=True",
        "torch.nn.Module.state_dict": "*args, destination=None, prefix='', keep_vars=False",
        "torch.nn.Module.register_forward_hook": "hook, *, prepend=False, with_kwargs=False, always_call=False",
        "torch.optim.Optimizer.add_param_group": "param_group",
        "torch.distributions.Distribution.log_prob": "value",
        "torch.distributions.Distribution.cdf": "value",
        "torch.distributions.Distribution.icdf": "value",
        # losses with class weights (a buffer on the weights' device)
        "torch.nn.CrossEntropyLoss": "weight=None, size_average=None, ignore_index=-100, reduce=None, "
                                     "reduction='mean', label_smoothing=0.0",
        "torch.nn.NLLLoss": "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
        "torch.nn.BCELoss": "weight=None, size_average=None, reduce=None, reduction='mean'",
        "torch.nn.BCEWithLogitsLoss": "weight=None, size_average=None, reduce=None, reduction='mean', "
                                      "pos_weight=None",
        "torch.nn.MultiLabelSoftMarginLoss": "weight=None, size_average=None, reduce=None, reduction='mean'",
        # families: layers, losses, optimizers, distributions, functions (each handler reads what it models)
        "torch.nn.*": "*args, **kwargs",
        "torch.nn.modules.*": "*args, **kwargs",
        "torch.optim.*": "params, *args, **kwargs",
        "torch.distributions.*": "*args, **kwargs",
        "torch.*": "*args, **kwargs",
        "torch.nn.functional.*": "*args, **kwargs",
        "torch.linalg.*": "*args, **kwargs",
        "torch.special.*": "*args, **kwargs",
    },
    "numpy": {
        # arrays from data (the kind of the data unless ``dtype=`` says otherwise; a positional dtype is not
        # followed)
        "numpy.array": "object, dtype=None, *, copy=True, order='K', subok=False, ndmin=0, like=None",
        "numpy.asarray": "a, dtype=None, order=None, *, device=None, copy=None, like=None",
        "numpy.asanyarray": "a, dtype=None, order=None, *, device=None, copy=None, like=None",
        "numpy.ascontiguousarray": "a, dtype=None, *, like=None",
        "numpy.copy": "a, order='K', subok=False",
        "numpy.zeros_like": "a, dtype=None, order='K', subok=True, shape=None, *, device=None",
        "numpy.ones_like": "a, dtype=None, order='K', subok=True, shape=None, *, device=None",
        "numpy.empty_like": "a, dtype=None, order='K', subok=True, shape=None, *, device=None",
        "numpy.full": "shape, fill_value, dtype=None, order='C', *, device=None, like=None",
        "numpy.full_like": "a, fill_value, dtype=None, order='K', subok=True, shape=None, *, device=None",
        # float arrays by default
        "numpy.zeros": "shape, dtype=float, order='C', *, device=None, like=None",
        "numpy.ones": "shape, dtype=None, order='C', *, device=None, like=None",
        "numpy.empty": "shape, dtype=float, order='C', *, device=None, like=None",
        "numpy.eye": "N, M=None, k=0, dtype=float, order='C', *, device=None, like=None",
        "numpy.identity": "n, dtype=None, *, like=None",
        "numpy.linspace": "start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None",
        "numpy.logspace": "start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0",
        "numpy.arange": "*args, dtype=None, device=None, like=None, **kwargs",
        # joins and reductions: the kind of the input
        "numpy.concatenate": "arrays, axis=0, out=None, *, dtype=None, casting='same_kind'",
        "numpy.stack": "arrays, axis=0, out=None, *, dtype=None, casting='same_kind'",
        "numpy.vstack": "tup, *, dtype=None, casting='same_kind'",
        "numpy.hstack": "tup, *, dtype=None, casting='same_kind'",
        **{f"numpy.{name}": "a, axis=None, *args, **kwargs" for name in (
            "sum", "cumsum", "prod", "cumprod", "max", "min", "mean", "std", "var", "average", "any", "all")},
        **{f"numpy.{name}": "a, *args, **kwargs" for name in ("clip", "round", "transpose", "reshape", "squeeze",
                                                               "flip", "sort", "ravel", "diff")},
        **{f"numpy.ndarray.{name}": "axis=None, *args, **kwargs" for name in (
            "sum", "cumsum", "prod", "cumprod", "mean", "std", "var")},
        **{f"numpy.{name}": "x, /, *args, **kwargs" for name in (
            "abs", "sqrt", "exp", "log", "log1p", "expm1", "tanh", "sin", "cos")},
        # generators and scalars
        "numpy.random.default_rng": "seed=None",
        "numpy.random.Generator": "bit_generator",
        "numpy.random.Generator.permutation": "x, axis=0",
        "numpy.random.*": "*args, dtype=None, **kwargs",
        "numpy.ndarray.astype": "dtype, order='K', casting='unsafe', subok=True, copy=True",
        **{f"numpy.{name}": "value=0, /" for name in ("float16", "float32", "float64", "int8", "int16", "int32",
                                                       "int64", "uint8", "bool_")},
    },
    "argparse": {
        "argparse.ArgumentParser": "prog=None, usage=None, description=None, epilog=None, parents=[], "
                                   "formatter_class=None, prefix_chars='-', fromfile_prefix_chars=None, "
                                   "argument_default=None, conflict_handler='error', add_help=True, "
                                   "allow_abbrev=True, exit_on_error=True",
        "argparse.ArgumentParser.add_argument": "*name_or_flags, action=None, nargs=None, const=None, "
                                                "default=None, type=None, choices=None, required=None, help=None, "
                                                "metavar=None, dest=None, **kwargs",
        "argparse.ArgumentParser.set_defaults": "**kwargs",
        **{f"argparse.ArgumentParser.{name}": "args=None, namespace=None" for name in (
            "parse_args", "parse_known_args", "parse_intermixed_args", "parse_known_intermixed_args")},
        "argparse.Namespace": "**kwargs",
        "types.SimpleNamespace": "**kwargs",
    },
    "copy": {
        "copy.deepcopy": "x, memo=None",
    },
    "records": {
        "collections.namedtuple": "typename, field_names, *, rename=False, defaults=None, module=None",
        "collections.deque": "iterable=None, maxlen=None",
        "random.sample": "population, k, *, counts=None",
        "random.choices": "population, weights=None, *, cum_weights=None, k=1",
        "random.choice": "seq",
        "random.shuffle": "x",
    },
    "progress-bars": {
        **dict.fromkeys(WRAPPERS - {"rich.progress.track"}, "iterable=None, *args, **kwargs"),
        "rich.progress.track": "sequence, *args, **kwargs",
        **dict.fromkeys(AROUND_BUILTINS, "*args, **kwargs"),
    },
    # (their positional arguments and the keywords the model lists are converted with numpy.asarray)
    "array-consumers": {f"{module}.{name}": "*args, **keywords" if module in KEYWORDS_ONLY else "*arrays, **keywords"
                        for module, (names, _keywords) in CONSUMERS.items() for name in names},
    "plots": {
        # (``Figure.subplots`` takes the same parameters after ``self``)
        "matplotlib.pyplot.subplots": "nrows=1, ncols=1, *, sharex=False, sharey=False, squeeze=True, "
                                      "width_ratios=None, height_ratios=None, subplot_kw=None, gridspec_kw=None, "
                                      "**fig_kw",
    },
    "transformers": {
        # the constructor a project subclass calls (``super().__init__(model=model, args=args, ...)``)
        **dict.fromkeys(("transformers.Trainer", "transformers.Seq2SeqTrainer"),
                        "model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, "
                        "processing_class=None, model_init=None, compute_loss_func=None, compute_metrics=None, "
                        "callbacks=None, optimizers=(None, None), optimizer_cls_and_kwargs=None, "
                        "preprocess_logits_for_metrics=None, **kwargs"),
        "transformers.Trainer._prepare_inputs": "inputs",
        # (the device every TrainingArguments the run builds asks for)
        **dict.fromkeys(("transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments"),
                        "output_dir=None, *, use_cpu=False, no_cuda=False, **kwargs"),
    },
    "transformers-models": {
        "transformers.PreTrainedModel.from_pretrained": "pretrained_model_name_or_path, *model_args, config=None, "
                                                        "cache_dir=None, ignore_mismatched_sizes=False, "
                                                        "force_download=False, local_files_only=False, token=None, "
                                                        "revision='main', use_safetensors=None, weights_only=True, "
                                                        "device_map=None, **kwargs",
        "transformers.PreTrainedModel.forward": "input_ids=None, attention_mask=None, token_type_ids=None, "
                                                "position_ids=None, head_mask=None, inputs_embeds=None, labels=None, "
                                                "**kwargs",
        "transformers.GenerationMixin.generate": "inputs=None, generation_config=None, logits_processor=None, "
                                                 "stopping_criteria=None, prefix_allowed_tokens_fn=None, "
                                                 "synced_gpus=None, assistant_model=None, streamer=None, "
                                                 "negative_prompt_ids=None, negative_prompt_attention_mask=None, "
                                                 "custom_generate=None, **kwargs",
        **dict.fromkeys(("transformers.PreTrainedTokenizerBase.__call__",
                         "transformers.PreTrainedTokenizerBase.encode_plus",
                         "transformers.PreTrainedTokenizerBase.batch_encode_plus",
                         "transformers.PreTrainedTokenizerBase.prepare_for_model"),
                        "text=None, text_pair=None, text_target=None, text_pair_target=None, add_special_tokens=True, "
                        "padding=False, truncation=None, max_length=None, stride=0, is_split_into_words=False, "
                        "pad_to_multiple_of=None, padding_side=None, return_tensors=None, return_token_type_ids=None, "
                        "return_attention_mask=None, **kwargs"),
        "transformers.PreTrainedTokenizerBase.encode": "text, text_pair=None, add_special_tokens=True, padding=False, "
                                                       "truncation=None, max_length=None, stride=0, padding_side=None, "
                                                       "return_tensors=None, **kwargs",
        "transformers.PreTrainedTokenizerBase.pad": "encoded_inputs, padding=True, max_length=None, "
                                                    "pad_to_multiple_of=None, padding_side=None, "
                                                    "return_attention_mask=None, return_tensors=None, verbose=True",
        "transformers.PreTrainedTokenizerBase.apply_chat_template": "conversation, tools=None, documents=None, "
                                                                    "chat_template=None, add_generation_prompt=False, "
                                                                    "continue_final_message=False, tokenize=True, "
                                                                    "padding=False, truncation=False, max_length=None, "
                                                                    "return_tensors=None, return_dict=True, **kwargs",
        "transformers.BatchEncoding.to": "device, *, non_blocking=False",
    },
    "accelerate": {
        "accelerate.Accelerator": "device_placement=True, split_batches=False, mixed_precision=None, "
                                  "gradient_accumulation_steps=1, cpu=False, **kwargs",
        "accelerate.PartialState": "cpu=False, **kwargs",
        "accelerate.AcceleratorState": "mixed_precision=None, cpu=False, **kwargs",
        "accelerate.Accelerator.prepare": "*args, device_placement=None",
        "accelerate.Accelerator.prepare_model": "model, device_placement=None, evaluation_mode=False",
        "accelerate.Accelerator.prepare_data_loader": "data_loader, device_placement=None, "
                                                      "slice_fn_for_dispatch=None",
        "accelerate.Accelerator.backward": "loss, **kwargs",
        **{f"accelerate.Accelerator.{name}": "tensor, *args, **kwargs" for name in (
            "gather", "reduce", "pad_across_processes")},
        "accelerate.Accelerator.gather_for_metrics": "input_data, use_gather_object=False",
        "accelerate.Accelerator.unwrap_model": "model, keep_fp32_wrapper=True, keep_torch_compile=True",
    },
    "datasets": {
        "datasets.load_dataset": "path, name=None, data_dir=None, data_files=None, split=None, cache_dir=None, "
                                 "features=None, download_config=None, download_mode=None, verification_mode=None, "
                                 "keep_in_memory=None, save_infos=False, revision=None, token=None, streaming=False, "
                                 "num_proc=None, storage_options=None, **config_kwargs",
        **{f"datasets.Dataset.{name}": "type=None, columns=None, output_all_columns=False, **format_kwargs"
           for name in ("set_format", "with_format")},
    },
}
