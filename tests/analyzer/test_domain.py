"""Abstract values: the lattice operations, device identity, and reveal text equal to the runtime's."""

from __future__ import annotations

import re

from devicelint.domain import (
    BOOL,
    BOTTOM,
    NONE,
    TOP,
    CaptureId,
    Const,
    DeviceAtom,
    Origin,
    PlainDev,
    TensorAtom,
    V,
    Value,
    const,
    reveal_text,
    same_device,
)

import runtime_shim as rs
from runtime_shim import CheckpointingStrategy, Device, Tensor
from runtime_shim.semantics import AF, CC, CI, PF, PF_STAR, PI, PI_STAR, Role

FLEX = PlainDev("Flex")
DISABLED, BALANCED = CheckpointingStrategy.DISABLED, CheckpointingStrategy.BALANCED


def test_join_is_a_union_with_unknown() -> None:
    a, b = V(const(1)), V(const(2))
    assert a.join(b) == V(const(1), const(2))
    assert a.join(BOTTOM) is a and BOTTOM.join(a) is a
    assert a.join(TOP).top and a.join(TOP).atoms == a.atoms
    assert TOP.is_top and not a.join(TOP).is_top and BOTTOM.is_bottom
    assert hash(a.join(b)) == hash(b.join(a))


def test_constants_keep_their_types_apart() -> None:
    assert const(1) != const(True) and const(1) != const(1.0)
    assert len(V(const(1), const(True), const(1.0)).atoms) == 3
    assert V(const(0)).truthiness() == {False} and NONE.truthiness() == {False}
    assert BOOL.truthiness() == {True, False} and TOP.truthiness() == {None}
    assert V(const(3), const(4)).consts() == [3, 4] or V(const(3), const(4)).consts() == [4, 3]
    assert TOP.consts() is None and V(const(3)).join(TOP).consts() is None


def test_filter_keeps_unknown() -> None:
    value = V(const(1), const(None)).join(TOP)
    kept = value.filter(lambda a: isinstance(a, Const) and a.value is not None)
    assert kept.atoms == {const(1)} and kept.top


def test_device_identity_ignores_autodiff_and_strategy() -> None:
    assert same_device(FLEX, PlainDev("Flex"))
    assert not same_device(PlainDev("Cuda", None, 0), PlainDev("Cuda", None, 1))
    assert same_device(PlainDev("Cuda", None, 0), PlainDev("Cuda", None, None)) is None
    assert not same_device(PlainDev("LibTorch", "Cpu", 0), PlainDev("LibTorch", "Cuda", 0))
    capture = CaptureId("a.py", 1, 0, 1)
    assert same_device(PlainDev("Capture", None, capture), PlainDev("Capture", None, capture))
    assert not same_device(PlainDev("Capture", None, capture), PlainDev("Capture", None, CaptureId("a.py", 2, 0, 1)))


def test_device_reveal_equals_the_runtime() -> None:
    with rs.virtual_devices():
        devices = [Device.flex(), Device.cuda(1), Device.libtorch(), Device.libtorch_cuda(1), Device.rocm(2),
                   Device.flex().autodiff(), Device.cuda(0).autodiff().gradient_checkpointing(),
                   Device.libtorch_cuda(0).autodiff()]
        for d in devices:
            atom = DeviceAtom(PlainDev(d.backend, d._sub, d.index), d.is_autodiff(),
                              d._strategy if d.is_autodiff() else None)
            assert atom.reveal() == rs.reveal_device(d)


def test_tensor_reveal_equals_the_runtime() -> None:
    with rs.virtual_devices():
        ad, bal = Device.ndarray().autodiff(), Device.ndarray().autodiff().gradient_checkpointing()
        tracked = Tensor.ones([2], ad).require_grad()
        cases = [Tensor.ones([2], Device.ndarray()), Tensor.ones([2], ad), tracked, tracked * 2.0,
                 Tensor.ones([2], bal), Tensor.from_ints([1], ad), Tensor.from_bools([True], bal)]
        with rs.profile("burn-2026-08"):  # a plain float carrying a strategy exists there only
            cases.append(Tensor.ones([2], Device.ndarray()).with_gradient_checkpointing_strategy(BALANCED))
        for t in cases:
            atom = TensorAtom(t.kind, PlainDev("NdArray"), t.state, t._strategy, t.role if t.state is AF else None)
            assert atom.reveal() == rs.reveal_device(t)


def test_capture_reveal_matches_any_capture_id() -> None:
    capture = Device.capture()
    runtime = []

    def build(scope):
        x = Tensor.ones([2], capture)
        runtime.append(rs.reveal_device(x))
        runtime.append(rs.reveal_device(x.exp()))
        return scope.complete([x], [x])

    capture.capture_scope(build)
    dev = PlainDev("Capture", None, CaptureId("a.py", 1, 0, 1))
    texts = [TensorAtom("float", dev, CI).reveal(), TensorAtom("float", dev, CC).reveal()]
    assert texts == ["Capture(?) float initialized", "Capture(?) float computed"]
    for pattern, actual in zip(texts, runtime, strict=True):
        assert re.fullmatch(re.escape(pattern).replace(r"\?", r"\d+"), actual)


def test_reveal_text_of_sets() -> None:
    pf = TensorAtom("float", FLEX, PF)
    pf_star = TensorAtom("float", FLEX, PF_STAR, BALANCED)
    af = TensorAtom("float", FLEX, AF, DISABLED, Role.NON_LEAF)
    assert reveal_text(V(pf)) == "Flex float"
    assert reveal_text(V(pf_star, pf)) == "Flex float | Flex float checkpointing: Balanced"
    assert reveal_text(V(af).join(TOP)) == "Autodiff { device: Flex, checkpointing: Disabled } float non-leaf | Unknown"
    assert reveal_text(V(pf, const(None))) == "Flex float"
    pi_star = TensorAtom("int", FLEX, PI_STAR, BALANCED)
    assert pi_star.reported_device() == DeviceAtom(FLEX, True, BALANCED)
    assert TensorAtom("int", FLEX, PI).reported_device() == DeviceAtom(FLEX)


def test_origins_do_not_merge_states() -> None:
    here = Origin("a.py", 1, 0, "created on Flex", created_on="Flex")
    there = Origin("a.py", 2, 0, "created on Flex", created_on="Flex")
    a, b = TensorAtom("float", FLEX, PF, origin=here), TensorAtom("float", FLEX, PF, origin=there)
    assert len(V(a, b).atoms) == 2 and reveal_text(V(a, b)) == "Flex float"
    assert here.brief() == "created at a.py:1" and here.describe() == "created on Flex at a.py:1"
    assert isinstance(V(a), Value)
