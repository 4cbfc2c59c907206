"""lift vs the runtime, cell by cell: every operation on every pair of concrete states.

For a grid of concrete runtime tensors (every class, role, strategy, several
backends and indices) and devices, each call is run twice: by runtime_shim on
the concrete objects, and by :mod:`analyzer.lift` on their abstract states.
They must agree on whether it fails, with which code and message, and on the
result's state (compared through the reveal text both sides print).
"""

from __future__ import annotations

import itertools

import pytest
from devicelint import lift
from devicelint.domain import NONE, DeviceAtom, GradsAtom, Origin, PlainDev, TensorAtom, V, Value, reveal_text
from devicelint.shim_api import BINARY, MASK_FILL, UNARY, scalar_kind

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, DispatchError, Tensor
from runtime_shim import semantics as S
from runtime_shim.semantics import AF, PROFILES

ORIGIN = Origin("test.py", 1, 0, "test")
NO_SCOPES: frozenset = frozenset()


def device_atom(d: Device) -> DeviceAtom:
    return DeviceAtom(PlainDev(d.backend, d._sub, d.index), d.is_autodiff(), d._strategy if d.is_autodiff() else None)


def tensor_atom(t: Tensor) -> TensorAtom:
    dev = t._dev
    return TensorAtom(t.kind, PlainDev(dev.backend, dev._sub, dev.index), t.state, t._strategy,
                      t.role if t.state is AF else None)


def _devices() -> dict[str, Device]:
    flex, nd, r0, r1 = Device.flex(), Device.ndarray(), Device.rocm(0), Device.rocm(1)
    ad_flex = flex.autodiff()
    return {"flex": flex, "ndarray": nd, "rocm0": r0, "rocm1": r1, "ad-flex": ad_flex,
            "ad-flex-balanced": ad_flex.gradient_checkpointing(), "ad-ndarray": nd.autodiff(),
            "ad-rocm1": r1.autodiff()}


def _tensors() -> dict[str, Tensor]:
    d = _devices()
    ints, bools = [[1, 2], [3, 4]], [[True, False], [False, True]]
    tracked = Tensor.ones([2, 2], d["ad-flex"]).require_grad()
    return {
        "Pf flex": Tensor.ones([2, 2], d["flex"]),
        "Pf ndarray": Tensor.ones([2, 2], d["ndarray"]),
        "Pf rocm0": Tensor.ones([2, 2], d["rocm0"]),
        "Pf rocm1": Tensor.ones([2, 2], d["rocm1"]),
        "Pf* flex balanced": Tensor.ones([2, 2], d["flex"]).with_gradient_checkpointing_strategy(
            CheckpointingStrategy.BALANCED),
        "Pf* flex disabled": Tensor.ones([2, 2], d["flex"]).with_gradient_checkpointing_strategy(
            CheckpointingStrategy.DISABLED),
        "Af flex untracked": Tensor.ones([2, 2], d["ad-flex"]),
        "Af flex tracked": tracked,
        "Af flex non-leaf": tracked * 2.0,
        "Af flex balanced": Tensor.ones([2, 2], d["ad-flex-balanced"]).require_grad(),
        "Af ndarray": Tensor.ones([2, 2], d["ad-ndarray"]).require_grad(),
        "Af rocm1": Tensor.ones([2, 2], d["ad-rocm1"]),
        "Af libtorch": Tensor.ones([2, 2], Device.libtorch().autodiff()).require_grad(),
        "Pi flex": Tensor.from_ints(ints, d["flex"]),
        "Pi ndarray": Tensor.from_ints(ints, d["ndarray"]),
        "Pi* flex": Tensor.from_ints(ints, d["ad-flex"]),
        "Pi* flex balanced": Tensor.from_ints(ints, d["ad-flex-balanced"]),
        "bool flex": Tensor.from_bools(bools, d["flex"]),
        "bool ndarray": Tensor.from_bools(bools, d["ndarray"]),
        "bool* flex": Tensor.from_bools(bools, d["ad-flex"]),
        "bool* flex balanced": Tensor.from_bools(bools, d["ad-flex-balanced"]),
    }


@pytest.fixture(autouse=True, params=sorted(PROFILES))
def profile(request) -> str:
    """Every comparison runs under each profile: the runtime and the lift read the same cells."""
    with rs.profile(request.param):
        yield request.param


@pytest.fixture
def grid():  # per test: a backward pass consumes the graph it walks (a tensor's second backward fails)
    # built under 2c06be35's semantics, where a plain tensor can carry a strategy (Pf*): every class is a
    # key of the tables in every profile, whether or not that profile's Burn can make it
    with rs.virtual_devices(), rs.profile("burn-2026-08"):
        tensors, devices = _tensors(), _devices()
    with rs.virtual_devices():
        yield tensors, devices


