"""One analysis run: files → facts (front end + engine) → diagnostics (rules) → suppressions.

This is the library entry point (the CLI is a thin layer over :func:`check`):

1. discovery (:mod:`analyzer.discovery`: excludes, ``.gitignore``) and reading the bytes;
2. relevance (:func:`analyzer.frontend.relevant`: files that never mention the analysed
   APIs are not even parsed);
3. per relevant file, its imports and ``noqa`` directives (or its MV901 failure), from the
   cache when the content is unchanged;
4. components (:mod:`analyzer.import_graph`: files connected through imports), each analysed by
   its own engine (:mod:`analyzer.scheduler`), from the cache or in worker processes;
5. rule selection, per-file ignores, ``noqa`` and MV902 (after the cache, so changing them
   reuses every cached result).
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import tokenize
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import discovery, frontend, import_graph, incremental, lazy_bodies, noqa, scheduler
from .diagnostics import FAILS_HERE_TOO, Diagnostic, Related
from .failures import FileFailure
from .notebook import CellMap
from .settings import ALWAYS_REPORTED, Settings

if TYPE_CHECKING:  # the engine's modules stay out of a cached run
    from .cache import Cache
    from .facts import FactStore


class InternalError(Exception):
    """The analyzer itself failed (exit code 2); ``trace``: where (for a bug report)."""

    def __init__(self, message: str, trace: str = "") -> None:
        super().__init__(message)
        self.trace = trace


@dataclass
class Report:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_seen: int = 0
    files_analyzed: int = 0
    facts: FactStore | None = None  # not kept: each component has its own facts
    sources: dict[str, frontend.SourceFile] = field(default_factory=dict)
    components: int = 0
    cache_hits: int = 0  # components read from the cache
    cache_misses: int = 0  # components analysed
    # with Settings.record_expressions: per file, (row, column, end_row, end_column, reveal text) of each
    # name, attribute, call or subscript that holds a tensor or device (1-based, character columns)
    expressions: dict[str, list[tuple[int, int, int, int, str]]] = field(default_factory=dict)
    # the paths whose diagnostics the report holds: every file, or (a run with targets) the members of the
    # components holding the targets and the targets themselves
    covered: frozenset[str] | None = None
    # files left out (not regular, over `max-file-size`): (path, why), shown as notes
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # components whose analysis stopped at a work budget (their files' findings are unknown) and the tracebacks
    # of MV903 findings: shown by ``check --verbose``, counted in the JSON statistics
    notes: list[Diagnostic] = field(default_factory=list)

    @property
    def findings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_finding]


def check(paths: list[str], settings: Settings | None = None, stdin: tuple[str, bytes] | None = None) -> Report:
    """Analyse ``paths`` (files and directories) and, optionally, one file read from stdin."""
    settings = (settings or Settings()).validate()
    skipped: list[tuple[str, str]] = []
    files = discovery.discover(paths, settings.discovery, skipped)
    stdin_name = None
    if stdin is not None:
        stdin_path = os.path.abspath(stdin[0])
        files = [f for f in files if os.path.abspath(f) != stdin_path]
        if settings.discovery.force_exclude and discovery.is_force_excluded(stdin[0], settings.discovery):
            stdin = None  # --force-exclude applies to --stdin-filename too
        else:
            stdin_name = stdin[0]
    sources = frontend.load(files, stdin, settings.max_file_size or None, skipped)
    report = analyze_project(sources, settings, stdin_name=stdin_name)
    report.skipped = skipped
    return report


def check_source(text: str, filename: str = "<stdin>.py", settings: Settings | None = None) -> Report:
    """Analyse one program given as text (tests, docs, editors)."""
    return check([], settings, stdin=(filename, text.encode("utf-8")))


def analyze_project(sources: list[frontend.SourceFile], settings: Settings, *,
                    stdin_name: str | None = None, project_modules: frozenset[str] | None = None,
                    fixes: bool = True, targets: Collection[str] | None = None,
                    file_info: Callable[[frontend.SourceFile], import_graph.FileInfo] | None = None,
                    unsaved: frozenset[str] = frozenset()) -> Report:
    """Analyse ``sources``; ``project_modules`` (default: the sources' modules) names every module of the
    project; ``fixes=False`` attaches no fixes (an editor builds them only when it asks for code actions).

    ``targets`` (absolute paths; None: every file) analyses only the components (files connected through
    imports) holding them, chosen from the whole project exactly as a run over every file chooses them, so
    a target's diagnostics are the ones that run gives it (file runs, editors); ``Report.covered`` lists the
    paths whose diagnostics the report holds. ``file_info`` (default: parse, or the cache) gives a file's
    imports and directives (an editor remembers them per buffer). ``unsaved`` (like ``stdin_name``) names
    files whose contents are not on disk: they are not cached."""
    from .cache import Cache

    wanted = None if targets is None else frozenset(os.path.abspath(t) for t in targets)

    report = Report(files_seen=len(sources), sources={s.path: s for s in sources})
    chosen = sources if settings.analyze_everything else frontend.relevant(sources, settings.torch_rules())
    if project_modules is None:
        project_modules = frozenset(s.module for s in sources)
    engine_key = settings.engine_key()
    # expression states are not cached: they are asked for one buffer at a time (editors)
    cache = Cache(settings.cache_dir, engine_key) if settings.cache_dir and not settings.record_expressions \
        and fixes else None

    # a large project's trees keep their functions' bodies unparsed until the engine reads them (lazy_bodies);
    # an editor's passes (no fixes, expression states) keep whole trees. Decided at the first file parsed here
    # (a run whose files all come from the cache imports no engine)
    lazy: bool | None = None
    failures: list[FileFailure] = []
    parsed: list[frontend.SourceFile] = []
    infos: list[import_graph.FileInfo] = []
    digests: list[str] = []
    for source in chosen:
        targeted = wanted is None or os.path.abspath(source.path) in wanted
        if source.failure is not None:  # could not even be read
            if targeted:
                failures.append(source.failure)
            continue
        digest = import_graph.digest(source.data)
        kept = cache if source.path != stdin_name and source.path not in unsaved else None
        info = kept.file_info(source.path, digest) if kept is not None else None
        if info is None:
            info = file_info(source) if file_info is not None else import_graph.file_info(source)
            if kept is not None:
                kept.put_file_info(source.path, digest, info)
        if info.failure is not None:
            if targeted:
                failures.append(FileFailure(source.path, *info.failure))
            continue
        if lazy is not False and source.scan is None and lazy_bodies.eligible(source):
            if lazy is None:
                from .engine.demand import DEMAND_SWEEP_MIN_FILES

                lazy = fixes and not settings.record_expressions and len(chosen) > DEMAND_SWEEP_MIN_FILES
            if lazy:
                _make_lazy(source, cache is not None)
        parsed.append(source)
        infos.append(info)
        digests.append(digest)
    report.files_analyzed = len(parsed)

    groups = None
    if cache is not None:  # the split depends only on the files and the project's modules: cached too
        split = [(s.path, _key_path(s.path), s.module, s.is_package, d) for s, d in zip(parsed, digests, strict=True)]
        grouping = Cache.grouping_key(split, project_modules)

        def imports_key() -> str:  # (an edit that changes no import keeps the split)
            return Cache.imports_key(split, [info.imports for info in infos], project_modules)

        groups = cache.grouping(*grouping, len(parsed), imports_key)
    if groups is None:
        groups = import_graph.components(parsed, infos, project_modules)
        if cache is not None:
            cache.put_grouping(*grouping, groups, imports_key())
    report.components = len(groups)
    covered: set[str] | None = None
    if wanted is not None:
        groups = [g for g in groups if any(os.path.abspath(parsed[i].path) in wanted for i in g)]
        covered = {parsed[i].path for g in groups for i in g}
        covered.update(s.path for s in sources if os.path.abspath(s.path) in wanted)
        report.covered = frozenset(covered)
    results: list[list[Diagnostic] | None] = [None] * len(groups)
    keys: dict[int, tuple[str, str, str]] = {}
    todo: list[int] = []
    names_by_top: dict[str, list[str]] = defaultdict(list)
    for name in _project_names(project_modules):
        names_by_top[name.split(".", 1)[0]].append(name)
    for n, group in enumerate(groups):
        if cache is not None:
            members = [(parsed[i].path, _key_path(parsed[i].path), parsed[i].module, parsed[i].is_package,
                        digests[i]) for i in group]
            tops = import_graph.import_tops([parsed[i] for i in group], [infos[i] for i in group])
            visible = sorted(name for top in tops for name in names_by_top.get(top, ()))
            slot, key, shape = Cache.component_key(engine_key, members, visible)
            hit = cache.component(slot, key)
            unsaved_member = any(parsed[i].path == stdin_name or parsed[i].path in unsaved for i in group)
            if hit is None and not unsaved_member:
                hit = _equivalent_entry(cache, slot, key, shape, [parsed[i] for i in group],
                                        [digests[i] for i in group])
            if hit is not None:
                results[n] = hit
                continue
            if not unsaved_member:
                keys[n] = (slot, key, shape)
        todo.append(n)
    if cache is not None and todo:
        _restore_scans(cache, parsed, digests, [groups[n] for n in todo])
    semantics: dict[int, list[str | None]] = {}

    def take_semantics() -> None:
        """What the analysis reads of each file to be cached, taken before the engine runs on its tree."""
        if cache is not None and not semantics:
            for n in keys:
                semantics[n] = _semantic_digests(cache, *keys[n], [parsed[i] for i in groups[n]],
                                                 [digests[i] for i in groups[n]])
    limits = settings.limits()
    if settings.record_expressions or not fixes:
        take_semantics()
        computed = [scheduler.analyze_component([parsed[i] for i in groups[n]], project_modules,
                                               settings.profile, settings.backends,
                                               expressions=report.expressions if settings.record_expressions
                                               else None, fixes=fixes, limits=limits,
                                               target=settings.target_device) for n in todo]
    else:
        computed = scheduler.run(parsed, [groups[n] for n in todo], project_modules, settings.profile,
                                settings.backends, settings.jobs, limits, settings.target_device, take_semantics)
    take_semantics()
    for n, diagnostics in zip(todo, computed, strict=True):
        notes = [d for d in diagnostics if d.name in scheduler.RUN_NOTES]
        results[n] = [d for d in diagnostics if d.name not in scheduler.RUN_NOTES]
        report.notes.extend(notes)
        # a component stopped by a budget or failed is not cached: another run (more memory, a fixed
        # analyzer) may do better
        stopped = notes or any(d.code == "MV903" for d in diagnostics)
        if cache is not None and n in keys and not stopped:
            slot, key, shape = keys[n]
            rows, fixed = incremental.touched_lines(diagnostics)
            records = [incremental.member_record(parsed[i], digests[i], semantic, rows.get(parsed[i].path))
                       for i, semantic in zip(groups[n], semantics[n], strict=True)]
            cache.put_component(slot, key, diagnostics, shape, records, sorted(fixed))
    if cache is not None:
        for n in todo:  # the scans a run in this process built or extended (a worker's are not seen here)
            for i in groups[n]:
                summary = parsed[i].scan
                if summary is not None:
                    cache.put_scan_summary(digests[i], summary)
        report.cache_hits, report.cache_misses = cache.hits, len(todo)
        cache.save()
    else:
        report.cache_misses = len(todo)

    diagnostics = scheduler.failure_diagnostics(failures)
    for component_diagnostics in results:
        diagnostics.extend(component_diagnostics or ())
    # only the analysed files' directives can be used or unused (MV902)
    directives = {source.path: info.directives for source, info in zip(parsed, infos, strict=True)
                  if covered is None or source.path in covered}
    diagnostics = suppress(diagnostics, settings, directives, report.sources)
    if any(s.cells is not None for s in sources):
        diagnostics = _for_notebooks(diagnostics, {s.path: s for s in sources if s.cells is not None})
    report.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
    for path in {d.file for d in report.diagnostics}:
        shown = report.sources.get(path)
        if shown is not None:
            ensure_lines(shown)
    return report


def _make_lazy(source: frontend.SourceFile, cached: bool) -> None:
    """Read what needs ``source``'s whole tree now (the demand sweep's scan; the semantic digest for the cache),
    then leave its functions' bodies to be parsed when first read."""
    from .engine.demand import summarize

    if cached:
        source.semantic = incremental.semantic_digest(source)
    summarize(source)
    lazy_bodies.strip(source)


