"""The engine, construct by construct: each snippet carries its expectations as inline markers
(``# expect:``, ``# expect-warning:``, ``# reveal:``) and must produce exactly those."""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path

import pytest
from devicelint import frontend
from devicelint.runner import check, check_source
from devicelint.settings import Settings

HEAD = Settings(profile="burn-2026-08")  # the HEAD column, where an autodiff and a plain float mix fails
HEADER = "from runtime_shim import CheckpointingStrategy, Device, DispatchError, Tensor, reveal_device\n"
_MARKER = re.compile(r"#\s*(expect-warning|expect|reveal)\s*:\s*([^#\n]*)")


def expected(text: str) -> set[tuple]:
    out = set()
    for row, line in enumerate(text.splitlines(), 1):
        for kind, body in _MARKER.findall(line):
            if kind == "reveal":
                out.add((row, "reveal", body.strip()))
            else:
                for code in body.split(","):
                    out.add((row, "error" if kind == "expect" else "warning", code.strip()))
    return out


def observed(report) -> set[tuple]:
    out = set()
    for d in report.diagnostics:
        if d.code:
            out.add((d.row, d.severity.value, d.code))
        else:
            out.add((d.row, "reveal", d.message.removeprefix("reveal_device: ")))
    return out


def assert_markers(source: str, settings: Settings | None = None) -> None:
    if source.startswith(HEADER):
        source = HEADER + textwrap.dedent(source[len(HEADER):])
    report = check_source(source, "snippet.py", settings)
    got, want = observed(report), expected(source)
    assert got == want, f"missing {sorted(want - got)}\nunexpected {sorted(got - want)}\n" + "\n".join(
        f"  {d.row}: {d.code} {d.message}" for d in report.diagnostics)




def test_branches_join_and_name_the_path() -> None:
    assert_markers(HEADER + """
    def pick(flag):
        if flag:
            return Device.flex().autodiff()
        elif flag is None:
            return Device.ndarray()
        else:
            return Device.flex()
    d = pick(input())
    reveal_device(d)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } | Flex | NdArray
    t = Tensor.ones([2], d)
    t.inner()  # expect-warning: MV108
    """, HEAD)


def test_narrowing_on_device_questions() -> None:
    assert_markers(HEADER + """
    def export(t, target):
        if t.device().is_autodiff():
            t = t.inner()
        reveal_device(t)  # reveal: Flex float
        if target.backend == "Flex":
            reveal_device(target)  # reveal: Flex
        elif target.backend in ("NdArray",):
            reveal_device(target)  # reveal: NdArray
        if target.is_autodiff():
            reveal_device(target)  # nothing here can be autodiff: this branch is dead
        if t.device() == target:
            reveal_device(target)  # reveal: Flex
        return t.to_device(target)

    export(Tensor.ones([2], Device.flex().autodiff()), Device.flex())
    export(Tensor.ones([2], Device.flex()), Device.ndarray())
    """)


def test_narrowing_on_attributes_and_none() -> None:
    assert_markers(HEADER + """
    class Trainer:
        def __init__(self, device):
            self.device = device
            self.grad = None

        def run(self):
            if self.device.is_autodiff():
                return Tensor.ones([1], self.device).require_grad()
            return None

    trainer = Trainer(Device.flex().autodiff())
    w = trainer.run()
    if w is not None:
        reveal_device(w)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float tracked
    g = w.grad(w.sum().backward())
    if g is None:
        g = Tensor.zeros([1], Device.flex())
    reveal_device(g)  # reveal: Flex float | Flex float checkpointing: Disabled
    """, HEAD)  # the mix of autodiff and plain floats is this snippet's probe: 2c06be35 fails on it


def test_loops_reach_a_fixpoint_and_carry_states() -> None:
    assert_markers(HEADER + """
    import sys
    t = Tensor.ones([2], Device.flex().autodiff())
    for i in range(len(sys.argv) * 10):  # a count the analysis does not know: the loop's fixpoint
        t = t.inner()  # expect-warning: MV108
    x = 0
    nested = ()
    while x < 100:
        x += 1
        nested = (nested, t)
    reveal_device(t)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked | Flex float
    """, HEAD)


def test_a_loop_over_known_elements_runs_each_iteration_in_turn() -> None:
    """An iteration's end is the next one's start: a dict's entries (or a list's, by the index a loop counts)
    replaced one by one all are; a loop over two known tensors accumulates exactly their sum."""
    assert_markers(HEADER + """
    batch = {"x": Tensor.ones([2], Device.flex()), "y": Tensor.ones([2], Device.flex())}
    for key in batch:
        batch[key] = batch[key].to_device(Device.ndarray())
    reveal_device(batch["x"])  # reveal: NdArray float
    reveal_device(batch["y"])  # reveal: NdArray float
    rows = [Tensor.ones([2], Device.flex()), Tensor.ones([2], Device.flex())]
    for i in range(len(rows)):
        rows[i] = rows[i].to_device(Device.ndarray())
    reveal_device(rows[1])  # reveal: NdArray float
    total = Tensor.zeros([2], Device.flex().autodiff())
    for part in (Tensor.ones([2], Device.flex().autodiff()).require_grad(), Tensor.ones([2], Device.flex())):
        total = total + part  # expect-warning: MV106
    """, HEAD)  # the mix of autodiff and plain floats is this snippet's probe: 2c06be35 fails on it