def run_runtime(call):
    """(code or None, reveal of the result) — ("TypeError", None) for a non-dispatch failure."""
    try:
        result = call()
    except DispatchError as error:
        return error.code, str(error)
    except TypeError:
        return "TypeError", None
    if isinstance(result, (Tensor, Device)):
        return None, rs.reveal_device(result)
    return None, repr(result)


def run_lifted(lifted: lift.Lifted):
    assert not lifted.unknown
    if not lifted.possibilities:
        return "TypeError", None
    assert len(lifted.possibilities) == 1
    p = lifted.possibilities[0]
    if p.failed:
        return p.code, p.message
    atoms = lifted.results.atoms
    if len(atoms) == 1 and isinstance(next(iter(atoms)), (TensorAtom, DeviceAtom)):
        return None, reveal_text(lifted.results)
    return None, None


def agree(runtime, lifted, what: str, compare_values: bool = True) -> None:
    code, text = runtime
    lcode, ltext = lifted
    assert code == lcode, f"{what}: runtime {code} ({text}) vs lift {lcode} ({ltext})"
    if code is not None and code != "TypeError":
        assert text == ltext, f"{what}: messages differ:\n runtime {text!r}\n lift    {ltext!r}"
    elif code is None and compare_values and ltext is not None:
        assert text == ltext, f"{what}: result states differ: runtime {text!r} vs lift {ltext!r}"


def test_move_matches_runtime(grid, profile: str) -> None:
    tensors, devices = grid
    with rs.virtual_devices():
        for (tname, t), (dname, d) in itertools.product(tensors.items(), devices.items()):
            lifted = lift.move(profile, V(tensor_atom(t)), V(device_atom(d)), NO_SCOPES, ORIGIN)
            agree(run_runtime(lambda t=t, d=d: t.to_device(d)), run_lifted(lifted), f"{tname} -> {dname}")


@pytest.mark.parametrize("op", [*BINARY, "mask_fill"])
def test_binary_ops_match_runtime(grid, op: str) -> None:
    tensors, _devices = grid
    spec = BINARY.get(op, MASK_FILL)
    with rs.virtual_devices():
        for (lname, left), (rname, right) in itertools.product(tensors.items(), tensors.items()):
            if op == "mask_fill":
                def call(left=left, right=right):
                    return left.mask_fill(right, 0.5)
            else:
                def call(left=left, right=right, op=op):
                    return getattr(left, op)(right)
            lifted = lift.binary(rs.current_profile(), spec, V(tensor_atom(left)), V(tensor_atom(right)), NO_SCOPES,
                                 ORIGIN, fill_kinds=["float"])
            agree(run_runtime(call), run_lifted(lifted), f"{lname} {op} {rname}")