def _key_path(path: str) -> str:
    """A file's path in cache keys: as given when relative (the same on every checkout of the project, so a
    cache directory can move between machines), else absolute."""
    return path if not os.path.isabs(path) else os.path.abspath(path)


def _equivalent_entry(cache: Cache, slot: str, key: str, shape: str, sources: list[frontend.SourceFile],
                      digests: list[str]) -> list[Diagnostic] | None:
    """The cached diagnostics of a component whose changed files changed nothing the analysis reads
    (:mod:`analyzer.incremental`), renewed for their new contents; None otherwise."""
    found = cache.component_members(slot, shape)
    if found is None or not incremental.equivalent(*found[:1], sources, digests, found[1]):
        return None
    return cache.renew_component(slot, key, digests)


def _restore_scans(cache: Cache, parsed: list[frontend.SourceFile], digests: list[str],
                   groups: list[list[int]]) -> None:
    """The cached scans (:mod:`analyzer.engine.scan_summary`) of the files of the components to analyse that
    sweep on demand (the others never scan): only their changed files are scanned again."""
    from .engine import demand

    for group in groups:
        if len(group) > demand.DEMAND_SWEEP_MIN_FILES:
            for i in group:
                if parsed[i].scan is None:
                    parsed[i].scan = cache.scan_summary(digests[i])