def test_break_continue_and_else() -> None:
    assert_markers(HEADER + """
    ts = [Tensor.ones([2], Device.flex()), Tensor.ones([2], Device.ndarray().autodiff())]
    found = None
    for t in ts:
        if not t.device().is_autodiff():
            continue
        found = t
        break
    else:
        found = Tensor.zeros([2], Device.flex())
    reveal_device(found)  # reveal: Autodiff { device: NdArray, checkpointing: Disabled } float untracked
    import sys
    for t in ts[:len(sys.argv)]:  # how many: unknown (the else may run)
        if not t.device().is_autodiff():
            continue
        found = t
        break
    else:
        found = Tensor.zeros([2], Device.flex())
    reveal_device(found)  # reveal: Autodiff { device: NdArray, checkpointing: Disabled } float untracked | Flex float
    """)


def test_try_handlers_see_every_state() -> None:
    assert_markers(HEADER + """
    t = Tensor.ones([2], Device.flex())
    try:
        t = Tensor.from_inner(t)
        t.to_device(Device.ndarray())  # expect: MV102
        t = t.inner()
    except DispatchError:
        t.inner()  # expect-warning: MV108
    finally:
        reveal_device(t)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked | Flex float
    """, HEAD)


def test_a_definite_failure_is_reported_and_the_path_goes_on() -> None:
    # the bugs after it are found in the same run (``inner()`` of a plain tensor)
    assert_markers(HEADER + """
    w = Tensor.ones([2], Device.flex().autodiff())
    w.to_device(Device.ndarray())  # expect: MV102
    w.inner().inner()  # expect: MV108
    """, HEAD)


def test_a_caught_definite_failure_ends_the_path() -> None:
    # the program goes on in the handler: the rest of the try body never runs
    assert_markers(HEADER + """
    from runtime_shim import DispatchError
    w = Tensor.ones([2], Device.flex().autodiff())
    try:
        w.to_device(Device.ndarray())  # expect: MV102
        w.inner().inner()
    except DispatchError:
        pass
    """)


def test_unknown_states_say_nothing() -> None:
    assert_markers(HEADER + """
    import somewhere

    def export(t):
        return t.to_device(Device.ndarray())

    export(somewhere.load())
    Tensor.ones([2], somewhere.device()).inner()
    """)


def test_with_profile_and_user_context_managers() -> None:
    assert_markers(HEADER + """
    import runtime_shim
    t = Tensor.ones([2], Device.flex())
    with runtime_shim.profile("burn-0.21"):
        try:
            t.to_device(Device.flex().autodiff())  # expect: MV102
        except DispatchError:
            pass
    t.to_device(Device.flex().autodiff())  # expect-warning: MV150
    """)


def test_comprehensions_walrus_lambdas_conditional_expressions() -> None:
    assert_markers(HEADER + """
    ad = Device.flex().autodiff()
    batches = [Tensor.ones([2], Device.flex()), Tensor.ones([2], Device.flex()), Tensor.ones([2], Device.flex())]
    moved = [b.to_device(ad) for b in batches if b.kind == "float"]  # expect-warning: MV150
    lazy = [b.inner() for b in moved if b.kind == "int"]
    try:
        by_id = {i: b.inner() for i, b in enumerate(batches)}  # expect: MV108
        reveal_device(by_id)  # a comprehension over a non-empty list that always fails: unreachable
    except DispatchError:
        pass
    apply = lambda t: t.inner()
    apply(Tensor.ones([2], ad))
    pick = ad if len(batches) == 3 else Device.flex()
    reveal_device(pick)  # reveal: Autodiff { device: Flex, checkpointing: Disabled }
    if (n := len(batches)) > 2:
        z = Tensor.zeros([n], pick)
        reveal_device(z)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked
    """, HEAD)


def test_a_comprehension_run_again_binds_its_walrus_each_time() -> None:
    """The walrus targets of a comprehension are found once; each later run still binds them in its scope."""
    assert_markers(HEADER + """
    def last_of(batches):
        kept = [t for b in batches if (t := b.inner()).kind == "float"]
        return t

    flex = last_of([Tensor.ones([2], Device.flex().autodiff())])
    reveal_device(flex)  # reveal: Flex float
    nd = last_of([Tensor.ones([2], Device.ndarray())])
    reveal_device(nd)  # reveal: NdArray float
    """)