_UNARY_CALLS = {
    "powf_scalar": lambda t: t.powf_scalar(2.0), "sum_dim": lambda t: t.sum_dim(0),
    "reshape": lambda t: t.reshape([4]), "swap_dims": lambda t: t.swap_dims(0, 1),
    "argmax": lambda t: t.argmax(0), "one_hot": lambda t: t.one_hot(5),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_match_runtime(grid, op: str) -> None:
    tensors, _devices = grid
    call = _UNARY_CALLS.get(op, lambda t, op=op: getattr(t, op)())
    with rs.virtual_devices():
        for name, t in tensors.items():
            lifted = lift.unary(rs.current_profile(), UNARY[op], V(tensor_atom(t)), NO_SCOPES, ORIGIN)
            agree(run_runtime(lambda t=t: call(t)), run_lifted(lifted), f"{op}({name})")


def test_scalar_ops_match_runtime(grid) -> None:
    tensors, _devices = grid
    with rs.virtual_devices():
        for name, t in tensors.items():
            for (op, spec), scalar in itertools.product(BINARY.items(), (2, 2.5, True)):
                if not spec.scalar:
                    continue
                lifted = lift.scalar_op(rs.current_profile(), spec, V(tensor_atom(t)), [scalar_kind(scalar)],
                                        NO_SCOPES, ORIGIN)
                agree(run_runtime(lambda t=t, op=op, s=scalar: getattr(t, op)(s)), run_lifted(lifted),
                      f"{name}.{op}({scalar!r})")
                if op in ("add", "sub", "mul", "div"):
                    method = f"__r{op.replace('div', 'truediv')}__"
                    reflected = run_runtime(lambda t=t, m=method, s=scalar: getattr(t, m)(s))
                    agree(reflected, run_lifted(lifted), f"{scalar!r} {op} {name}")


_API_CALLS = {
    "inner": lambda t: t.inner(), "no_grad": lambda t: t.no_grad(), "detach": lambda t: t.detach(),
    "require_grad": lambda t: t.require_grad(), "unrequire_grad": lambda t: t.set_require_grad(False),
    "from_inner": lambda t: Tensor.from_inner(t), "backward": lambda t: t.sum().backward() if t.state is AF
    else t.backward(),
}


@pytest.mark.parametrize("call", sorted(_API_CALLS))
def test_autodiff_api_matches_runtime(grid, call: str) -> None:
    tensors, _devices = grid
    with rs.virtual_devices():
        for name, t in tensors.items():
            lifted = lift.autodiff(rs.current_profile(), call, V(tensor_atom(t)), ORIGIN)
            runtime = run_runtime(lambda t=t: _API_CALLS[call](t))
            agree(runtime, run_lifted(lifted), f"{name}.{call}()", compare_values=call != "backward")
            if call == "backward" and runtime[0] is None:
                assert lifted.results == V(GradsAtom(lifted.results.atoms and next(iter(lifted.results.atoms)).origin))


def test_later_api_matches_runtime(grid, profile: str) -> None:
    """without_autodiff runs no_grad's cells and the queries answer as the runtime does, in the profiles
    whose Burn has them; in the others the runtime has no such method."""
    tensors, _devices = grid
    with rs.virtual_devices():
        for name, t in tensors.items():
            for method, call in S.RENAMED_TENSOR_METHODS.items():
                if not S.has_tensor_method(profile, method):
                    with pytest.raises(AttributeError):
                        getattr(t, method)()
                    continue
                lifted = lift.autodiff(profile, call, V(tensor_atom(t)), ORIGIN, method=method)
                agree(run_runtime(lambda t=t, m=method: getattr(t, m)()), run_lifted(lifted), f"{name}.{method}()")
            for method, call in S.ENABLING_TENSOR_METHODS.items():
                if not S.has_tensor_method(profile, method):
                    with pytest.raises(AttributeError):
                        getattr(t, method)()
                    continue
                lifted = lift.enable_autodiff(profile, call, V(tensor_atom(t)), ORIGIN, method)
                agree(run_runtime(lambda t=t, m=method: getattr(t, m)()), run_lifted(lifted), f"{name}.{method}()")
            for query in S.TENSOR_QUERIES:
                if S.has_tensor_method(profile, query):
                    atom = tensor_atom(t)
                    assert getattr(t, query)() == S.query_result(query, atom.cls, atom.role), f"{name}.{query}()"


def test_with_strategy_matches_runtime(grid) -> None:
    tensors, _devices = grid
    with rs.virtual_devices():
        for name, t in tensors.items():
            for strategy in CheckpointingStrategy:
                lifted = lift.autodiff(rs.current_profile(), "with_strategy", V(tensor_atom(t)), ORIGIN,
                                       Value([__import__("devicelint.domain").domain.const(strategy)]))
                runtime = run_runtime(lambda t=t, s=strategy: t.with_gradient_checkpointing_strategy(s))
                agree(runtime, run_lifted(lifted), f"{name}.with_gradient_checkpointing_strategy({strategy})")


def test_gradients_match_runtime(grid) -> None:
    """grad() of a tracked leaf is Pf* on the inner backend; of an untracked leaf always None."""
    _tensors, devices = grid
    with rs.virtual_devices():
        for dname in ("ad-flex", "ad-flex-balanced", "ad-ndarray"):
            tracked = Tensor.ones([2], devices[dname]).require_grad()
            untracked = Tensor.ones([2], devices[dname])
            grads = (tracked * untracked).sum().backward()
            for t in (tracked, untracked):
                lifted = lift.autodiff(rs.current_profile(), "grad", V(tensor_atom(t)), ORIGIN)
                runtime = t.grad(grads)
                if runtime is None:
                    assert lifted.results == NONE
                else:
                    texts = {a.reveal() for a in lifted.results.atoms if isinstance(a, TensorAtom)}
                    assert texts == {rs.reveal_device(runtime)}


def test_grad_replace_matches_runtime(grid) -> None:
    tensors, _devices = grid
    with rs.virtual_devices():
        for (tname, t), (gname, g) in itertools.product(tensors.items(), tensors.items()):
            if g.kind != "float":
                continue
            grads = rs.Gradients({})
            lifted = lift.grad_replace(rs.current_profile(), V(tensor_atom(t)), V(tensor_atom(g)), ORIGIN)
            code = run_runtime(lambda t=t, g=g, grads=grads: t.grad_replace(grads, g))[0]
            lifted_codes = {p.code for p in lifted.possibilities}
            assert lifted_codes == {code}, f"{tname}.grad_replace(_, {gname}): runtime {code}, lift {lifted_codes}"


@pytest.mark.parametrize("call", ["autodiff", "gradient_checkpointing", "gradient_checkpointing_strategy"])
def test_device_calls_match_runtime(grid, call: str) -> None:
    _tensors, devices = grid
    with rs.virtual_devices():
        for name, d in devices.items():
            lifted = lift.device_call(rs.current_profile(), call, V(device_atom(d)), ORIGIN)
            runtime = run_runtime(lambda d=d: getattr(d, call)())
            lifted_out = run_lifted(lifted)
            if call == "gradient_checkpointing_strategy" and runtime[0] is None:
                consts = lifted.results.consts()
                assert consts == [d.gradient_checkpointing_strategy()]
                continue
            agree(runtime, lifted_out, f"{name}.{call}()")


@pytest.mark.parametrize("kind", ["float", "int", "bool"])
def test_creation_matches_runtime(grid, kind: str) -> None:
    _tensors, devices = grid
    make = {"float": lambda d: Tensor.ones([2], d), "int": lambda d: Tensor.from_ints([1, 2], d),
            "bool": lambda d: Tensor.from_bools([True, False], d)}[kind]
    with rs.virtual_devices():
        for name, d in devices.items():
            lifted = lift.create(rs.current_profile(), [kind], V(device_atom(d)), NO_SCOPES, ORIGIN)
            agree(run_runtime(lambda d=d: make(d)), run_lifted(lifted), f"{kind} on {name}")


def test_mask_where_matches_runtime(grid) -> None:
    tensors, _devices = grid
    masks = {name: t for name, t in tensors.items() if t.kind == "bool"}
    with rs.virtual_devices():
        for (fname, first), (mname, mask), (vname, value) in itertools.product(
                tensors.items(), masks.items(), tensors.items()):
            lifted = lift.multi(rs.current_profile(), "input", V(tensor_atom(first)),
                                [("mask", V(tensor_atom(mask))), ("value", V(tensor_atom(value)))], NO_SCOPES,
                                ORIGIN, "mask_where")
            agree(run_runtime(lambda f=first, m=mask, v=value: f.mask_where(m, v)), run_lifted(lifted),
                  f"{fname}.mask_where({mname}, {vname})")


def test_cat_matches_runtime(grid) -> None:
    tensors, _devices = grid
    with rs.virtual_devices():
        for (aname, a), (bname, b) in itertools.product(tensors.items(), tensors.items()):
            lifted = lift.multi(rs.current_profile(), "cat", V(tensor_atom(a)), [("tensors[1]", V(tensor_atom(b)))],
                                NO_SCOPES, ORIGIN, "cat")
            runtime = run_runtime(lambda a=a, b=b: Tensor.cat([a, b], 0))
            agree(runtime, run_lifted(lifted), f"cat([{aname}, {bname}])")


def test_sets_combine_possibilities() -> None:
    """Over a set of states, each combination is looked up; results join; unknown stays unknown."""
    flex = PlainDev("Flex")
    af = TensorAtom("float", flex, AF, CheckpointingStrategy.DISABLED, rs.semantics.Role.TRACKED)
    pf = TensorAtom("float", flex, rs.semantics.PF)
    plain, ad = DeviceAtom(PlainDev("NdArray")), DeviceAtom(PlainDev("Flex"), True, CheckpointingStrategy.DISABLED)
    lifted = lift.move("burn-2026-08", V(af, pf), V(plain, ad), NO_SCOPES, ORIGIN)
    outcomes = sorted((p.operands[0][1].cls.value, p.operands[1][1].ad, p.code, p.row) for p in lifted.possibilities)
    assert outcomes == [("Af", False, "MV102", "move.6"), ("Af", True, None, "move.4"),
                        ("Pf", False, None, "move.2"), ("Pf", True, None, "move.1")]
    assert [p.redirected_from for p in lifted.possibilities if p.row == "move.1"] == ["move.3"]
    assert not lifted.unknown and not lifted.always_fails
    unknown = lift.move("burn-2026-08", V(af).join(Value((), True)), V(plain), NO_SCOPES, ORIGIN)
    assert unknown.unknown and unknown.results.top
    failing = lift.move("burn-2026-08", V(af), V(plain), NO_SCOPES, ORIGIN)
    assert failing.always_fails and failing.results.is_bottom
