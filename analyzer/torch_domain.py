"""Abstract values of PyTorch code: devices, tensors (device, autograd role, 0-dim), library layers.

The atoms mirror what :mod:`runtime_shim.torch_semantics` decides on: a
device's string form, whether a tensor requires grad and is a leaf, whether it
is 0-dim (PyTorch's scalar exemption) and whether it is a module's parameter or
buffer (MV202). Each carries an :class:`~analyzer.domain.Origin` for the
diagnostics' related locations. A device whose index the analysis does not
know (``f"cuda:{rank}"``) is not an atom: it stays unknown.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from .domain import Atom, Origin

CPU_TYPE = "cpu"
#: the device types PyTorch names in strings and ``torch.device(...)`` (``"cuda:1"``, ``"mps"`` ...)
DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "meta", "hpu", "npu", "xla", "privateuseone"})


@dataclass(frozen=True, slots=True)
class TorchDev:
    """A device identity: ``type`` (``cpu``, ``cuda``, ``mps``, ``meta``, ...) and index (``None`` on the CPU)."""

    type: str
    index: int | None = None
    #: a GPU whose index the analysis does not know: the variable or parameter it came from (``local_rank`` of
    #: ``.cuda(local_rank)``), for messages only (one process's GPU whatever it was named)
    index_name: str | None = field(default=None, compare=False)

    def order_key(self) -> tuple:
        """With the name equality leaves out: of two equal tensors, the one it keeps (:attr:`Atom.loose`)."""
        return (self.type, -1 if self.index is None else self.index, self.index_name or "")

    @property
    def text(self) -> str:
        """The device's string, as the analysis compares devices (a GPU of unknown index: ``cuda``)."""
        return self.type if self.index is None else f"{self.type}:{self.index}"

    @property
    def shown(self) -> str:
        """The device as PyTorch prints a tensor's, as far as the analysis knows it: a GPU of unknown index is
        ``cuda:<local_rank>`` (where its index came from) or ``cuda:?``."""
        if self.index is None and self.type == "cuda":
            return f"cuda:<{self.index_name}>" if self.index_name else "cuda:?"
        return self.text


CPU = TorchDev(CPU_TYPE)


@dataclass(frozen=True, slots=True)
class TorchRef(Atom):
    """``torch`` or a name inside it (``torch.nn``, ``torch.nn.Linear``, ``torch.float16`` ...)."""

    path: str

    def names_type(self) -> str | None:
        if self.path in GENERATOR_PATHS:
            return GENERATOR_TYPE
        return self.path if self.path in LIBRARY_TYPES else None

    def names_library_module(self) -> bool:
        return True

    def type_predicate(self) -> str | None:
        return TENSOR_TYPE if self.path == "torch.is_tensor" else None


#: the torch classes an ``isinstance`` test is answered for
TENSOR_TYPE, MODULE_TYPE, DEVICE_TYPE = "torch.Tensor", "torch.nn.Module", "torch.device"
GENERATOR_TYPE = "torch.Generator"
GENERATOR_PATHS = frozenset({GENERATOR_TYPE, "torch._C.Generator"})
LIBRARY_TYPES = frozenset({TENSOR_TYPE, MODULE_TYPE, DEVICE_TYPE, GENERATOR_TYPE})


#: ``torch.autograd.Function`` as a base class, however it is spelled.
AUTOGRAD_FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
#: The context ``MyFunction.apply`` passes to ``forward`` first (what is saved on it is not followed).
AUTOGRAD_CONTEXT = TorchRef("torch.autograd.function.FunctionCtx")


@dataclass(frozen=True, slots=True)
class TorchDeviceAtom(Atom):
    """A ``torch.device``."""

    loose = True
    loose_within = ("dev",)

    dev: TorchDev
    origin: Origin | None = field(default=None, compare=False)  # where from: not part of the state
    tags: frozenset = frozenset()  # the undecided choices it came from (:mod:`analyzer.choices`)
    #: written without an index (``torch.device("cuda")``): its index is ``None`` at run time, so it never
    #: equals a tensor's ``.device``, although it places tensors on ``dev`` (the current device)
    bare: bool = False
    #: a tensor's ``.device``: that tensor's provenance, which a tensor created on it keeps
    #: (``torch.arange(n, device=x.device)`` is where ``x`` is, and from where ``x`` came: :mod:`rules.anchors`)
    tensor: Origin | None = field(default=None, compare=False)

    def revealable(self) -> bool:
        return True

    def equals(self, other: Atom) -> bool | None:
        if not isinstance(other, TorchDeviceAtom):
            return NotImplemented
        from .models.torch_api import devices_equal  # (the torch model's table; imported where it is used)

        return devices_equal((self.dev.type, self.dev.index, self.bare), (other.dev.type, other.dev.index, other.bare))

    def library_type(self) -> str | None:
        return DEVICE_TYPE

    def reveal(self) -> str:
        # (written without an index, it prints without one: ``torch.device('cuda')``)
        return f"torch.device('{self.dev.text if self.bare and self.dev.index is None else self.dev.shown}')"