def test_contexts_are_named_in_warnings() -> None:
    source = HEADER + textwrap.dedent("""
    def export(t):
        return t.to_device(Device.ndarray())

    export(Tensor.ones([2], Device.flex()))
    export(Tensor.ones([2], Device.flex().autodiff()))
    """)
    [d] = check_source(source, "main.py").findings
    assert d.code == "MV102" and d.severity.value == "warning"
    assert "fails when `export` is called from main.py:7" in d.message
    assert "with t=Autodiff { device: Flex, checkpointing: Disabled } float untracked" in d.message
    assert "ok in 1 other calling context" in d.message
    assert any(r.row == 7 and "called here" in r.message for r in d.related)


def test_recursion_defaults_closures() -> None:
    assert_markers(HEADER + """
    def countdown(t, n=3):
        return t if n == 0 else countdown(t * 2.0, n - 1)

    def forever(t):
        return forever(t)

    reveal_device(countdown(Tensor.ones([1], Device.ndarray())))  # reveal: NdArray float

    def make_mover(device=Device.ndarray()):
        def move(t):
            return t.to_device(device)  # expect-warning: MV102
        return move

    mover = make_mover()
    reveal_device(mover(Tensor.ones([1], Device.flex())))  # reveal: NdArray float
    try:
        mover(Tensor.ones([1], Device.flex().autodiff()))
    except DispatchError:
        pass
    forever(Tensor.ones([1], Device.flex()))
    reveal_device(mover)  # never returns: unreachable
    """)


def test_classes_inheritance_properties_dataclasses() -> None:
    assert_markers(HEADER + """
    from dataclasses import dataclass, field

    @dataclass
    class Config:
        device: object = field(default_factory=lambda: Device.ndarray().autodiff())
        scale: float = 2.0

    class Base:
        def __init__(self, config):
            self.config = config
            self.weight = Tensor.ones([2], config.device).require_grad()

        @property
        def device(self):
            return self.config.device

    class Head(Base):
        def __init__(self, config):
            super().__init__(config)
            self.bias = Tensor.zeros([2], self.device)

        def __call__(self, x):
            return x * self.weight + self.bias  # expect-warning: MV106

    head = Head(Config())
    reveal_device(head.device)  # reveal: Autodiff { device: NdArray, checkpointing: Disabled }
    y = head(Tensor.from_inner(Tensor.ones([2], Device.ndarray())))
    reveal_device(y)  # reveal: Autodiff { device: NdArray, checkpointing: Disabled } float non-leaf
    head(Tensor.ones([2], Device.ndarray()))
    """, HEAD)  # the mix of autodiff and plain floats is this snippet's probe: 2c06be35 fails on it


def test_capture_scopes() -> None:
    assert_markers(HEADER + """
    cap = Device.capture()
    out = cap.capture_scope(lambda scope: Tensor.ones([2], cap).exp())
    reveal_device(out)  # reveal: Capture(?) float computed
    out.exp()  # expect: MV104
    """)


