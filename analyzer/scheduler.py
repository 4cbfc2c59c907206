"""Running the components (:mod:`analyzer.import_graph`), each in its own engine, on all cores.

Each component is analysed by its own :class:`~analyzer.engine.Engine`
(:func:`analyze_component`), within a work budget (:mod:`analyzer.budget`):
past it, or out of memory, its files get a note instead of findings; an
exception inside the analysis is an MV903 on the component, never a lost run.
Components are independent, so :func:`run` spreads them over a process pool
when there are enough files for it to pay, packed into tasks of about equal
size; a worker that dies (killed, for example out of memory) loses only its
unfinished components, each of which runs again alone. A component larger than
a worker's share, with several worlds (one training project), is split into a
work item per world instead (:mod:`analyzer.world_items`): the workers send back
each world's facts and the parent merges them and runs the rules.

Diagnostics are identical in one process and in many (a test checks it on the
fixtures): each component runs the same code on the same input either way.
Worker processes are forked where the platform allows it (Linux); they read the
already parsed files from the parent's memory instead of receiving and
re-parsing them.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from . import frontend
from .budget import Limits, OverBudget
from .diagnostics import Diagnostic, Related, Severity
from .failures import FileFailure

if TYPE_CHECKING:
    from .facts import FactStore

MIN_PARALLEL_FILES = 8  # fewer files to analyse than this: one process (a pool costs more than it saves)
CHUNKS_PER_WORKER = 4  # components are packed into about this many tasks per worker (load balance)
RECURSION_LIMIT = 20000
DEFAULT_LIMITS = Limits()


class AnalysisError(Exception):
    """The engine failed on a component (reported as an internal error).

    ``trace`` is the traceback text where it was raised (a worker's traceback does not travel
    as an exception chain); the CLI shows it only when asked (``DEVICELINT_TRACEBACK=1``)."""

    def __init__(self, message: str, trace: str = "") -> None:
        super().__init__(message)
        self.trace = trace


# --------------------------------------------------------------------------- analysing one component


def analyze_component(sources: list[frontend.SourceFile], project_modules: frozenset[str], profile: str,
                      backends: frozenset[str] | None,
                      expressions: dict[str, list[tuple[int, int, int, int, str]]] | None = None,
                      fixes: bool = True, limits: Limits | None = DEFAULT_LIMITS,
                      target: str = "auto") -> list[Diagnostic]:
    """Every rule's diagnostics (and the reveal notes) for one component, columns in characters.

    ``expressions``, when given, receives each file's expression states (see ``Report.expressions``). Past a work
    budget (``limits``) the component's files get no finding and a note (:data:`BUDGET_NOTE`); an exception
    inside the analysis is an MV903 finding where it happened, with a note holding the traceback: never an
    error of the whole run."""
    return guarded(sources, lambda: _analyze_component(sources, project_modules, profile, backends, expressions,
                                                        fixes, limits, target))


def guarded(sources: list[frontend.SourceFile], analysis: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """``analysis()``'s diagnostics for the component of ``sources``; a stop at a budget is the component's note,
    an exception its MV903 (never an error of the whole run)."""
    try:
        return analysis()
    except OverBudget as error:
        return [budget_note(sources, f"stopped at its budget ({error.reason})")]
    except MemoryError:
        gc.collect()
        return [budget_note(sources, "ran out of memory")]
    except Exception as error:  # noqa: BLE001 - every bug becomes MV903 on the component, never a lost run
        return failed_component(sources, error)


def _analyze_component(sources: list[frontend.SourceFile], project_modules: frozenset[str], profile: str,
                       backends: frozenset[str] | None,
                       expressions: dict[str, list[tuple[int, int, int, int, str]]] | None,
                       fixes: bool, limits: Limits | None, target: str = "auto") -> list[Diagnostic]:
    from .budget import budgeted
    from .engine.worlds import run_worlds

    parsed = prepared(sources)
    facts = new_facts(profile, target, expressions is not None)
    stopped: list[tuple[str, int, str]] = []
    if parsed:
        with deep_recursion(), budgeted(limits) as budget:
            run_worlds(parsed, facts, profile, backends, project_modules, target)
        stopped = budget.stopped
    return component_diagnostics(sources, parsed, facts, stopped, expressions, fixes)


def prepared(sources: list[frontend.SourceFile]) -> list[frontend.SourceFile]:
    """The component's files ready for the engine: parsed, their texts let go."""
    parsed = []
    for source in sources:
        if source.tree is None and frontend.parse(source) is not None:
            continue  # cannot happen: unparsable files are not in components
        parsed.append(source)
    for source in parsed:  # (the trees are parsed: the engine reads a text seldom, decoded again then)
        source.forget_text()
    return parsed