class GradRole(enum.Enum):
    """A tensor's place in autograd's graph."""

    NO_GRAD = "no grad"
    LEAF = "leaf"  # a leaf that requires grad
    NON_LEAF = "non-leaf"  # an op's result that requires grad

    __hash__ = object.__hash__  # members are singletons; Enum's hash is slow (atoms are hashed often)


NO_GRAD, LEAF, NON_LEAF = GradRole.NO_GRAD, GradRole.LEAF, GradRole.NON_LEAF


@dataclass(frozen=True, slots=True)
class TorchTensorAtom(Atom):
    """A ``torch.Tensor``."""

    loose = True
    loose_within = ("dev", "moved_from")

    dev: TorchDev
    grad: GradRole = NO_GRAD
    zero_dim: bool | None = False  # None: the analysis does not know the rank
    owned: bool = False  # a parameter or buffer of a module
    moved_from: TorchDev | None = None  # a requires-grad leaf moved here from this device (a non-leaf now)
    origin: Origin | None = field(default=None, compare=False)  # where from: not part of the state
    tags: frozenset = frozenset()  # the undecided choices it came from (:mod:`analyzer.choices`)
    #: the number of dimensions, where known: set where a tensor is created with a known shape, kept by moves
    #: only (``with_`` drops it unless told), read by iteration (a row of a 2-D tensor is not 0-dim)
    ndim: int | None = None
    #: where its device came from when that is another tensor's: a result of ops that keep their one tensor
    #: operand's device (``x == c``, ``x * 2 + 1``, ``x.float().view(b, -1)``) names the first tensor of that
    #: chain (None: ``origin`` itself), so a failure inside a helper over a value derived from its argument is
    #: still reported where the argument was passed (:mod:`rules.anchors`)
    source: Origin | None = field(default=None, compare=False)

    @property
    def provenance(self) -> Origin | None:
        """The origin of the tensor whose device this one has: its ``source``, else its own ``origin``."""
        return self.source if self.source is not None else self.origin

    def truthy(self) -> bool | None:
        return None

    def row(self) -> TorchTensorAtom:
        """What iterating it (or unpacking it) gives: a row, on its device, in its graph."""
        ndim = self.ndim - 1 if self.ndim else None
        return self.with_(zero_dim=None if ndim is None else ndim == 0, owned=False, ndim=ndim)

    @property
    def requires_grad(self) -> bool:
        return self.grad != NO_GRAD

    def revealable(self) -> bool:
        return True

    def library_type(self) -> str | None:
        return TENSOR_TYPE

    def reveal(self) -> str:
        parts = [f"{self.dev.shown} tensor"]
        if self.zero_dim:
            parts.append("0-dim")
        if self.grad == LEAF:
            parts.append("requires grad (leaf)")
        elif self.grad == NON_LEAF:
            parts.append("requires grad (non-leaf" + (f", moved from {self.moved_from.shown})"
                                                      if self.moved_from is not None else ")"))
        if self.owned:
            parts.append("module weight")
        return ", ".join(parts)

    def with_(self, **changes: Any) -> TorchTensorAtom:
        changes.setdefault("ndim", None)  # most changes are ops that may change the shape
        if "dev" in changes or "origin" in changes:
            changes.setdefault("source", None)  # a move or a new value: its device is no longer the source's
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class TorchLayerAtom(Atom):
    """An instance of a ``torch.nn`` layer, loss or container (``children``: a container's layers).

    ``dev`` is where its weights are (``None``: layers on several devices, or unknown); a layer
    without weights has ``weights=False`` and follows its input."""

    name: str
    dev: TorchDev | None
    weights: bool
    children: tuple[Atom, ...] = ()  # a container's layers and project modules
    # where it was created: part of the value (unlike a tensor's origin), since a module is an object that moves
    # in place, known by where it was made (two layers built alike stay two values when joined)
    origin: Origin | None = None
    tags: frozenset = frozenset()  # the undecided choices it came from (:mod:`analyzer.choices`)
    #: a keyed container's key of each child (``ModuleDict``) or parameter (``ParameterDict``), in order;
    #: ``None`` for one a loop stored under a key the analysis does not know
    keys: tuple[str | None, ...] = ()

    def is_library_layer(self) -> bool:
        return True

    def parts(self) -> tuple[Atom, ...]:
        return self.children

    def revealable(self) -> bool:
        return True

    def library_type(self) -> str | None:
        return MODULE_TYPE

    def reveal(self) -> str:
        where = f" on {self.dev.shown}" if self.dev is not None and self.weights else ""
        library, _sep, cls = self.name.rpartition(":")  # (``hf:BertModel``: a library's model, by its class)
        return f"{cls}{where}" if library else f"nn.{self.name}{where}"


