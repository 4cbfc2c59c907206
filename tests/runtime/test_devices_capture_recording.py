"""Devices (identity, repr, default, availability), creation cells, capture scopes, recording."""

from __future__ import annotations

import inspect
import json
import linecache
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _states import (
    BACKEND_NAME,
    BALANCED,
    DEVICE_TEXT,
    DISABLED,
    ERROR_CLASS,
    MSG,
    ad,
    assert_bits,
    capture_text,
    device,
    expected_reveal,
    in_scope,
)
from conftest import DEVICES, HAS_TORCH, real_cuda_count

import runtime_shim as rs
from runtime_shim import CaptureError, Device, Tensor, reveal_device
from runtime_shim.profiles import DEFAULT_PROFILE
from runtime_shim.semantics import AF, CI, CI_INT, PF, PI, PI_STAR, Fail, Role, cell, keys_of

REPO_ROOT = Path(__file__).resolve().parents[2]

# --- identity, hash, repr --------------------------------------------------------------------


def test_equality_ignores_autodiff_and_strategy() -> None:
    flex = device("flex")
    assert flex == flex.autodiff() == flex.autodiff().gradient_checkpointing()
    assert flex.autodiff() == Device.flex()
    assert hash(flex) == hash(flex.autodiff()) == hash(flex.autodiff().gradient_checkpointing())
    assert {flex: "x"}[flex.autodiff().gradient_checkpointing()] == "x"
    assert len({flex, flex.autodiff(), Device.flex().autodiff().gradient_checkpointing()}) == 1


@pytest.mark.parametrize(("a", "b"), [("cuda0", "cuda1"), ("flex", "ndarray"), ("cpu", "libtorch"),
                                      ("cuda0", "libtorch_cuda0"), ("libtorch", "libtorch_cuda0"),
                                      ("wgpu", "flex"), ("rocm", "cuda0")], ids="!=".join)
def test_different_variants_or_indices_are_unequal(a: str, b: str) -> None:
    da, db = device(a), device(b)
    assert da != db and db != da
    assert da.autodiff() != db and da != db.autodiff().gradient_checkpointing()
    assert da == device(a) and hash(da) == hash(device(a))


def test_captures_are_never_equal() -> None:
    c1, c2 = Device.capture(), Device.capture()
    assert c1 != c2
    assert c1 == c1 and c1 == c1.autodiff()
    assert c1.index != c2.index
    assert repr(c1) == f"Capture({c1.index})"
    assert c1.backend == "Capture"
    assert Device.flex() != "Flex" and Device.flex() is not None


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_repr_backend_and_index(name: str) -> None:
    d = device(name)
    assert repr(d) == DEVICE_TEXT[name]
    assert d.backend == BACKEND_NAME[name]
    assert d.index == (1 if name == "cuda1" else 0)
    assert repr(d.autodiff()) == f"Autodiff {{ device: {DEVICE_TEXT[name]}, checkpointing: Disabled }}"
    assert repr(d.autodiff().gradient_checkpointing()) == (
        f"Autodiff {{ device: {DEVICE_TEXT[name]}, checkpointing: Balanced }}")
    assert reveal_device(d.autodiff()) == repr(d.autodiff())
    assert d.autodiff().backend == d.backend


def test_more_reprs() -> None:
    with rs.virtual_devices():
        assert repr(Device.cuda(3)) == "Cuda(3)"
        assert repr(Device.rocm(2)) == "Rocm(2)"
        assert [repr(f()) for f in (Device.vulkan, Device.metal, Device.webgpu)] == ["Vulkan", "Metal", "WebGpu"]
        assert repr(Device.libtorch_cuda(1)) == "LibTorch(Cuda(1))"
    assert repr(rs.CheckpointingStrategy.BALANCED) == "CheckpointingStrategy.BALANCED"
    assert str(BALANCED) == "Balanced" and str(DISABLED) == "Disabled"


# --- Device.default and BURN_DEVICE ----------------------------------------------------------


@pytest.mark.parametrize(("value", "name"), [("flex", "flex"), ("ndarray", "ndarray"), ("cpu", "cpu"),
                                             ("tch", "libtorch"), ("cuda", "cuda0"), ("wgpu", "wgpu"),
                                             ("FLEX", "flex")])