def _semantic_digests(cache: Cache, slot: str, _key: str, shape: str, sources: list[frontend.SourceFile],
                      digests: list[str]) -> list[str | None]:
    """Each file's semantic digest: the cached one where its content is unchanged, else computed."""
    found = cache.component_members(slot, shape)
    known = {}
    if found is not None and len(found[0]) == len(sources):
        known = {i: record[1] for i, record in enumerate(found[0])
                 if isinstance(record, list) and len(record) == 4 and record[0] == digests[i]}
    return [known[i] if known.get(i) is not None else incremental.semantic_digest(source)
            for i, source in enumerate(sources)]


def _for_notebooks(diagnostics: list[Diagnostic], notebooks: dict[str, frontend.SourceFile]) -> list[Diagnostic]:
    """Notebook findings: no fix (one is never written into a notebook's JSON), and the ``file:row`` places
    their messages name given as ``file:cell N:row`` (the rows themselves are mapped by the output)."""
    out = []
    for d in diagnostics:
        if d.file in notebooks:
            d = dataclasses.replace(d, fix=None, message=_cell_places(d.message, notebooks))
        out.append(d)
    return out


def _cell_places(message: str, notebooks: dict[str, frontend.SourceFile]) -> str:
    for path, source in notebooks.items():
        names = sorted({re.escape(path), re.escape(os.path.basename(path))}, key=len, reverse=True)
        pattern = re.compile(rf"(?<![\w./-])({'|'.join(names)}):(\d+)\b")
        cells = source.cells
        assert cells is not None

        def place(match: re.Match[str], cells: CellMap = cells) -> str:
            cell, row = cells.locate(int(match.group(2)))
            return f"{match.group(1)}:cell {cell}:{row}"

        message = pattern.sub(place, message)
    return message