@dataclass(frozen=True, slots=True)
class TorchDistributionAtom(Atom):
    """A ``torch.distributions`` object: its parameters are on ``dev`` (numbers become tensors there), and
    ``grad``: some parameter requires grad (``rsample`` and ``log_prob`` results are then in the graph).
    ``broadcast_all`` checks no devices: parameters on two devices build a distribution whose sampling and
    densities fail."""

    name: str
    dev: TorchDev
    grad: bool = False
    zero_dim: bool | None = None  # its parameters are 0-dim (``Normal(0.0, 1.0)``: CPU scalars); None: not known
    others: tuple[TorchDev, ...] = ()  # parameters on other devices too: the methods that combine them fail


@dataclass(frozen=True, slots=True)
class TorchOptimizerAtom(Atom):
    """A ``torch.optim`` optimizer. Built from ``model.parameters()`` in this frame, it has the modules whose
    parameters it holds (followed through in-place moves of ``model`` by that name), where those parameters are,
    and where its state was made (``None``: not yet; ``load_state_dict`` and the first ``step()`` make it where
    the parameters are then, and it stays there when the module moves); otherwise no modules (not followed)."""

    origin: object  # the construction site (two optimizers built alike stay two values)
    modules: frozenset  # the module atoms (project instances, layers) its parameters belong to
    access: str  # ``scope:name`` of the module's reference (moves through other names: not followed)
    params: frozenset  # TorchDev: where the parameters are
    state: frozenset | None = None  # TorchDev: where the state is
    made: Origin | None = None  # where the state was made, for the diagnostics

    def reveal(self) -> str:
        return "torch.optim optimizer"


#: The methods of an optimizer the model follows (:meth:`TorchModel.torch_optimizer_method`).
OPTIMIZER_METHODS = frozenset({"step", "load_state_dict", "zero_grad", "add_param_group", "state_dict"})

#: The methods of a distribution the model follows (:meth:`TorchModel.torch_distribution_method`).
DISTRIBUTION_METHODS = frozenset({"sample", "sample_n", "rsample", "entropy", "log_prob", "cdf", "icdf"})
#: ``super().__init__`` of a project subclass of a distribution, bound to the instance
DISTRIBUTION_INIT = "@distribution_init"
#: the attribute a project distribution's instance keeps its library state under
DISTRIBUTION_STATE = "@distribution"


@dataclass(frozen=True, slots=True)
class TorchModeAtom(Atom):
    """A context manager that switches a torch mode: ``torch.no_grad()``, ``torch.device("cuda")`` ..."""

    grad: bool | None = None  # the grad mode inside the block (None: unchanged)
    device: Atom | None = None  # the default device inside the block (a TorchDeviceAtom; None: unchanged)
    cuda: int | None = None  # ``torch.cuda.device(i)``: the current CUDA device inside (-1: not known; None: unchanged)




@dataclass(frozen=True, slots=True)
class TorchGeneratorAtom(Atom):
    """A ``torch.Generator`` on ``dev`` (a sampler draws its permutation with it, on the default device)."""

    loose = True
    loose_within = ("dev",)

    dev: TorchDev
    origin: Origin | None = field(default=None, compare=False)
    tags: frozenset = frozenset()  # the undecided choices its device came from (:mod:`analyzer.choices`)

    def revealable(self) -> bool:
        return True

    def library_type(self) -> str | None:
        return GENERATOR_TYPE

    def reveal(self) -> str:
        return f"{self.dev.type} generator"


@dataclass(frozen=True, slots=True)
class TorchWorkersAtom(Atom):
    """The worker processes of a ``DataLoader`` whose dataset, transforms and ``collate_fn`` run in them:
    ``count`` of them, started by ``start`` (a start method that forks)."""

    loose = True

    count: int
    start: str  # "fork", or "fork (the default start method on Linux)"
    origin: Origin | None = field(default=None, compare=False)  # the DataLoader call

    def reveal(self) -> str:
        return f"{self.count} DataLoader worker processes started by {self.start}"


@dataclass(frozen=True, slots=True)
class TorchSamplerAtom(Atom):
    """A ``RandomSampler``: it draws its permutation on the default device with ``generator`` (``None``: one it
    makes itself, ``torch.Generator()``, on the CPU)."""

    loose = True
    loose_within = ("generator",)

    generator: TorchGeneratorAtom | None
    origin: Origin | None = field(default=None, compare=False)

    def reveal(self) -> str:
        return "RandomSampler"


def derived_from(operands: list[TorchTensorAtom], device: TorchDev) -> Origin | None:
    """Where a result on ``device`` got its device, when the operands that put it there have one provenance (an op
    of one tensor with numbers or CPU scalars, ``pred == c``, ``x * 2 + 1``); None when several tensors do."""
    placing = {atom.provenance for atom in operands if atom.dev == device and not (atom.dev.type == "cpu"
                                                                                  and atom.zero_dim)}
    if not placing:  # every operand is a CPU scalar: the result is where they all are
        placing = {atom.provenance for atom in operands}
    return placing.pop() if len(placing) == 1 else None