def test_default_honours_burn_device(monkeypatch: pytest.MonkeyPatch, value: str, name: str) -> None:
    device(name)  # skip where the named device is not available
    monkeypatch.setenv("BURN_DEVICE", value)
    assert repr(Device.default()) == DEVICE_TEXT[name]
    assert reveal_device(Tensor.zeros((2,))) == f"{DEVICE_TEXT[name]} float"


def test_unknown_burn_device_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """burn-dispatch src/device.rs:355 (2c06be35): `_ => panic!("Unknown BURN_DEVICE override: '{}'.")`,
    with the value as it was set (the match lower-cases a copy)."""
    for value in ("tpu", "TPU", ""):  # set but empty is `Ok("")` in Rust: unknown too
        monkeypatch.setenv("BURN_DEVICE", value)
        with pytest.raises(rs.UnknownDevice) as info:
            Device.default()
        assert str(info.value) == f"Unknown BURN_DEVICE override: '{value}'."
        assert isinstance(info.value, rs.DispatchError) and info.value.code == "MV112"
        with pytest.raises(ValueError):  # still a ValueError, as before
            Tensor.ones((1,))


def test_default_is_flex_in_burns_default_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Burn's priority list (burn-dispatch src/device.rs:358-394) ranges over the enabled backends, and
    the default features enable Flex only (burn-dispatch Cargo.toml `flex = [] # default`), so
    `Device::default()` is Flex wherever it runs, whatever the machine has."""
    monkeypatch.delenv("BURN_DEVICE", raising=False)
    for virtual in (True, False):
        with rs.virtual_devices(virtual):
            assert repr(Device.default()) == "Flex"
            assert reveal_device(Tensor.zeros((2,))) == "Flex float"
            mixed = Tensor.ones((2,)) + Tensor.ones((2,), Device.flex())  # one device: no MV105
            assert mixed.to_list() == [2.0, 2.0]


# --- availability: declared backends ----------------------------------------------------------

DECLARED = {"wgpu": Device.wgpu, "vulkan": Device.vulkan, "metal": Device.metal, "webgpu": Device.webgpu,
            "rocm": lambda: Device.rocm(0), "rocm1": lambda: Device.rocm(1), "libtorch_mps": Device.libtorch_mps,
            "libtorch_vulkan": Device.libtorch_vulkan}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_declared_backends_are_unavailable_in_real_mode(name: str) -> None:
    with rs.virtual_devices(False), pytest.raises(rs.BackendUnavailable) as info:
        DECLARED[name]()
    error = info.value
    assert error.code == "MV112"
    assert isinstance(error, rs.DispatchError) and isinstance(error, RuntimeError)
    assert "is not available on this machine" in str(error)


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_declared_backends_work_in_virtual_mode(name: str) -> None:
    with rs.virtual_devices():
        d = DECLARED[name]()
        x = Tensor.from_floats([1.0, 2.0], d.autodiff()).require_grad()
        grads = (x * x).sum().backward()
        assert_bits(x.grad(grads), np.float32([2.0, 4.0]))
        assert reveal_device(x) == f"Autodiff {{ device: {d!r}, checkpointing: Disabled }} float tracked"


def test_a_virtual_device_cannot_execute_in_real_mode() -> None:
    with rs.virtual_devices():
        d = Device.wgpu()
    with rs.virtual_devices(False), pytest.raises(rs.BackendUnavailable) as info:
        Tensor.from_floats([1.0], d)
    assert info.value.code == "MV112"


def test_cuda_beyond_the_machine_is_unavailable_in_real_mode() -> None:
    if not HAS_TORCH:
        pytest.skip("needs torch")
    with rs.virtual_devices(False):
        with pytest.raises(rs.BackendUnavailable):
            Device.cuda(real_cuda_count())
        with pytest.raises(rs.BackendUnavailable):
            Device.libtorch_cuda(real_cuda_count())


def test_modes_and_profiles() -> None:
    with rs.virtual_devices(False):
        assert rs.mode() == "real" and not rs.is_virtual()
        with rs.virtual_devices():
            assert rs.mode() == "virtual"
    with rs.profile("burn-0.21"):
        assert rs.current_profile() == "burn-0.21"
    with pytest.raises(ValueError):
        rs.set_profile("burn-1.0")
    assert {"burn-2026-08", "burn-0.21", "burn-d16f7ba", "burn-next"} <= set(rs.PROFILES)


# --- creation (section 4) ---------------------------------------------------------------------

FLOAT_CREATORS = {
    "from_floats": (lambda d: Tensor.from_floats([[1.0, 2.5]], d), np.float32([[1.0, 2.5]])),
    "from_data": (lambda d: Tensor.from_data(np.float32([[3.0, -1.0]]), d), np.float32([[3.0, -1.0]])),
    "zeros": (lambda d: Tensor.zeros((1, 2), d), np.zeros((1, 2), np.float32)),
    "ones": (lambda d: Tensor.ones((1, 2), d), np.ones((1, 2), np.float32)),
    "full": (lambda d: Tensor.full((1, 2), 0.5, d), np.full((1, 2), 0.5, np.float32)),
    "random": (lambda d: Tensor.random((1, 2), d), None),
    "empty": (lambda d: Tensor.empty((1, 2), d), None),
}
INT_CREATORS = {
    "from_ints": (lambda d: Tensor.from_ints([[1, 2]], d), np.int64([[1, 2]]), "int"),
    "from_bools": (lambda d: Tensor.from_bools([[True, False]], d), np.array([[True, False]]), "bool"),
    "full(int)": (lambda d: Tensor.full((1, 2), 7, d), np.full((1, 2), 7, np.int64), "int"),
    "full(bool)": (lambda d: Tensor.full((1, 2), True, d), np.ones((1, 2), bool), "bool"),
    "arange": (lambda d: Tensor.arange(2, 4, d), np.int64([2, 3]), "int"),
    "empty_bool": (lambda d: Tensor.empty_bool((1, 2), d), None, "bool"),
}


def _creation_cases() -> list:
    cases = []
    for key in keys_of("create"):
        if key["scope"] and key["device"] in ("plain", "autodiff"):
            continue  # scopes exist only on capture devices; the table ignores scope there
        creators = FLOAT_CREATORS if key["dtype"] == "float" else INT_CREATORS
        for name in creators:
            where = f"{key['device']}{'+scope' if key['scope'] else ''}"
            cases.append(pytest.param(key, name, id=f"{name}@{where}"))
    return cases


@pytest.mark.parametrize(("key", "creator"), _creation_cases())
def test_creation_cell(key: dict, creator: str) -> None:
    if key["dtype"] == "float":
        make, values = FLOAT_CREATORS[creator]
        kind = "float"
    else:
        make, values, kind = INT_CREATORS[creator]
    _row, outcome = cell("create", **key)
    capture = key["device"] in ("capture", "autodiff-capture")
    plain = Device.capture() if capture else device("cpu")
    target = ad(plain, BALANCED) if key["device"].startswith("autodiff") else plain
    plain_text = capture_text(plain) if capture else "Cpu"

    def run() -> None:
        if isinstance(outcome, Fail):
            with pytest.raises(ERROR_CLASS[outcome.code]) as info:
                make(target)
            assert str(info.value) == {"MV104": MSG["capture_no_scope"], "MV102": MSG["capture_autodiff"]}[
                outcome.code]
            return
        t = make(target)
        strategy = BALANCED if outcome.strategy == "target" else None
        assert reveal_device(t) == expected_reveal(outcome.result, kind, plain_text, strategy, outcome.role)
        assert outcome.result in {"float": (PF, AF, CI), "int": (PI, PI_STAR, CI_INT)}["float" if kind == "float"
                                                                                       else "int"]
        assert t.kind == kind
        if outcome.result is AF:
            assert not t.is_require_grad()  # an untracked leaf
        if values is not None:
            assert_bits(t, values)

    if key["scope"]:
        in_scope(plain, run)
    else:
        run()


def test_creation_doc_examples() -> None:
    a = Tensor.from_floats([1.0], device("flex").autodiff())
    assert reveal_device(a) == "Autodiff { device: Flex, checkpointing: Disabled } float untracked"
    assert a.role is Role.UNTRACKED and a.state is AF
    i = Tensor.arange(0, 3, device("flex").autodiff().gradient_checkpointing())
    assert reveal_device(i) == "Autodiff { device: Flex, checkpointing: Balanced } int"
    assert i.device() == device("flex") and i.device().is_autodiff()
    f = Tensor.from_floats([1.0], device("flex"))
    assert not f.device().is_autodiff()
    assert Tensor.from_data(np.float64([1.0]), device("flex")).to_numpy().dtype == np.float64


# --- capture scopes ---------------------------------------------------------------------------


def test_capture_scope_errors() -> None:
    assert device("flex").capture_scope(lambda s: None) is CaptureError.INVALID_DEVICE
    assert Device.capture().autodiff().capture_scope(lambda s: None) is CaptureError.INVALID_DEVICE
    cap = Device.capture()
    seen = []

    def outer(scope: rs.Scope) -> rs.Graph:
        seen.append(cap.capture_scope(lambda s: None))
        seen.append(Device.capture().capture_scope(lambda s: s.complete([], [])))  # another device: fine
        return scope.complete([], [])

    graph = cap.capture_scope(outer)
    assert isinstance(graph, rs.Graph)
    assert seen[0] is CaptureError.ALREADY_ACTIVE
    assert isinstance(seen[1], rs.Graph)


def test_capture_scope_returns_the_graph() -> None:
    cap = Device.capture()

    def body(scope: rs.Scope) -> rs.Graph:
        x = Tensor.from_floats([[1.0, 2.0]], cap)
        i = Tensor.from_ints([[3, 4]], cap)
        y = (x * 2.0 + x).sum_dim(1)
        k = i.int()
        assert reveal_device(x) == f"{capture_text(cap)} float initialized"
        assert reveal_device(y) == f"{capture_text(cap)} float computed"
        assert reveal_device(k) == f"{capture_text(cap)} int computed"
        assert y.shape == (1, 1)
        return scope.complete([x, i], [y, k])

    graph = cap.capture_scope(body)
    assert isinstance(graph, rs.Graph)
    assert graph.device == cap
    # burn-capture src/capture.rs: `CapturedGraph::values` holds initialized data only (:612 asserts two
    # values for two from_data and an add), and each from_data records an `Init` op (:696)
    assert [v.kind for v in graph.values] == ["initializer", "initializer"]
    x_value, i_value = graph.values
    assert x_value.shape == (1, 2) and x_value.dtype == "float32"
    assert_bits(Tensor.from_data(x_value.value, device("flex")), np.float32([[1.0, 2.0]]))
    names = [op.name for op in graph.operations]
    assert names[:2] == ["Init", "Init"] and len(names) == 6
    assert graph.operations[0].inputs == () and graph.operations[0].output == x_value.id
    assert graph.operations[1].output == i_value.id
    mul, add = graph.operations[2], graph.operations[3]
    assert mul.inputs == (x_value.id,)  # x * 2.0
    assert add.inputs == (mul.output, x_value.id)  # (x * 2.0) + x
    outputs = {op.output for op in graph.operations}
    assert graph.inputs == (x_value.id, i_value.id)
    assert set(graph.outputs) <= outputs and len(graph.outputs) == 2


def test_moving_onto_a_capture_device_records_an_init() -> None:
    """A host copy onto a capture device is `B2::float_from_data` there (burn-dispatch macros.rs capture arm)."""
    cap = Device.capture()

    def body(scope: rs.Scope) -> rs.Graph:
        x = Tensor.from_floats([1.0, 2.0], device("flex")).to_device(cap)
        y = x * 3.0
        return scope.complete([x], [y])

    graph = cap.capture_scope(body)
    assert [op.name for op in graph.operations][0] == "Init"
    assert [v.kind for v in graph.values] == ["initializer"]


def test_scope_closes_when_the_function_raises() -> None:
    cap = Device.capture()

    def body(scope: rs.Scope) -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        cap.capture_scope(body)
    assert isinstance(cap.capture_scope(lambda s: s.complete([], [])), rs.Graph)
    with pytest.raises(rs.CaptureOutsideScope):
        Tensor.zeros((1,), cap)


@pytest.mark.parametrize("use", ["add", "exp", "int", "cat", "mask_fill", "mask_where", "greater"])
def test_capture_tensors_used_after_their_scope_fail(use: str) -> None:
    cap = Device.capture()
    kept = {}

    def body(scope: rs.Scope) -> rs.Graph:
        kept["x"] = Tensor.from_floats([1.0, 2.0], cap)
        kept["m"] = Tensor.from_bools([True, False], cap)
        kept["y"] = kept["x"].exp()
        return scope.complete([kept["x"]], [kept["y"]])

    cap.capture_scope(body)
    x, m, y = kept["x"], kept["m"], kept["y"]
    call = {"add": lambda: x + y, "exp": lambda: y.exp(), "int": lambda: x.int(), "cat": lambda: Tensor.cat([x, y], 0),
            "mask_fill": lambda: x.mask_fill(m, 0.0), "mask_where": lambda: x.mask_where(m, y),
            "greater": lambda: x.greater(0.5)}[use]
    with pytest.raises(rs.CaptureOutsideScope) as info:
        call()
    assert info.value.code == "MV104"
    # burn-capture src/capture.rs:427 (`assert_open` of the completed session)
    assert str(info.value) == "capture scope is already complete"
    # a new scope on the same device does not revive the old scope's tensors
    # (escaped_tensors_cannot_record_after_their_scope_completes)
    with pytest.raises(rs.CaptureOutsideScope, match="capture scope is already complete"):
        in_scope(cap, call)
    _row, outcome = cell("capture_use", scope=False)
    assert outcome.code == "MV104"


# --- recording ----------------------------------------------------------------------------------


def _span(line: int, text: str) -> dict:
    """The span of ``text`` on ``line`` of this file, as CPython's code positions give it."""
    source = linecache.getline(__file__, line)
    col = source.index(text)
    assert source.count(text) == 1
    # (called from pytest: no user's call led here, ``callers`` is empty)
    return {"file": __file__, "line": line, "col": col, "end_line": line, "end_col": col + len(text), "callers": []}


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_recording_writes_one_line_per_checked_call(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    x = Tensor.from_floats([1.0, 2.0], device("flex"))
    target = device("ndarray")
    other_ad = device("cpu").autodiff()
    a = Tensor.from_floats([1.0], device("flex").autodiff())
    with rs.recording(path) as written:
        assert written == os.fspath(path)
        line_move = inspect.currentframe().f_lineno + 1
        moved = x.to_device(target)
        line_add = inspect.currentframe().f_lineno + 1
        total = moved + moved
        line_fail = inspect.currentframe().f_lineno + 2
        with pytest.raises(rs.AutodiffCrossBackendMove):
            a.to_device(other_ad)
        with rs.profile("burn-0.21"):
            line_profile = inspect.currentframe().f_lineno + 2
            with pytest.raises(rs.AutodiffMismatchMove):
                x.to_device(other_ad)
    x.to_device(target)  # after the block: not recorded
    assert total.to_list() == [2.0, 4.0]
    mode = rs.mode()
    entries = _read(path)
    assert entries == [
        {**_span(line_move, "x.to_device(target)"), "op": "Tensor.to_device", "outcome": "ok",
         "profile": DEFAULT_PROFILE, "mode": mode},
        {**_span(line_add, "moved + moved"), "op": "Tensor.add", "outcome": "ok",
         "profile": DEFAULT_PROFILE, "mode": mode},
        {**_span(line_fail, "a.to_device(other_ad)"), "op": "Tensor.to_device",
         "outcome": {"code": "MV101", "message": "Autodiff tensor cannot be moved between backends."},
         "profile": DEFAULT_PROFILE, "mode": mode},
        {**_span(line_profile, "x.to_device(other_ad)"), "op": "Tensor.to_device",
         "outcome": {"code": "MV102", "message": "Cannot move between autodiff and non-autodiff instances."},
         "profile": "burn-0.21", "mode": mode},
    ]


def test_recording_spans_a_multi_line_call_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text("")
    flex = device("flex")
    with rs.recording(path):
        first = inspect.currentframe().f_lineno + 1
        t = Tensor.from_floats(
            [1.0, 2.0], flex)
    with rs.recording(path):
        backward_line = inspect.currentframe().f_lineno + 2
        with pytest.raises(rs.RequiresAutodiff):
            t.backward()
    entries = _read(path)
    assert len(entries) == 2
    source = linecache.getline(__file__, first)
    assert entries[0]["line"] == first and entries[0]["end_line"] == first + 1
    assert entries[0]["col"] == source.index("Tensor.from_floats(")
    assert entries[0]["end_col"] == linecache.getline(__file__, first + 1).index(")") + 1
    assert entries[0]["op"] == "Tensor.from_floats" and entries[0]["outcome"] == "ok"
    assert entries[1] == {**_span(backward_line, "t.backward()"), "op": "Tensor.backward",
                          "outcome": {"code": "MV108", "message": "Requires autodiff tensor."},
                          "profile": DEFAULT_PROFILE, "mode": rs.mode()}


def test_recording_a_grad_replace_failure_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    x = Tensor.from_floats([1.0], device("flex").autodiff()).require_grad()
    grads = x.backward()
    bad = Tensor.from_floats([1.0], device("ndarray"))
    good = Tensor.from_floats([5.0], device("flex"))
    with rs.recording(path):
        with pytest.raises(rs.BackendMismatch):
            x.grad_replace(grads, bad)
        x.grad_replace(grads, good)
    entries = _read(path)
    assert [(e["op"], e["outcome"] if e["outcome"] == "ok" else e["outcome"]["code"]) for e in entries] == [
        ("Tensor.grad_replace", "MV106"), ("Tensor.grad_replace", "ok")]


def test_recording_environment_variable(tmp_path: Path) -> None:
    path = tmp_path / "env.jsonl"
    code = textwrap.dedent("""\
        import runtime_shim as rs
        x = rs.Tensor.from_floats([1.0], rs.Device.flex())
        try:
            x.to_device(rs.Device.flex().autodiff())
        except rs.DispatchError as error:
            assert error.code == "MV102"
        """)
    env = {**os.environ, "RUNTIME_SHIM_RECORD": str(path), "RUNTIME_SHIM_VIRTUAL": "1",
           "RUNTIME_SHIM_PROFILE": "burn-0.21",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("BURN_DEVICE", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    entries = _read(path)
    common = {"file": "<string>", "profile": "burn-0.21", "mode": "virtual", "callers": []}
    assert entries == [
        {**common, "line": 2, "col": 33, "end_line": 2, "end_col": 49, "op": "Device.flex", "outcome": "ok"},
        {**common, "line": 2, "col": 4, "end_line": 2, "end_col": 50, "op": "Tensor.from_floats", "outcome": "ok"},
        {**common, "line": 4, "col": 16, "end_line": 4, "end_col": 32, "op": "Device.flex", "outcome": "ok"},
        {**common, "line": 4, "col": 16, "end_line": 4, "end_col": 43, "op": "Device.autodiff", "outcome": "ok"},
        {**common, "line": 4, "col": 4, "end_line": 4, "end_col": 44, "op": "Tensor.to_device",
         "outcome": {"code": "MV102", "message": "Cannot move between autodiff and non-autodiff instances."}},
    ]


def test_a_record_names_the_users_calls_that_led_to_it(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""\
        import runtime_shim as rs

        def export(t):
            return t.to_device(rs.Device.flex().autodiff())

        def save(t):
            return export(t)

        try:
            save(rs.Tensor.from_floats([1.0], rs.Device.flex()))
        except rs.DispatchError:
            pass
        """))
    env = {**os.environ, "RUNTIME_SHIM_RECORD": str(path), "RUNTIME_SHIM_VIRTUAL": "1",
           "RUNTIME_SHIM_PROFILE": "burn-0.21",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    [failure] = [e for e in _read(path) if e["outcome"] != "ok"]
    assert failure["line"] == 4
    assert failure["callers"] == [[str(program), 7, 11], [str(program), 10, 4]]  # innermost first


def test_printing_a_tensor_is_not_recorded_as_a_reveal(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    t = Tensor.ones([2], device("flex"))
    with rs.recording(path):
        text = repr(t)
        line = inspect.currentframe().f_lineno + 1
        revealed = rs.reveal_device(t)
    assert revealed in text
    entries = _read(path)
    assert [(e["op"], e["line"], e["reveal"]) for e in entries] == [("reveal_device", line, "Flex float")]


def test_recording_a_device_constructor(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    with rs.recording(path):
        line = inspect.currentframe().f_lineno + 1
        rs.Device.ndarray()
    (entry,) = _read(path)
    assert {k: entry[k] for k in ("file", "line", "col", "end_line", "end_col", "callers", "op", "outcome")} == {
        **_span(line, "rs.Device.ndarray()"), "op": "Device.ndarray", "outcome": "ok"}