def new_facts(profile: str, target: str, expressions: bool) -> FactStore:
    from .facts import FactStore

    facts = FactStore()
    facts.profile = profile
    facts.target = target
    if expressions:
        facts.expressions = {}
    return facts


class deep_recursion:
    """``with deep_recursion():`` the engine may nest as deep as :data:`RECURSION_LIMIT`; deeper is a budget
    stop (a bound, not a bug: the program nests deeper than the stack allows)."""

    def __enter__(self) -> None:
        self.limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.limit, RECURSION_LIMIT))

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        sys.setrecursionlimit(self.limit)
        if isinstance(error, RecursionError):
            raise OverBudget("nesting too deep to analyse") from error


def component_diagnostics(sources: list[frontend.SourceFile], parsed: list[frontend.SourceFile], facts: FactStore,
                          stopped: list[tuple[str, int, str]],
                          expressions: dict[str, list[tuple[int, int, int, int, str]]] | None = None,
                          fixes: bool = True) -> list[Diagnostic]:
    """Every rule's diagnostics on a component's facts, the reveal notes and the functions' budget notes."""
    from devicelint.rules import all_rules

    texts = Texts(parsed)  # where rules find their fixes' spans
    # without ``fixes`` (an editor's per-keystroke pass: fixes parse the file again, with libcst) none are built
    diagnostics = [d for rule in all_rules() for d in rule.check(facts, texts if fixes else None)]
    diagnostics.extend(reveal_notes(facts))
    diagnostics.extend(function_budget_notes(stopped))
    by_file = {s.path: s for s in sources}
    if expressions is not None:
        _expression_spans(facts, by_file, expressions)
    return [finish(d, by_file) for d in diagnostics]