def _project_names(modules: frozenset[str]) -> list[str]:
    """The project's module names and their package prefixes (what ``Resolver.is_project`` answers)."""
    names: set[str] = set()
    for name in modules:
        parts = name.split(".")
        names.update(".".join(parts[: depth + 1]) for depth in range(len(parts)))
    return sorted(names)


def suppress(diagnostics: list[Diagnostic], settings: Settings, directives: dict[str, list[noqa.Directive]],
             sources: dict[str, frontend.SourceFile]) -> list[Diagnostic]:
    """Rule selection, per-file ignores, ``noqa``, then MV902 for the directives that suppressed nothing.

    ``directives`` holds the directives of the analysed files (the only ones MV902 looks at)."""
    selected: dict[str, bool] = {}
    ignored: dict[tuple[str, str], bool] = {}

    def enabled(code: str) -> bool:
        if code not in selected:
            selected[code] = settings.selects(code)
        return selected[code]

    def per_file(path: str, code: str) -> bool:
        if not settings.per_file_ignores:
            return False
        if (path, code) not in ignored:
            ignored[(path, code)] = settings.ignored_in(path, code)
        return ignored[(path, code)]

    kept = [d for d in diagnostics if not d.is_finding or d.code in ALWAYS_REPORTED
            or (enabled(d.code) and not per_file(d.file, d.code))]
    if not settings.respect_noqa:
        return kept
    parsed: dict[str, noqa.Suppressions] = {path: noqa.Suppressions(list(ds)) for path, ds in directives.items()}
    used: dict[noqa.Directive, set[str]] = defaultdict(set)
    out = []
    released: list[list[Diagnostic]] = []  # what each silenced finding had folded (:func:`_unfold`)

    def silenced(d: Diagnostic) -> bool:
        suppressions = parsed.get(d.file)
        if suppressions is None:  # a file that was not analysed (MV901): read its comments now
            source = sources.get(d.file)
            suppressions = parsed[d.file] = noqa.parse(_decode_lossy(source))
        directive = suppressions.match(d.code, (d.row, d.end_row))
        if directive is not None:
            used[directive].add(d.code)
        return directive is not None

    for d in kept:
        if not d.is_finding or d.code in ALWAYS_REPORTED or not silenced(d):
            out.append(d)
        elif d.folded:
            released.append(d.folded)
    out.extend(_unfold(released, out, lambda d: enabled(d.code) and not per_file(d.file, d.code) and not silenced(d)))
    if not any(directives.values()):  # no directive can be unused (and the rules need not be imported)
        return out
    from devicelint.rules import rule_by_code

    rule = rule_by_code("MV902")
    if rule is None or not enabled(rule.code):
        return out
    for path, file_directives in directives.items():
        if not file_directives or per_file(path, rule.code):
            continue
        if any(x.file_level and x.covers(rule.code) for x in file_directives):
            continue
        for unused in rule.unused(path, file_directives, used, enabled,  # type: ignore[attr-defined]
                                  lambda code: rule_by_code(code) is not None):
            explicit = any(x.row == unused.row and not x.file_level and x.codes and rule.code in x.codes
                           for x in file_directives)
            if not explicit:
                out.append(unused)
    return out