def test_multi_module_project(tmp_path: Path) -> None:
    files = {
        "proj/__init__.py": "from .devices import TRAIN\n",
        "proj/devices.py": "from runtime_shim import Device as D\nTRAIN = D.flex().autodiff()\n",
        "proj/a.py": "from . import b\nfrom .b import helper\nVALUE = 1\n",
        "proj/b.py": "from . import a\n\ndef helper(t):\n    return t.to_device(NdArray)\n\n"
                     "from runtime_shim import Device\nNdArray = Device.ndarray()\n",
        "proj/main.py": "from proj import TRAIN\nfrom proj.a import helper\nfrom runtime_shim.tensor import Tensor\n"
                        "from .devices import *\n"
                        "helper(Tensor.ones([2], TRAIN))\n",
        "unrelated.py": "def f(:\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    report = check([str(tmp_path)])
    got = sorted((Path(d.file).name, d.row, d.code, d.severity.value) for d in report.findings)
    assert got == [("b.py", 4, "MV102", "error")]
    assert report.files_analyzed == 5  # unrelated.py is skipped without parsing (no MV901)


def test_relevance_follows_project_modules(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("from runtime_shim import Device\nAD = Device.flex().autodiff()\n")
    (tmp_path / "job.py").write_text("import helpers\nhelpers.AD.autodiff()\n")
    (tmp_path / "noise.py").write_text("print('no tensors here')\n")
    sources = frontend.load(frontend.discover([str(tmp_path)]))
    assert sorted(Path(s.path).name for s in frontend.relevant(sources)) == ["helpers.py", "job.py"]
    report = check([str(tmp_path)], HEAD)  # at d16f7ba2ed Device::autodiff is idempotent
    assert [(Path(d.file).name, d.code) for d in report.findings] == [("job.py", "MV109")]


def test_pathological_inputs_do_not_crash(tmp_path: Path) -> None:
    long_expr = "x = " + " + ".join(["t"] * 3000) + "\n"
    deep = "x = " + "(" * 150 + "t" + ")" * 150 + "\n"
    loops = "".join("    " * i + f"for i{i} in range(3):\n" for i in range(30)) + "    " * 30 + "t = t.exp()\n"
    for i, body in enumerate((long_expr, deep, loops)):
        path = tmp_path / f"p{i}.py"
        path.write_text(HEADER + "t = Tensor.ones([1], Device.flex())\n" + body)
        start = time.perf_counter()
        check([str(path)])
        assert time.perf_counter() - start < 20


@pytest.mark.parametrize("profile", ["burn-2026-08", "burn-0.21"])
def test_profiles(profile: str) -> None:
    source = HEADER + "Tensor.ones([2], Device.flex()).to_device(Device.ndarray().autodiff())\n"
    [d] = check_source(source, "p.py", Settings(profile=profile)).findings
    assert d.code == ("MV150" if profile == "burn-2026-08" else "MV102")


def test_module_attributes_assigned_from_outside(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("from runtime_shim import Device\nDEVICE = Device.flex()\n")
    (tmp_path / "main.py").write_text(
        "import config\nfrom runtime_shim import Tensor\n\n"
        "def train():\n    return Tensor.ones([2], config.DEVICE).inner()\n\n"
        "try:\n    train()\nexcept Exception:\n    pass\nconfig.DEVICE = config.DEVICE.autodiff()\ntrain()\n")
    (tmp_path / "early.py").write_text(
        "import config\nimport main\nfrom runtime_shim import Tensor, reveal_device\n\n"
        "def later():\n    return Tensor.ones([2], config.DEVICE)\n\n"
        "reveal_device(later())\n")
    report = check([str(tmp_path)], HEAD)  # at d16f7ba2ed Tensor::inner of a plain tensor returns it
    findings = [(Path(d.file).name, d.row, d.code, d.severity.value) for d in report.findings]
    assert findings == [("main.py", 5, "MV108", "warning")]  # before the store only
    [note] = [d for d in report.diagnostics if not d.code]
    assert note.message == "reveal_device: Autodiff { device: Flex, checkpointing: Disabled } float untracked"


def test_no_internal_error_on_a_sample_of_the_standard_library() -> None:
    """Every file analysed as if it used runtime_shim: no exception escapes the engine."""
    import os
    import random
    import sysconfig

    stdlib = sysconfig.get_paths()["stdlib"]
    files = sorted(f for f in frontend.discover([stdlib]) if os.sep + "test" + os.sep not in f)
    sample = random.Random(1).sample(files, 60)
    for path in sample:
        report = check([path], Settings(analyze_everything=True))
        assert report.files_seen == 1


def test_generators_yield_what_iteration_sees() -> None:
    assert_markers(HEADER + """
    def batches(device):
        for rows in ([1.0, 2.0], [3.0, 4.0]):
            yield Tensor.from_floats(rows, device)
        yield from [Tensor.zeros([2], device)]

    def cpu_then_flex():
        yield Device.cpu()
        yield Device.flex()

    for batch in batches(Device.flex().autodiff()):
        reveal_device(batch)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked
        batch.to_device(Device.flex())  # expect: MV102
    for d in cpu_then_flex():
        reveal_device(d)  # reveal: Cpu | Flex
    first = next(batches(Device.ndarray()))
    reveal_device(first)  # reveal: NdArray float
    """)


def test_dict_comprehensions_keep_values_per_key() -> None:
    assert_markers(HEADER + """
    names = ("train", "eval")
    devices = {name: Device.flex().autodiff() if name == "train" else Device.flex() for name in names}
    reveal_device(devices["train"])  # reveal: Autodiff { device: Flex, checkpointing: Disabled }
    reveal_device(devices["eval"])  # reveal: Flex
    params = {"w": Tensor.ones([2], devices["train"]), "b": Tensor.zeros([2], devices["train"])}
    exported = {k: v.inner() for k, v in params.items()}
    reveal_device(exported["w"])  # reveal: Flex float
    try:
        for k, v in exported.items():
            v.inner()  # expect: MV108
    except DispatchError:
        pass
    opaque = {str(i): Tensor.ones([1], Device.ndarray()) for i in input()}
    for v in opaque.values():
        reveal_device(v)  # reveal: NdArray float
    reveal_device(opaque["0"])  # reveal: NdArray float
    """, HEAD)


def test_narrowing_through_a_copied_value() -> None:
    assert_markers(HEADER + """
    def export(t, d):
        b = t.device().backend
        if b == "Flex":
            reveal_device(t)  # reveal: Flex float
        ad = d.is_autodiff()
        if ad:
            reveal_device(d)  # reveal: Autodiff { device: NdArray, checkpointing: Disabled }
            return t.to_device(d.inner())
        if (plain := not t.device().is_autodiff()) and plain:
            reveal_device(t)  # reveal: Cpu float
        return t.to_device(d)

    export(Tensor.ones([2], Device.flex()), Device.ndarray().autodiff())
    export(Tensor.ones([2], Device.cpu()), Device.cpu())

    def stale(t, d):
        ad = d.is_autodiff()
        d = Device.flex()
        if ad:
            reveal_device(d)  # reveal: Flex
        return t

    stale(Tensor.ones([2], Device.cpu()), Device.cpu().autodiff())
    """)


def test_comprehension_over_range_has_a_known_length() -> None:
    assert_markers(HEADER + """
    gpus = [Device.cuda(i) for i in range(2)]
    reveal_device(gpus[0])  # reveal: Cuda(0)
    reveal_device(gpus[1])  # reveal: Cuda(1)
    first, second = [Tensor.ones([2], d) for d in gpus]
    try:
        first + second  # expect: MV105
    except DispatchError:
        pass
    for step in range(3):
        last = Tensor.ones([1], gpus[0])
    reveal_device(last)  # reveal: Cuda(0) float
    """)


def test_walrus_in_a_test_narrows_its_target() -> None:
    assert_markers(HEADER + """
    def pick(kind):
        return Device.flex().autodiff() if kind == "train" else Device.flex()

    for kind in ("train", "eval"):
        if (d := pick(kind)).is_autodiff():
            reveal_device(d)  # reveal: Autodiff { device: Flex, checkpointing: Disabled }
        else:
            reveal_device(d)  # reveal: Flex
    """)


def test_module_containers_filled_inside_functions() -> None:
    # a weak update of the module's namespace: the module still may hold the empty dict (KeyError: unknown)
    assert_markers(HEADER + """
    REGISTRY = {}
    OUTPUTS = []

    def register(name, device):
        REGISTRY[name] = Tensor.ones([2], device)
        OUTPUTS.append(REGISTRY[name])
        return REGISTRY[name]

    reveal_device(register("a", Device.cpu()))  # reveal: Cpu float
    reveal_device(REGISTRY["a"])  # reveal: Cpu float | Unknown
    for t in OUTPUTS:
        reveal_device(t)  # reveal: Cpu float
    """)


def test_element_wise_comprehension_keeps_the_facts_of_later_calls() -> None:
    assert_markers(HEADER + """
    def export(t):
        return t.to_device(Device.cpu())  # expect: MV102

    live = Tensor.ones([2], Device.flex().autodiff())
    try:
        copies = [export(t) for t in (live, live)]
    except DispatchError:
        pass
    """)


def test_subscript_stores_on_attributes_and_unknown_keys() -> None:
    assert_markers(HEADER + """
    class Cache:
        def __init__(self):
            self.items = {"h": Tensor.ones([2], Device.flex())}

        def put(self, key, t):
            self.items[key] = t
            reveal_device(self.items["h"])  # reveal: Cpu float | Flex float

    cache = Cache()
    cache.put(input(), Tensor.ones([2], Device.cpu()))
    table = {"a": Device.flex()}
    table[input()] = Device.cpu()
    reveal_device(table["a"])  # reveal: Cpu | Flex
    reveal_device(table["b"])  # reveal: Cpu
    """)


def test_with_enters_without_as_and_a_failing_value_ends_the_path() -> None:
    assert_markers(HEADER + """
    class Checkpointed:
        def __init__(self, device):
            self.device = device

        def __enter__(self):
            return self.device.gradient_checkpointing()  # expect: MV110

        def __exit__(self, *exc):
            return False

        @property
        def strategy(self):
            return self.device.gradient_checkpointing_strategy()  # expect: MV110

    try:
        with Checkpointed(Device.flex()):
            reveal_device(Device.cpu())  # never reached: entering fails
    except DispatchError:
        pass
    plain = Device.ndarray()
    try:
        plain, = (Checkpointed(Device.flex()).strategy,)
        reveal_device(plain)  # never reached: the property fails
        s = Checkpointed(Device.cpu()).strategy
        reveal_device(s)  # never reached
    except DispatchError:
        pass
    reveal_device(plain)  # reveal: NdArray
    """, HEAD)


def test_repeated_list_keeps_its_elements() -> None:
    assert_markers(HEADER + """
    batches = [Tensor.ones([2, 3], Device.flex())] * 3
    for step, batch in enumerate(batches):
        reveal_device(batch)  # reveal: Flex float
    pair = 2 * (Device.ndarray(),)
    reveal_device(pair[1])  # reveal: NdArray
    for d in [Device.cpu()] * int(input()):
        reveal_device(d)  # reveal: Cpu
    """)


def test_contextlib_suppress_continues_after_a_raise() -> None:
    assert_markers(HEADER + """
    import contextlib
    from contextlib import suppress

    with contextlib.suppress(DispatchError):
        Device.flex().gradient_checkpointing()  # expect: MV110
    with suppress(DispatchError):
        d = Device.flex()
        d = d.autodiff().autodiff()  # expect: MV109
    reveal_device(d)  # reveal: Flex
    """, HEAD)


def test_constant_slices_keep_their_elements() -> None:
    assert_markers(HEADER + """
    def first(devices):
        if not devices:
            return Device.ndarray()
        return devices[0] if devices[0].backend == "Flex" else first(devices[1:])

    reveal_device(first([Device.cpu(), Device.flex()]))  # reveal: Flex
    pair = (Device.cpu(), Device.flex(), Device.ndarray())
    reveal_device(pair[::2][1])  # reveal: NdArray
    reveal_device(pair[-1:][0])  # reveal: NdArray
    """)


def test_isinstance_narrows_a_recursive_walk_over_nested_containers() -> None:
    assert_markers(HEADER + """
    def to_host(tree):
        if isinstance(tree, (list, tuple)):
            return [to_host(t) for t in tree]
        if isinstance(tree, dict):
            return {k: to_host(v) for k, v in tree.items()}
        reveal_device(tree)  # reveal: Flex float | NdArray float
        return tree.to_device(Device.cpu())

    out = to_host([Tensor.ones([2], Device.flex()), {"b": Tensor.ones([2], Device.ndarray())}])
    reveal_device(out[0])  # reveal: Cpu float
    reveal_device(out[1]["b"])  # reveal: Cpu float
    """)


def test_isinstance_with_a_project_class_narrows_items_read_through_getitem() -> None:
    assert_markers(HEADER + """
    class OnFlex:
        def __init__(self):
            self.t = Tensor.ones([2], Device.flex())

    class OnNdArray:
        def __init__(self):
            self.t = Tensor.ones([2], Device.ndarray())

    class Slot:
        def __init__(self, parts):
            self.parts = parts

        def __getitem__(self, i):
            return self.parts[i]

    slots = [Slot([OnFlex()]), Slot([OnNdArray()])]
    flex = [s[0] for s in slots if isinstance(s[0], OnFlex)]
    reveal_device(flex[0].t)  # reveal: Flex float
    others = [s[0] for s in slots if not isinstance(s[0], OnFlex)]
    reveal_device(others[0].t)  # reveal: NdArray float
    parts = [OnFlex(), OnNdArray()]
    reveal_device([p for p in parts if isinstance(p, OnNdArray)][0].t)  # reveal: NdArray float
    for s in slots:
        if isinstance(s[0], OnFlex):
            s.parts = [OnNdArray()]  # the object changed: the test no longer holds
            reveal_device(s[0].t)  # reveal: Flex float | NdArray float
    """)


def test_global_declarations_store_into_the_module() -> None:
    assert_markers(HEADER + """
    DEVICE = Device.flex()

    def enable_autodiff():
        global DEVICE
        DEVICE = DEVICE.autodiff()  # expect-warning: MV109
        reveal_device(DEVICE)  # reveal: Autodiff { device: Flex, checkpointing: Disabled }

    enable_autodiff()
    reveal_device(DEVICE)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } | Flex
    try:
        enable_autodiff()
    except DispatchError:
        pass
    """, HEAD)


def test_property_setters_run_on_assignment() -> None:
    assert_markers(HEADER + """
    class Trainer:
        def __init__(self):
            self._device = Device.flex()

        @property
        def device(self):
            return self._device

        @device.setter
        def device(self, value):
            self._device = value.autodiff()  # expect-warning: MV109

    class Evaluator(Trainer):
        pass

    trainer = Trainer()
    trainer.device = Device.ndarray()
    reveal_device(trainer.device)  # reveal: Autodiff { device: NdArray, checkpointing: Disabled } | Flex
    try:
        Evaluator().device = Device.cpu().autodiff()
    except DispatchError:
        pass
    """, HEAD)


def test_builtin_sum_adds_the_elements() -> None:
    assert_markers(HEADER + """
    flex = Device.flex()
    losses = [Tensor.ones([1], flex).sum() for _ in range(3)]
    reveal_device(sum(losses))  # reveal: Flex float
    try:
        sum(losses).backward()  # expect: MV108
    except DispatchError:
        pass
    try:
        sum([losses[0], Tensor.ones([1], Device.ndarray())])  # expect: MV105
    except DispatchError:
        pass

    def total(parts):
        return sum(p * 2.0 for p in parts)  # expect-warning: MV105

    reveal_device(total(x for x in [Tensor.ones([1], flex)] * int(input())))  # reveal: Flex float
    total(Tensor.ones([1], d) for d in [flex, Device.cpu()] * int(input()))
    """)


def test_match_literal_cases_narrow_and_wildcards_end_the_match() -> None:
    assert_markers(HEADER + """
    def by_backend(d):
        match d.backend:
            case "Flex" | "Cpu":
                return d.gradient_checkpointing()  # expect-warning: MV110
            case _:
                return d

    reveal_device(by_backend(Device.flex().autodiff()))  # reveal: Autodiff { device: Flex, checkpointing: Balanced }
    reveal_device(by_backend(Device.ndarray()))  # reveal: NdArray
    try:
        by_backend(Device.cpu())
    except DispatchError:
        pass

    def named(name):
        match name:
            case "flex":
                base = Device.flex()
            case other if other == "nd":
                base = Device.ndarray()
            case _:
                raise ValueError(name)
        return base

    reveal_device(named("flex"))  # reveal: Flex
    reveal_device(named("nd"))  # reveal: NdArray
    """)


def test_a_worklist_drained_with_pop_keeps_its_elements() -> None:
    assert_markers(HEADER + """
    pending = [Tensor.ones([2], Device.flex().autodiff()), Tensor.ones([2], Device.ndarray())]
    last = pending.pop()
    reveal_device(last)  # reveal: NdArray float
    reveal_device(pending[0])  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked
    queue = [Tensor.ones([2], Device.flex().autodiff()), Tensor.ones([2], Device.flex())]
    while queue:
        t = queue.pop(0)
        reveal_device(t)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked | Flex float
        t.inner()  # expect-warning: MV108
    """, HEAD)


def test_cached_property_and_dataclasses_replace() -> None:
    assert_markers(HEADER + """
    import dataclasses
    import functools
    from dataclasses import dataclass, replace

    @dataclass(frozen=True)
    class RunConfig:
        device: Device = Device.flex()
        checkpoint: bool = False

        @functools.cached_property
        def train_device(self):
            return self.device.autodiff()  # expect-warning: MV109

    train = RunConfig()
    reveal_device(train.train_device)  # reveal: Autodiff { device: Flex, checkpointing: Disabled }
    evaluation = dataclasses.replace(train, device=Device.ndarray())
    reveal_device(evaluation.device)  # reveal: NdArray
    resumed = replace(evaluation, checkpoint=True)
    reveal_device(resumed.device)  # reveal: NdArray
    try:
        replace(train, device=train.train_device).train_device
    except DispatchError:
        pass
    """, HEAD)


def test_a_failing_callee_among_several_keeps_the_path() -> None:
    # only the reveals: the level of MV112 at a call with several callees is the rules' business (one
    # site per api: Device.rocm's site fails everywhere, though the call expression also runs Device.flex)
    settings = Settings(backends=frozenset({"Flex", "NdArray"}), select=("MV108",))
    assert_markers(HEADER + """
    factories = [Device.rocm, Device.flex]
    for make in factories:
        try:
            reveal_device(make())  # reveal: Flex
        except DispatchError:
            pass

    def pick(names, i=0):
        if i >= len(names):
            return Device.ndarray()
        try:
            return {"rocm": Device.rocm, "flex": Device.flex}[names[i]]()
        except DispatchError:
            return pick(names, i + 1)

    reveal_device(pick(["rocm", "flex"]))  # reveal: Flex | NdArray
    """, settings)


def test_closures_see_later_rebindings_of_their_variables() -> None:
    assert_markers(HEADER + """
    def build(use_autodiff):
        device = Device.flex()

        def step():
            return device.gradient_checkpointing()

        if use_autodiff:
            device = device.autodiff()
        return step

    reveal_device(build(True)())  # reveal: Unknown

    def make_step(device):
        def step():
            return device.gradient_checkpointing()  # expect: MV110

        return step

    try:
        make_step(Device.flex())()
    except DispatchError:
        pass
    """)


def test_dict_constructors_splats_copies_and_min_max() -> None:
    assert_markers(HEADER + """
    devices = dict(train=Device.flex().autodiff(), eval=Device.flex())
    reveal_device(devices["eval"])  # reveal: Flex
    merged = {**devices, "eval": Device.ndarray()}
    reveal_device(merged["train"])  # reveal: Autodiff { device: Flex, checkpointing: Disabled }
    reveal_device(merged["eval"])  # reveal: NdArray
    override = dict(merged, train=Device.cpu())
    reveal_device(override.copy()["train"])  # reveal: Cpu
    shards = [Device.cuda(0), Device.cuda(1)]
    reveal_device(shards.copy()[1])  # reveal: Cuda(1)
    reveal_device(max(shards, key=lambda d: d.index))  # reveal: Cuda(0) | Cuda(1)
    try:
        merged["eval"].gradient_checkpointing()  # expect: MV110
    except DispatchError:
        pass
    """)


def test_class_attributes_through_type_of_self() -> None:
    assert_markers(HEADER + """
    class Stage:
        DEVICE = Device.flex()

        def checkpointed(self):
            return type(self).DEVICE.gradient_checkpointing()  # expect-warning: MV110

        def strategy(self):
            return self.__class__.DEVICE.gradient_checkpointing_strategy()

    class TrainStage(Stage):
        DEVICE = Device.flex().autodiff()

    reveal_device(TrainStage().checkpointed())  # reveal: Autodiff { device: Flex, checkpointing: Balanced }
    print(TrainStage().strategy())
    try:
        Stage().checkpointed()
    except DispatchError:
        pass
    """)


def test_for_loop_keeps_the_names_unpacked_from_one_element_together() -> None:
    assert_markers(HEADER + """
    plan = {"encoder": (Device.flex().autodiff(), True), "head": (Device.flex(), False)}
    for name, (device, checkpoint) in plan.items():
        if checkpoint:
            reveal_device(device.gradient_checkpointing())  # reveal: Autodiff { device: Flex, checkpointing: Balanced }
    pairs = [(Tensor.ones([2], Device.cpu()), Device.cpu()), (Tensor.ones([2], Device.flex()), Device.flex())]
    for t, home in pairs:
        reveal_device(t + Tensor.ones([2], home))  # reveal: Cpu float | Flex float
    """)


def test_with_runs_exit_and_a_true_exit_swallows_the_raise() -> None:
    assert_markers(HEADER + """
    class ExportOnExit:
        def __init__(self, weight):
            self.weight = weight

        def __enter__(self):
            return self.weight

        def __exit__(self, *exc):
            self.exported = self.weight.inner()  # expect: MV108
            return False

    class BestEffort:
        def __enter__(self):
            return self

        def __exit__(self, kind, value, tb):
            if kind is not None:
                print("skipped:", value)
            return True

    try:
        with ExportOnExit(Tensor.ones([2], Device.flex())) as w:
            reveal_device(w)  # reveal: Flex float
        reveal_device(w)  # never reached: leaving the block raises
    except DispatchError:
        pass
    with BestEffort():
        Device.flex().gradient_checkpointing()  # expect: MV110
    reveal_device(Device.ndarray())  # reveal: NdArray
    """, HEAD)


def test_a_finally_that_always_raises_voids_the_returns_inside() -> None:
    assert_markers(HEADER + """
    def load(device):
        try:
            return Tensor.ones([2], device)
        finally:
            device.gradient_checkpointing()  # expect-warning: MV110

    try:
        t = load(Device.flex())
        reveal_device(t)  # never reached: the finally block raises
    except DispatchError:
        pass
    w = load(Device.flex().autodiff())
    reveal_device(w)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked

    for d in [Device.ndarray()]:
        try:
            break
        finally:
            d.gradient_checkpointing()  # expect: MV110
    """)


def test_default_device_is_burns_default_build_flex() -> None:
    """burn-dispatch src/device.rs:386-387: the default build enables Flex only, so `Device::default()`
    (and a creation without a device) is Flex: mixing it with `Device.flex()` is fine, and autodiff
    programs on it are checked like any other."""
    assert_markers(HEADER + """
    d = Device.default()
    reveal_device(d)  # reveal: Flex
    x = Tensor.zeros([2])
    reveal_device(x)  # reveal: Flex float
    y = x + Tensor.ones([2], Device.flex())
    w = Tensor.ones([2], Device.default().autodiff()).require_grad()
    try:
        w.to_device(Device.ndarray().autodiff())  # expect: MV101
    except DispatchError:
        pass
    reveal_device(w + x)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float non-leaf
    """)
    assert_markers(HEADER + """
    w = Tensor.ones([2], Device.default().autodiff()).require_grad()
    try:
        w + Tensor.zeros([2])  # expect: MV106
    except DispatchError:
        pass
    """, HEAD)


def test_detached_non_leaf_and_untracked_backward() -> None:
    """burn-autodiff src/ops/tensor.rs:2040-2067 and src/runtime/server.rs:69-72, as the runtime."""
    assert_markers(HEADER + """
    w = Tensor.ones([2], Device.flex().autodiff()).require_grad()
    h = (w * 2.0).detach()
    reveal_device(h)  # reveal: Autodiff { device: Flex, checkpointing: Disabled } float untracked
    if h.is_require_grad():
        reveal_device(h)  # nothing: a detached non-leaf is never require_grad
    if (w * 2.0).is_require_grad():
        reveal_device(w)  # nothing: neither is a non-leaf
    try:
        h.sum().backward()  # expect: MV108
    except DispatchError:
        pass
    grads = (h * w).sum().backward()
    """)


def test_a_callee_that_may_be_none_is_the_other_callee_when_the_call_returns() -> None:
    # calling None raises: where the call returns, it was the function's (an optional hook, an optional import)
    report = check_source(textwrap.dedent("""
        import sys
        import torch

        def to_gpu(t):
            return t.cuda()

        hook = to_gpu if len(sys.argv) > 1 else None
        moved = hook(torch.zeros(3))
        print(moved + torch.ones(3))
    """), "prog.py", Settings(select=("ALL",)))
    # (an error: no path where the call returns leaves ``moved`` unknown)
    assert [(d.row, d.code, d.severity.value) for d in report.diagnostics if d.code] == [(10, "MV201", "error")]