class Texts(Mapping[str, str]):
    """The decoded texts of a component's files by path, each decoded when first asked for (a rule asks
    only for the files it has a fix in)."""

    def __init__(self, sources: list[frontend.SourceFile]) -> None:
        self._sources = {s.path: s for s in sources if s.has_text}
        self._texts: dict[str, str] = {}

    def __getitem__(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            found = self._sources[path].text
            assert found is not None
            text = self._texts[path] = found
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


#: the name of the notes about a component whose analysis stopped or failed (shown by ``check --verbose``)
BUDGET_NOTE = "analysis-budget"
TRACEBACK_NOTE = "analysis-traceback"
RUN_NOTES = frozenset({BUDGET_NOTE, TRACEBACK_NOTE})  # about the run, not the program: kept out of the findings


def budget_note(sources: list[frontend.SourceFile], what: str) -> Diagnostic:
    """The note on a component whose analysis stopped: its files' findings are unknown."""
    first = sources[0].path if sources else "<unknown>"
    others = f" and {len(sources) - 1} file{'s' if len(sources) > 2 else ''} it imports or is imported by" \
        if len(sources) > 1 else ""
    return Diagnostic("", BUDGET_NOTE, Severity.NOTE,
                      f"the analysis of this file{others} {what}: its findings are unknown", first, 1, 1, 1, 1)


def function_budget_notes(stopped: list[tuple[str, int, str]]) -> list[Diagnostic]:
    """A note per function whose run stopped at its budget (its result in that context unknown)."""
    counts: dict[tuple[str, int, str], int] = {}
    for where in stopped:
        counts[where] = counts.get(where, 0) + 1
    return [Diagnostic("", BUDGET_NOTE, Severity.NOTE,
                       f"the analysis of `{name}` stopped at its budget ({count} run{'s' if count > 1 else ''}): "
                       "its results there are unknown", path, line, 1, line, 1)
            for (path, line, name), count in sorted(counts.items())]


def failed_component(sources: list[frontend.SourceFile], error: BaseException) -> list[Diagnostic]:
    """MV903 where the analysis of a component raised ``error`` (the statement it had reached, when the
    traceback names one of the component's files), and a note with the traceback."""
    import traceback

    from devicelint.rules import rule_by_code

    cause = error.__cause__ if isinstance(error, AnalysisError) and error.__cause__ is not None else error
    where = _failure_site(cause, {s.path for s in sources})
    path, row, column = where if where is not None else (sources[0].path if sources else "<unknown>", 1, 1)
    first_line = (str(cause).strip().splitlines() or [""])[0][:300]
    what = f"{type(cause).__name__}: {first_line}" if first_line else type(cause).__name__
    trace = getattr(error, "trace", "") or "".join(traceback.format_exception(cause))
    rule = rule_by_code("MV903")
    assert rule is not None
    by_file = {s.path: s for s in sources}
    found = finish(rule.failed(path, row, column, what), by_file)  # type: ignore[attr-defined]
    note = Diagnostic("", TRACEBACK_NOTE, Severity.NOTE, trace[-8000:], path, row, found.column, row, found.column)
    return [found, note]


def _failure_site(error: BaseException, paths: set[str]) -> tuple[str, int, int] | None:
    """The innermost statement of the analysed files the engine was at when ``error`` was raised: a frame
    with a ``node`` (an ast node with a position) and a ``fr`` (the engine's frame, naming the file)."""
    tb = error.__traceback__
    found = None
    while tb is not None:
        local = tb.tb_frame.f_locals
        node, frame = local.get("node"), local.get("fr")
        path, line = getattr(frame, "file", None), getattr(node, "lineno", None)
        if path in paths and isinstance(line, int):
            found = (path, line, getattr(node, "col_offset", 0) + 1)
        tb = tb.tb_next
    return found


def _expression_spans(facts: FactStore, by_file: dict[str, frontend.SourceFile],
                      into: dict[str, list[tuple[int, int, int, int, str]]]) -> None:
    """The engine's expression states as character spans (alternatives of every context joined)."""
    for (file, line, col, end_line, end_col), texts in (facts.expressions or {}).items():
        source = by_file.get(file)
        if source is None:
            continue
        parts = sorted({part for text in texts for part in text.split(" | ")})
        if "Unknown" in parts:  # unknown last, as reveal_device prints it
            parts = [p for p in parts if p != "Unknown"] + ["Unknown"]
        into.setdefault(file, []).append((line, char_column(source.lines, line, col + 1), end_line,
                                          char_column(source.lines, end_line, end_col + 1), " | ".join(parts)))


def failure_diagnostics(failures: list[FileFailure]) -> list[Diagnostic]:
    """MV901 (and whatever else reads file failures) for files that cannot be read, decoded or parsed."""
    if not failures:  # (nothing to report: the rules need not be imported)
        return []
    from devicelint.rules import all_rules

    from .facts import FactStore

    facts = FactStore()
    facts.file_failures.extend(failures)
    return [d for rule in all_rules() for d in rule.check(facts)]


def reveal_notes(facts: FactStore) -> list[Diagnostic]:
    notes = []
    for site, reveal_facts in facts.reveals_by_site().items():
        texts = sorted({t for f in reveal_facts for t in f.texts})
        text = texts[0] if len(texts) == 1 else " | ".join(sorted({p for t in texts for p in t.split(" | ")}))
        notes.append(Diagnostic("", "reveal", Severity.NOTE, f"reveal_device: {text}", site.file, site.line,
                                site.col + 1, site.end_line, site.end_col + 1))
    return notes


def char_column(lines: list[str], row: int, byte_column: int) -> int:
    """A 1-based byte column of ast → a 1-based character column."""
    if 1 <= row <= len(lines):
        line = lines[row - 1]
        if line.isascii():
            return byte_column
        return len(line.encode("utf-8")[: byte_column - 1].decode("utf-8", errors="replace")) + 1
    return byte_column


def finish(d: Diagnostic, by_file: dict[str, frontend.SourceFile]) -> Diagnostic:
    source = by_file.get(d.file)
    lines = source.lines if source is not None else []
    d.column = char_column(lines, d.row, d.column)
    d.end_column = char_column(lines, d.end_row, d.end_column)
    finished = []
    for r in d.related:
        related_lines = by_file[r.file].lines if r.file in by_file else []
        finished.append(Related(r.file, r.row, char_column(related_lines, r.row, r.column), r.message))
    # in source order: the rules' order has ties broken by set iteration, which differs between
    # processes (hash seeds), and a cached result must read the same as a fresh one
    d.related = sorted(finished, key=lambda r: (r.file, r.row, r.column, r.message))
    if d.inner is not None:
        inner_lines = by_file[d.inner.file].lines if d.inner.file in by_file else []
        d.inner = Related(d.inner.file, d.inner.row, char_column(inner_lines, d.inner.row, d.inner.column),
                          d.inner.message)
    d.folded = [finish(f, by_file) for f in d.folded]
    return d


# --------------------------------------------------------------------------- running components


_SHARED: list[frontend.SourceFile] = []  # the parent's sources, read by forked workers


_POOL_LOCK = threading.Lock()  # one pool at a time: `_SHARED` is the parent's, for the duration of a run


def _context() -> tuple[Any, bool]:
    """(the multiprocessing context, whether its workers share the parent's memory)."""
    import multiprocessing  # here, not at the top: a cached run starts no worker

    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork"), True
    return multiprocessing.get_context("spawn"), False  # macOS, Windows: fork is unsafe or missing


#: a work item: a component (its index in ``groups``) and the world to run of it (None: the whole component)
Item = tuple[int, int | None]


def _run_items(items: list[tuple[list[int], int | None]], payload: list[list[tuple[str, str, bool, bytes]]] | None,
               project_modules: frozenset[str], profile: str, backends: frozenset[str] | None,
               limits: Limits | None = DEFAULT_LIMITS, target: str = "auto") -> list[Any]:
    """In a worker: each item's result, a component's diagnostics (a failure in one is its own MV903:
    :func:`analyze_component`) or one world's outcome (:func:`~analyzer.world_items.run_world_item`)."""
    from .world_items import run_world_item

    results: list[Any] = []
    for n, (group, world) in enumerate(items):
        if payload is None:
            sources = [_SHARED[i] for i in group]
        else:
            sources = [frontend.SourceFile(path, module, is_package, data)
                       for path, module, is_package, data in payload[n]]
        if world is None:
            results.append(analyze_component(sources, project_modules, profile, backends, limits=limits,
                                             target=target))
        else:
            results.append(run_world_item(sources, world, project_modules, profile, backends, limits, target))
    return results


def run(sources: list[frontend.SourceFile], groups: list[list[int]], project_modules: frozenset[str], profile: str,
        backends: frozenset[str] | None, jobs: int, limits: Limits | None = DEFAULT_LIMITS,
        target: str = "auto", meanwhile: Callable[[], None] | None = None) -> list[list[Diagnostic]]:
    """Each group's diagnostics, in the order of ``groups``; in worker processes when it pays, a large
    component's worlds each in its own (:mod:`analyzer.world_items`). ``meanwhile`` is called once before any
    tree is analysed in this process (while the workers run, when there are any)."""
    files = sum(len(g) for g in groups)
    items: list[Item] = work_items(sources, groups, jobs, target) if jobs > 1 \
        else [(g, None) for g in range(len(groups))]
    worlds_split = len(items) > len(groups)
    if jobs <= 1 or len(items) < 2 or (files < MIN_PARALLEL_FILES and not worlds_split):
        if meanwhile is not None:
            meanwhile()
        return [analyze_component([sources[i] for i in g], project_modules, profile, backends, limits=limits,
                                  target=target) for g in groups]
    with _POOL_LOCK:
        return _run_pool(sources, groups, items, project_modules, profile, backends, jobs, limits, target,
                         meanwhile)


def _cost(sources: list[frontend.SourceFile], group: list[int]) -> int:
    return sum(len(sources[i].data) + 2000 for i in group)


def work_items(sources: list[frontend.SourceFile], groups: list[list[int]], jobs: int, target: str) -> list[Item]:
    """The pool's work: a component each, or a world each of a component worth splitting
    (:func:`~analyzer.world_items.splits`)."""
    from . import world_items

    counts = world_items.splits([_cost(sources, g) for g in groups], jobs,
                                lambda n: world_items.world_count([sources[i] for i in groups[n]], target))
    return [(g, w if count > 1 else None) for g, count in enumerate(counts) for w in range(count)]


def _pack(costs: list[int], bins: int) -> list[list[int]]:
    """Item indexes packed into ``bins`` tasks of about equal cost (largest first, into the lightest)."""
    order = sorted(range(len(costs)), key=lambda n: -costs[n])
    tasks: list[list[int]] = [[] for _ in range(bins)]
    loads = [0] * bins
    for n in order:
        lightest = loads.index(min(loads))
        tasks[lightest].append(n)
        loads[lightest] += costs[n]
    return [t for t in tasks if t]


def _run_pool(sources: list[frontend.SourceFile], groups: list[list[int]], items: list[Item],
              project_modules: frozenset[str], profile: str, backends: frozenset[str] | None, jobs: int,
              limits: Limits | None, target: str = "auto",
              meanwhile: Callable[[], None] | None = None) -> list[list[Diagnostic]]:
    """The items in worker processes. A worker that dies (killed) loses only the tasks not finished: each of
    their components runs again alone (all of it, for a world lost), and one whose worker dies again is an
    MV903 on its files. A split component's worlds are merged here, once all are back."""
    global _SHARED
    from .world_items import component_from_worlds

    context, shared = _context()
    workers = min(jobs, len(items))
    costs = [_cost(sources, groups[g]) for g, _world in items]
    tasks = _pack(costs, min(len(items), workers * CHUNKS_PER_WORKER))
    done: list[Any] = [None] * len(items)
    _SHARED = sources
    if shared:
        gc.freeze()  # forked workers must not walk (and so copy) the parent's objects in each collection
    try:
        lost = _in_pool(context, workers, tasks, sources, groups, items, shared, done, project_modules, profile,
                        backends, limits, target, meanwhile)
        retry = sorted({items[n][0] for n in lost})
        results: list[list[Diagnostic] | None] = [None] * len(groups)
        for g in retry:  # each alone, in a fresh worker: a second death names the component
            again: list[Any] = [None]
            if _in_pool(context, 1, [[0]], sources, groups, [(g, None)], shared, again, project_modules, profile,
                        backends, limits, target):
                results[g] = worker_died([sources[i] for i in groups[g]])
            else:
                results[g] = again[0]
        worlds: dict[int, list[Any]] = {}
        for (g, world), result in zip(items, done, strict=True):
            if g in retry:
                continue
            if world is None:
                results[g] = result
            else:
                worlds.setdefault(g, []).append(result)
    finally:
        _SHARED = []
        if shared:
            gc.unfreeze()
    for g, outcomes in worlds.items():  # (the items of a component are in its worlds' order)
        results[g] = component_from_worlds([sources[i] for i in groups[g]], outcomes, profile, limits, target)
    return [r if r is not None else [] for r in results]


def _in_pool(context: Any, workers: int, tasks: list[list[int]], sources: list[frontend.SourceFile],
             groups: list[list[int]], items: list[Item], shared: bool, done: list[Any],
             project_modules: frozenset[str], profile: str, backends: frozenset[str] | None,
             limits: Limits | None, target: str = "auto", meanwhile: Callable[[], None] | None = None) -> list[int]:
    """Run ``tasks`` (lists of indexes into ``items``) into ``done``; the items whose worker died."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    lost: list[int] = []
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = []
        for task in tasks:
            task_items = [(groups[items[n][0]], items[n][1]) for n in task]
            payload = None
            if not shared:  # spawned workers do not share memory: send the bytes
                payload = [[(sources[i].path, sources[i].module, sources[i].is_package, sources[i].data)
                            for i in group] for group, _world in task_items]
            futures.append((task, pool.submit(_run_items, task_items, payload, project_modules, profile,
                                              backends, limits, target)))
        if meanwhile is not None:  # (the workers have their own copies of the trees)
            meanwhile()
        for task, future in futures:
            try:
                results = future.result()
            except BrokenProcessPool:
                lost.extend(task)
                continue
            for n, result in zip(task, results, strict=True):
                done[n] = result
    return lost


def worker_died(sources: list[frontend.SourceFile]) -> list[Diagnostic]:
    """MV903 on a component whose worker process died while analysing it (killed: out of memory, a signal)."""
    from devicelint.rules import rule_by_code

    rule = rule_by_code("MV903")
    assert rule is not None
    path = sources[0].path if sources else "<unknown>"
    return [rule.failed(path, 1, 1, "the process analysing it died "  # type: ignore[attr-defined]
                        "(killed, for example out of memory)")]
