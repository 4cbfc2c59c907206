"""A large project's function bodies are parsed when first read, to the very nodes a parse of the whole file gives,
and the findings of a run are the same as with whole trees."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest
from devicelint import frontend, lazy_bodies
from devicelint.engine import demand
from devicelint.runner import check
from devicelint.settings import Settings

SOURCE = '''\
"""A module with every layout a function's body can have."""
import functools


def plain(x):
    y = x + 1  # a comment
    return y


def one_line(x): return x


async def waits(stream):
    async for item in stream:
        await item
    async with stream as s:
        yield s


class Outer:
    """Methods, a nested class, decorators inside bodies."""

    @property
    def name(self):
        return "h\u00e9llo \U0001F600"  # not ASCII: columns count UTF-8 bytes

    class Inner:
        def method(self, a,
                   b=(1,
                      2)):
            @functools.wraps(a)
            def wrapper(*args):
                return a(*args)
            text = f"{a!r:>{b}} {wrapper}"
            return text


def tabbed():
\treturn 1


if True:
    def conditional():
        pass
else:
    try:
        def in_try():
            x = [i for i in range(3)
  ]
            return x
    except ImportError:
        def in_handler(): return None
'''


def parsed(text: str, path: str = "m.py") -> frontend.SourceFile:
    source = frontend.source_of(path, text.encode("utf-8"))
    assert frontend.parse(source) is None
    return source


def dumps(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def test_a_lazy_body_parses_to_the_nodes_and_positions_of_the_whole_file() -> None:
    whole = dumps(parsed(SOURCE).tree)  # type: ignore[arg-type]
    source = parsed(SOURCE)
    assert lazy_bodies.strip(source) == 7  # (one_line and in_handler keep their bodies: on the def's line)
    lazy = [node for node in ast.walk(source.tree) if lazy_bodies.is_lazy(node)]  # (walking parses them)
    assert lazy == []
    assert dumps(source.tree) == whole  # type: ignore[arg-type]


def test_a_body_is_parsed_once_and_keeps_its_nodes() -> None:
    source = parsed(SOURCE)
    lazy_bodies.strip(source)
    plain = source.tree.body[2]  # type: ignore[union-attr]
    assert isinstance(plain, ast.FunctionDef) and lazy_bodies.is_lazy(plain)
    stub = plain.body
    first = stub[0]  # reading it parses it
    assert not lazy_bodies.is_lazy(plain) and type(plain.body) is list
    assert plain.body[0] is first and list(stub) == plain.body and len(stub) == 2


def test_a_look_at_a_function_keeps_nothing() -> None:
    source = parsed(SOURCE)
    lazy_bodies.strip(source)
    plain = source.tree.body[2]  # type: ignore[union-attr]
    copy = lazy_bodies.full(plain)
    assert copy is not plain and lazy_bodies.is_lazy(plain)
    assert dumps(copy) == dumps(parsed(SOURCE).tree.body[2])  # type: ignore[union-attr]


def test_walks_for_a_word_skip_the_bodies_without_it() -> None:
    source = parsed(SOURCE)
    lazy_bodies.strip(source)
    assert not lazy_bodies.may_hold(source.tree.body[2], b"import")  # type: ignore[union-attr]
    found = [node for node in lazy_bodies.walk(source.tree, b"wraps") if isinstance(node, ast.Attribute)]  # type: ignore[arg-type]
    assert [node.attr for node in found] == ["wraps"]
    assert lazy_bodies.is_lazy(source.tree.body[2])  # type: ignore[union-attr]
    plain = source.tree.body[2]  # type: ignore[union-attr]
    assert not lazy_bodies.may_hold(plain, (b"wraps", b"setattr")) and lazy_bodies.may_hold(plain, (b"nope", b"y"))


def test_a_lazy_body_pickles_as_the_whole_trees_list() -> None:
    source = parsed(SOURCE)
    lazy_bodies.strip(source)
    assert dumps(pickle.loads(pickle.dumps(source.tree))) == dumps(parsed(SOURCE).tree)  # type: ignore[arg-type]


@pytest.mark.parametrize("data", [SOURCE.replace("\n", "\r\n").encode(), b"# -*- coding: latin-1 -*-\n" +
                                  SOURCE.replace("\u00e9", "e").replace("\U0001F600", "").encode("latin-1"),
                                  b"\xef\xbb\xbf" + SOURCE.encode()])
def test_files_whose_columns_are_not_their_bytes_keep_whole_trees(data: bytes) -> None:
    source = frontend.source_of("m.py", data)
    assert frontend.parse(source) is None
    assert lazy_bodies.strip(source) == 0


def test_a_run_over_lazy_bodies_finds_what_a_run_over_whole_trees_finds(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lib"
    package.mkdir()
    (package / "__init__.py").write_text("from . import model\n", encoding="utf-8")
    (package / "model.py").write_text(
        "import torch\n\n\ndef build():\n    x = torch.ones(3, device='cuda')\n    y = torch.ones(3, device='cpu')\n"
        "    return x + y\n\n\nclass Holder:\n    def reset(self, t):\n        self.buf = t\n", encoding="utf-8")
    for n in range(demand.DEMAND_SWEEP_MIN_FILES):
        (package / f"part{n}.py").write_text(f"from . import model\n\n\ndef f{n}(a):\n    return a.cuda()\n",
                                             encoding="utf-8")
    stripped: list[int] = []
    strip = lazy_bodies.strip
    monkeypatch.setattr(lazy_bodies, "strip", lambda source: stripped.append(strip(source)) or stripped[-1])
    lazy = [d.to_json() for d in check([str(tmp_path)], Settings(jobs=1, select=("ALL",))).diagnostics]
    assert sum(stripped) == demand.DEMAND_SWEEP_MIN_FILES + 2
    monkeypatch.setattr(lazy_bodies, "strip", lambda source: 0)
    whole = [d.to_json() for d in check([str(tmp_path)], Settings(jobs=1, select=("ALL",))).diagnostics]
    assert lazy == whole and any(d["code"] == "MV201" for d in whole)


def test_the_writes_kept_by_position_give_the_effects_of_the_whole_nodes() -> None:
    """What a skipped function may change, from the trimmed writes kept for lazy bodies and from the scan's own
    nodes, for every function of the fixtures (receiver or not, names that may hold a module or not)."""
    root = Path(__file__).resolve().parents[2] / "fixtures"
    compared = 0
    for path in sorted(root.rglob("*.py")):
        source = frontend.source_of(str(path), path.read_bytes())
        if frontend.parse(source) is not None:
            continue
        scans = demand.scan_functions(source.tree, source.data)  # type: ignore[arg-type]
        demand.summarize(source)
        kept = source.function_scans or {}
        for scan in scans.values():
            entry = kept.get(demand.scan_summary.position(scan.node))  # type: ignore[arg-type]
            if entry is None:
                continue
            assert entry[0] == scan.mentions
            for receiver in (None, "self"):
                for names in (frozenset(), frozenset({"torch", "np", "state"})):
                    assert demand._effects(entry[1], receiver, {"x"}, names, None) == \
                        demand._effects(scan.writes, receiver, {"x"}, names, None)
            compared += 1
    assert compared > 1000
