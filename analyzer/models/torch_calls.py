"""Which handler of the torch model answers a call of a qualified torch name.

The table is ordered: a name may match several rules (``torch.from_dlpack`` is also a ``torch`` function), and
a handler that answers ``None`` leaves the call to the next rule that matches (``torch.cuda.is_available``
outside a CUDA world: an unknown bool). Rules match an exact name, a family of names in one module
(``torch.<creator>``) or every name under a prefix (``torch.nn.*``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .entry_points import SPAWN_PATHS
from .torch_api import (
    CREATORS,
    FFT_FREQUENCIES,
    FFT_OPS,
    GRAD_MODES,
    KL_DIVERGENCE,
    LEGACY_TENSOR_TYPES,
    LIKE_CREATORS,
    SEQUENCE_OPS,
    UNCHECKED_VIEWS,
)
from .torch_load import LOADERS
from .torch_parallel import DATA_PARALLEL, DISTRIBUTED


@dataclass(frozen=True)
class Rule:
    """``paths``: exact names; ``module`` + ``names``: a family (every name of the module without ``names``);
    ``prefix``: every name under it; ``capitalised``: classes only; ``excluding``: modules left out."""

    handler: str
    paths: frozenset[str] = frozenset()
    module: tuple[str, ...] = ()
    names: frozenset[str] | None = None
    prefix: str = ""
    capitalised: bool = False
    excluding: str = ""

    def matches(self, path: str, module: str, name: str) -> bool:
        if self.paths:
            return path in self.paths
        if self.capitalised and not name[:1].isupper():
            return False
        if self.excluding and self.excluding in module:
            return False
        if self.module:
            return module in self.module and (self.names is None or name in self.names)
        return bool(self.prefix) and (module + ".").startswith(self.prefix)

    def listed(self) -> list[str]:
        """The names it covers, as ``devicelint models`` prints them."""
        if self.paths:
            return sorted(self.paths)
        if self.module and self.names is not None:
            return sorted(f"{m}.{n}" for m in self.module for n in self.names)
        if self.module:
            return [f"{m}.*" for m in self.module]
        return [f"{self.prefix}*"]


def _exact(handler: str, *paths: str) -> Rule:
    return Rule(handler, paths=frozenset(paths))


TORCH_CALLS: tuple[Rule, ...] = (
    Rule("_call_spawn", paths=SPAWN_PATHS),
    Rule("_call_create", module=("torch",), names=CREATORS),
    Rule("_call_fft_frequencies", module=("torch.fft",), names=FFT_FREQUENCIES),
    Rule("_call_fft", module=("torch.fft",), names=FFT_OPS),
    Rule("_call_create_like", module=("torch",), names=LIKE_CREATORS),
    Rule("_call_legacy_type", module=("torch",), names=LEGACY_TENSOR_TYPES),
    Rule("_call_cuda_legacy_type", module=("torch.cuda",), names=LEGACY_TENSOR_TYPES),
    _exact("_call_clip_grad_norm", "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
           "torch.nn.utils.clip_grad_norm", "torch.nn.utils.get_total_norm"),
    _exact("_call_autograd_grad", "torch.autograd.grad", "torch.autograd.backward"),
    _exact("_call_variable", "torch.autograd.Variable", "torch.autograd.variable.Variable"),
    _exact("_call_set_default_tensor_type", "torch.set_default_tensor_type"),
    _exact("_call_from_dlpack", "torch.from_dlpack", "torch.utils.dlpack.from_dlpack"),
    _exact("_call_from_numpy", "torch.from_numpy"),
    _exact("_call_sparse_coo", "torch.sparse_coo_tensor"),
    _exact("_call_tensor_class", "torch.Tensor"),
    _exact("_call_device", "torch.device"),
    Rule("_call_load", paths=LOADERS),
    Rule("_call_data", prefix="torch.utils.data."),
    _exact("_call_generator", "torch.Generator", "torch._C.Generator", "torch.manual_seed", "torch.random.manual_seed"),
    _exact("_call_current_device", "torch.cuda.current_device"),
    _exact("_call_set_device", "torch.cuda.set_device", "torch.cuda.device"),
    _exact("_call_is_available", "torch.cuda.is_available"),
    _exact("_call_device_count", "torch.cuda.device_count"),
    _exact("_call_mps_available", "torch.backends.mps.is_available"),
    _exact("_call_unknown_bool", "torch.cuda.is_available", "torch.backends.mps.is_available"),
    _exact("_call_compiled", "torch.compile", "torch.jit.script"),
    _exact("_call_pack_padded", "torch.nn.utils.rnn.pack_padded_sequence"),
    _exact("_call_pad_sequence", "torch.nn.utils.rnn.pad_sequence"),
    Rule("_call_grad_mode", module=("torch",), names=frozenset(GRAD_MODES)),
    _exact("_call_set_grad_enabled", "torch.set_grad_enabled"),
    _exact("_call_set_default_device", "torch.set_default_device"),
    _exact("_call_from_pretrained", "torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained"),
    Rule("_call_data_parallel", paths=DATA_PARALLEL),
    Rule("_call_distributed_data_parallel", paths=DISTRIBUTED),
    _exact("_call_parameter", "torch.nn.Parameter", "torch.nn.parameter.Parameter"),
    Rule("_call_layer", module=("torch.nn", "torch.nn.modules")),
    Rule("_call_layer", prefix="torch.nn.modules."),
    Rule("_call_kl_divergence", paths=KL_DIVERGENCE),
    Rule("_call_distribution", prefix="torch.distributions.", capitalised=True),
    Rule("_call_optimizer", prefix="torch.optim.", capitalised=True, excluding="lr_scheduler"),
    Rule("_call_unchecked_view", module=("torch",), names=UNCHECKED_VIEWS),
    Rule("_call_sequence_op", module=("torch",), names=SEQUENCE_OPS),
    Rule("_call_function_op", module=("torch", "torch.nn.functional", "torch.linalg", "torch.special",
                                      "torch.sparse")),
)


@lru_cache(maxsize=8192)  # (by the names programs call: bounded, as an editor's server lives on)
def torch_handlers(path: str) -> tuple[str, ...]:
    """The handlers whose rules match ``path``, in the table's order."""
    module, _, name = path.rpartition(".")
    found: list[str] = []
    for rule in TORCH_CALLS:
        if rule.matches(path, module, name) and rule.handler not in found:
            found.append(rule.handler)
    if name == "from_pretrained" and module.rpartition(".")[2] in ("Embedding", "EmbeddingBag") \
            and "_call_from_pretrained" not in found:
        # ``nn.modules.sparse.Embedding.from_pretrained`` (the name as imported): the same classmethod
        found.insert(_position(found, "_call_parameter"), "_call_from_pretrained")
    return tuple(found)


def _position(found: list[str], before: str) -> int:
    order = [rule.handler for rule in TORCH_CALLS]
    mine = order.index(before)
    return next((i for i, handler in enumerate(found) if order.index(handler) >= mine), len(found))


def modelled_names() -> list[str]:
    """Every name and family the table covers (``devicelint models``)."""
    names: list[str] = []
    for rule in TORCH_CALLS:
        for listed in rule.listed():
            if listed not in names:
                names.append(listed)
    return names
