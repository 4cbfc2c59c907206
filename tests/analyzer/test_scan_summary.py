"""The demand sweep's scan summaries (kept in the cache per file content) give what a scan of the file gives.

The fixtures are analysed as one component swept on demand twice: once scanning every file (the summaries are
built on the way), once from the summaries as the cache stores them (through JSON). Every function's answers
(device source, effects when skipped), the attribute writers and the module names must be the same, and the
second engine must not have scanned a module.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from devicelint import frontend
from devicelint.cache import Cache
from devicelint.engine import demand, scan_summary
from devicelint.engine.core import Engine
from devicelint.engine.program import ModuleInfo
from devicelint.facts import FactStore
from devicelint.runner import check
from devicelint.settings import Settings

from runtime_shim.semantics import DEFAULT_PROFILE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = [ROOT / "fixtures" / "torch", ROOT / "fixtures" / "trainkit", ROOT / "fixtures" / "gradkit",
            ROOT / "tests" / "data" / "torch_project"]


def _sources() -> list[frontend.SourceFile]:
    sources = frontend.load(frontend.discover([str(p) for p in FIXTURES]))
    return [s for s in sources if frontend.parse(s) is None]


def _engine(sources: list[frontend.SourceFile]) -> Engine:
    engine = Engine(sources, FactStore(), DEFAULT_PROFILE, None, project_modules=frozenset(s.module for s in sources))
    engine.run()
    return engine


def _answers(engine: Engine) -> dict[str, Any]:
    functions = {}
    for fn in engine.functions.values():
        effects = engine.effects_of(fn)
        functions[(fn.module.file, scan_summary.position(fn.node))] = (
            engine._mentions(fn), effects.own, effects.any, effects.modules, effects.globals, effects.filled,
            fn.locals, fn.free, fn.is_generator, fn.globals)
    return {"functions": functions, "writers": engine.attr_writers,
            "module_names": {m.file: engine.module_names(m.file) for m in engine.modules}}


def test_a_restored_summary_answers_as_the_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demand, "DEMAND_SWEEP_MIN_FILES", 0)
    scanned = _engine(_sources())
    assert scanned.demand_sweep and scanned.skipped_uncalled > 0  # (some functions were skipped: effects used)
    stored = {s.path: json.loads(json.dumps({k: v for k, v in s.scan.items() if k != scan_summary.CHANGED}))
              for s in (m.source for m in scanned.modules) if s.scan is not None}
    assert all(scan_summary.valid(summary) for summary in stored.values())
    assert len(stored) == len(scanned.modules)
    sources = _sources()
    for source in sources:
        source.scan = stored[source.path]
    computed: list[ast.AST] = []
    scope_of = ModuleInfo._scope_info

    def remembered(self: ModuleInfo, node: Any) -> Any:
        computed.append(node)
        return scope_of(self, node)

    monkeypatch.setattr(ModuleInfo, "_scope_info", remembered)
    restored = _engine(sources)
    assert restored._scans == {}  # nothing scanned: every answer came from the summaries
    assert not [node for node in computed if not isinstance(node, ast.Lambda)]  # no def's scope either
    assert sum(len(s.scan["scopes"]) for s in sources if s.scan is not None) > 100
    assert not any(s.scan is not None and s.scan.get(scan_summary.CHANGED) for s in sources)
    assert _answers(restored) == _answers(scanned)


def test_other_module_names_drop_the_stored_effects() -> None:
    summary = scan_summary.new({}, {"1:0:2:8": False}, {})
    scan_summary.put_effects(summary, "1:0:2:8", "self", frozenset({"pkg"}), [[], ["x"], [], [], []])
    assert scan_summary.effects(summary, "1:0:2:8", "self", frozenset({"pkg"})) == [[], ["x"], [], [], []]
    assert scan_summary.effects(summary, "1:0:2:8", None, frozenset({"pkg"})) is None
    assert scan_summary.effects(summary, "1:0:2:8", "self", frozenset({"pkg", "sub"})) is None
    scan_summary.put_effects(summary, "1:0:2:8", None, frozenset({"sub"}), [[], [], [], [], []])
    assert summary["module_names"] == ["sub"]
    assert scan_summary.effects(summary, "1:0:2:8", "self", frozenset({"sub"})) is None


@pytest.mark.parametrize("damage", [None, [], {"format": 1}, {"format": 1, "imported": {}, "functions": {"k": [1, {}]},
                                                               "writers": {}}])
def test_a_damaged_summary_is_not_used(tmp_path: Path, damage: Any) -> None:
    cache = Cache(str(tmp_path), ("key",))
    cache._scan_entries()["digest"] = {"scan": damage, "seen": cache.now}
    assert cache.scan_summary("digest") is None


def test_the_cache_keeps_the_scans_of_a_component_swept_on_demand(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with the cache stores the scans in their own file; the next run after an edit restores every
    unchanged file's scan and scans the edited file only."""
    monkeypatch.setattr(demand, "DEMAND_SWEEP_MIN_FILES", 0)
    project = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "data" / "torch_project", project)
    settings = Settings(cache_dir=str(tmp_path / "cache"), jobs=1)
    first = check([str(project)], settings)
    documents = list((tmp_path / "cache").rglob("*.scans.json"))
    assert len(documents) == 1
    kept = json.loads(documents[0].read_text(encoding="utf-8"))["scans"]
    assert len(kept) == 6
    edited = project / "classifier" / "train.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n\ndef _helper(obj):\n    obj.device = None\n",
                      encoding="utf-8")
    scanned: list[str] = []
    summarize = demand.DemandSweep._summarize

    def remembered(self: demand.DemandSweep, module: Any, attr_writers: Any) -> None:
        scanned.append(Path(module.file).name)
        summarize(self, module, attr_writers)

    monkeypatch.setattr(demand.DemandSweep, "_summarize", remembered)
    before_lazy = demand.summarize  # (a file parsed in a large run is scanned before its bodies are made lazy)

    def remembered_before(source: Any) -> None:
        scanned.append(Path(source.path).name)
        before_lazy(source)

    monkeypatch.setattr(demand, "summarize", remembered_before)
    second = check([str(project)], settings)
    assert sorted(set(scanned)) == ["train.py"]
    cold = check([str(project)], Settings(jobs=1))
    assert [d.to_cache() for d in second.diagnostics] == [d.to_cache() for d in cold.diagnostics]
    assert first.findings and second.cache_misses == 1
    assert len(json.loads(documents[0].read_text(encoding="utf-8"))["scans"]) == 7