def _unfold(released: list[list[Diagnostic]], reported: list[Diagnostic],
            shown: Callable[[Diagnostic], bool]) -> list[Diagnostic]:
    """The failures folded into findings a ``noqa`` silenced (one root cause, one finding: rules/cascades.py),
    each now reported on its own line: a ``noqa`` silences its line only. Of those one silenced finding had
    folded, the first in source order is the finding and lists the others ("fails here too"); one another
    reported finding still lists stays there."""
    listed = {(r.file, r.row, r.column) for d in reported for r in d.related if r.message.startswith(FAILS_HERE_TOO)}
    seen: set[tuple] = set()
    out: list[Diagnostic] = []
    for folded in released:
        left = []
        for d in sorted(folded, key=Diagnostic.sort_key):
            key = (d.file, d.row, d.column, d.code)
            if key not in seen and (d.file, d.row, d.column) not in listed and shown(d):
                seen.add(key)
                left.append(d)
        if not left:
            continue
        first, *others = left
        notes = [Related(d.file, d.row, d.column, f"{FAILS_HERE_TOO}, over the same tensor") for d in others
                 if (d.file, d.row) != (first.file, first.row)]
        out.append(dataclasses.replace(first, related=sorted(
            [*first.related, *notes], key=lambda r: (r.file, r.row, r.column, r.message)), folded=others))
    return out


def ensure_lines(source: frontend.SourceFile) -> None:
    """Decode a file that was not parsed in this run (its results came from the cache), for the
    output formats that show source lines."""
    if source.lines or source.failure is not None or not source.data:
        return
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(source.data).readline)
        text = source.data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return
    source.lines = text.removeprefix("\ufeff").splitlines()


def _decode_lossy(source: frontend.SourceFile | None) -> str:
    if source is None:
        return ""
    if source.text is not None:
        return source.text
    return source.data.decode("utf-8", errors="replace")
