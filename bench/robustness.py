"""Robustness of the analyzer on real-world Python: zero tracebacks over the standard library and site-packages.

What it measures
    Runs devicelint's analysis in process, as ``devicelint check --exit-zero --output-format json``
    does (``analyzer.runner.check`` with the default settings, then the JSON formatter), over every
    ``.py`` file of the standard library (``sysconfig.get_paths()["stdlib"]`` without the
    site-packages below it) and of this interpreter's site-packages (``purelib``, and ``platlib``
    when it differs), and counts:

    * files, lines; files analysed (parsed and interpreted) and skipped (the front end's relevance
      check found no mention of runtime_shim: none with ``--force-analyze``);
    * MV901 diagnostics (a file that cannot be decoded or parsed: expected for some test data of
      the standard library, e.g. lib2to3's Python 2 files), and every other diagnostic (these files
      do not use runtime_shim, so any is a false positive);
    * crashes, the goal being 0: an exception escaping the analyzer (it would be a traceback),
      and an ``InternalError`` (the analyzer gave up: ``internal error``, exit status 2), each
      with its file, the exception's first line and the innermost frame in ``analyzer/`` or
      ``rules/``; timeouts (a chunk still running after ``--timeout`` s is interrupted);
    * the time taken.

    By default the relevance skip is disabled (``--force-analyze``, on unless
    ``--no-force-analyze``): the front end skips, unparsed, every file that never mentions
    runtime_shim, which would leave nearly every file here unexamined. The bench sets
    ``Settings(analyze_everything=True)``; with an analyzer without that setting it wraps
    ``analyzer.frontend.relevant`` (the skip predicate the runner calls) to return every file.
    Otherwise the library's defaults apply: no cache, one process (the bench runs the workers).

    Files are analysed in chunks of ``--chunk`` consecutive files of one directory tree (so imports
    inside a package resolve as in a project), chunks spread over ``--jobs`` worker processes, each
    chunk in a thread with a large stack (deep recursion fails as RecursionError, never as a
    segfault). A chunk that raises is analysed again file by file to name the file.

Reproduce
    python bench/robustness.py --json bench-results/robustness.json    # every file, forced analysis
    python bench/robustness.py --quick                                  # the first 300 stdlib files
    python bench/robustness.py --no-force-analyze                       # only the files it would pick itself
    python bench/robustness.py --limit 2000 --jobs 1
    python bench/robustness.py --generated 10000 --json bench-results/robustness-generated.json

Generated programs
    ``--generated N`` analyses N device-heavy programs of ``bench/generated_programs.py`` (seeds from
    ``--seed``, ``--statements`` each) instead, each alone, and reports crashes (an exception or an MV903),
    programs stopped at a work budget, the time per program and the peak of the memory it allocated
    (tracemalloc).

A crash is also an MV903 finding (the analyzer reports a component it failed on and goes on), and a component
stopped at its work budget is counted under "stopped".
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import sys
import sysconfig
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer without installing

from bench.analyzer_speed import count_lines, environment, markdown_table, write_json  # noqa: E402

QUICK_FILES = 300
THREAD_STACK = 512 * 1024 * 1024  # virtual: only the pages touched are committed
ANALYZER_DIRS = tuple(str(ROOT / name) + os.sep for name in ("analyzer", "rules", "runtime_shim"))
SKIP_DIRS = frozenset({"__pycache__"})


class ChunkTimeout(BaseException):
    """Raised inside an analysis thread that ran past its time (not an Exception: the runner must not catch it)."""


# ---------------------------------------------------------------- files


def roots() -> list[tuple[str, Path]]:
    """(label, directory) of the standard library and the site-packages, without overlaps."""
    paths = sysconfig.get_paths()
    found = [("stdlib", Path(paths["stdlib"]))]
    site = [Path(paths["purelib"])]
    if Path(paths["platlib"]).resolve() != site[0].resolve():
        site.append(Path(paths["platlib"]))
    found += [("site-packages", path) for path in site if path.is_dir()]
    return found


def python_files(directory: Path, exclude: set[Path]) -> list[str]:
    """Every ``.py`` file under ``directory``, sorted by path, not descending into ``exclude`` (site-packages)."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and d not in ("site-packages", "dist-packages")
                         and Path(root, d).resolve() not in exclude)
        found.extend(os.path.join(root, f) for f in files if f.endswith(".py"))
    return sorted(found)


def collect(quick: bool, limit: int | None) -> list[tuple[str, str]]:
    """(label, path) of every file to analyse, in order, each once."""
    chosen = roots()[:1] if quick else roots()
    exclude = {path.resolve() for _label, path in chosen[1:]}
    seen: set[str] = set()
    files = []
    for label, directory in chosen:
        for path in python_files(directory, exclude if label == "stdlib" else set()):
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                files.append((label, path))
    if quick:
        limit = min(limit or QUICK_FILES, QUICK_FILES)
    return files[:limit] if limit else files


def chunks(files: list[tuple[str, str]], size: int) -> list[tuple[str, list[str]]]:
    """Consecutive files of one source, ``size`` at a time."""
    found: list[tuple[str, list[str]]] = []
    for label, path in files:
        if found and found[-1][0] == label and len(found[-1][1]) < size:
            found[-1][1].append(path)
        else:
            found.append((label, [path]))
    return found


# ---------------------------------------------------------------- one chunk (in a worker)

_FORCE = True
_CHOSEN: list[int] = []


def init_worker(force: bool) -> None:
    """Import the analyzer and wrap its relevance predicate (counting, and disabling it when ``force``)."""
    global _FORCE
    _FORCE = force
    threading.stack_size(THREAD_STACK)
    from devicelint import frontend

    original = getattr(frontend.relevant, "__wrapped__", frontend.relevant)

    def relevant(files: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        chosen = list(files) if _FORCE else original(files, *args, **kwargs)
        _CHOSEN.append(len(chosen))
        return chosen

    relevant.__wrapped__ = original  # type: ignore[attr-defined]
    frontend.relevant = relevant


def in_thread(fn: Callable[[], Any], timeout: float) -> tuple[str, Any]:
    """("ok", value), ("error", exception), ("timeout", None) or ("hung", None) of ``fn()`` in a big-stack thread."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as error:  # noqa: BLE001 - everything escaping the analyzer is the measurement
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(ChunkTimeout))
        thread.join(30)
        if thread.is_alive():
            return "hung", None
        return "timeout", None
    if "error" in box:
        if isinstance(box["error"], ChunkTimeout):
            return "timeout", None
        return "error", box["error"]
    return "ok", box["value"]


def settings() -> Any:
    """The library's defaults (no cache, one process), every file analysed when forced and the API allows it."""
    from devicelint.settings import Settings

    if _FORCE and "analyze_everything" in getattr(Settings, "__dataclass_fields__", {}):
        return Settings(analyze_everything=True)
    return Settings()  # forced, if at all, by the wrapped frontend.relevant


def analyze(paths: list[str]) -> dict[str, Any]:
    """What ``devicelint check PATHS --exit-zero --output-format json`` computes, in process."""
    from devicelint import output, runner

    _CHOSEN.clear()
    options = settings()
    report = runner.check(paths, options)
    output.FORMATS["json"](report.diagnostics, report.sources)
    mv901 = [(d.file, d.row, " ".join(d.message.split())[:200]) for d in report.diagnostics if d.code == "MV901"]
    others = [(d.code or str(d.severity), d.file, d.row, " ".join(d.message.split())[:200])
              for d in report.diagnostics if d.code not in ("MV901", "MV903")]
    notes = getattr(report, "notes", [])
    traces = {(n.file, n.row): n.message for n in notes if n.name == "analysis-traceback"}
    # MV903: the analyzer failed on a component and said so (the run went on): a crash all the same
    failed = [{"file": d.file, "kind": "MV903", "exception": " ".join(d.message.split())[:300],
               "frame": None, "traceback": traces.get((d.file, d.row), "")[-6000:] or None}
              for d in report.diagnostics if d.code == "MV903"]
    stopped = [(n.file, n.message) for n in notes if n.name == "analysis-budget"]
    chosen = report.files_seen if getattr(options, "analyze_everything", False) else sum(_CHOSEN)
    return {"files": len(paths), "seen": report.files_seen, "chosen": chosen, "analysed": report.files_analyzed,
            "lines": sum(count_lines(s.data) for s in report.sources.values()), "mv901": mv901, "diagnostics": others,
            "failed": failed, "stopped": stopped}


def analyzer_frame(error: BaseException) -> str | None:
    """The innermost frame of the analyzer (analyzer/, rules/, runtime_shim/) in ``error``'s traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if f.filename.startswith(ANALYZER_DIRS)] or frames
    if not inside:
        return None
    frame = inside[-1]
    return f"{os.path.relpath(frame.filename, ROOT)}:{frame.lineno} in {frame.name}"


def describe(error: BaseException) -> dict[str, Any]:
    """An escaped exception: an InternalError is described by its cause (the analyzer's own exception)."""
    from devicelint.runner import InternalError

    internal = isinstance(error, InternalError)
    cause = error
    while cause.__cause__ is not None:  # InternalError ← AnalysisError ← the engine's own exception
        cause = cause.__cause__
    text = str(cause).strip().splitlines()
    return {"kind": "internal error" if internal else "exception",
            "exception": f"{type(cause).__name__}: {text[0] if text else ''}"[:300],
            "frame": analyzer_frame(cause),
            "traceback": "".join(traceback.format_exception(cause))[-6000:]}


def analyze_chunk(label: str, paths: list[str], timeout: float) -> dict[str, Any]:
    """One chunk; on a crash or a timeout, each of its files alone names the culprit."""
    start = time.perf_counter()
    status, value = in_thread(lambda: analyze(paths), timeout)
    result: dict[str, Any] = {"source": label, "paths": paths, "crashes": [], "first": paths[0]}
    if status == "ok":
        result.update(value)
        result["crashes"].extend(result.pop("failed"))
    else:
        result.update(files=len(paths), seen=0, chosen=0, analysed=0, lines=0, mv901=[], diagnostics=[], stopped=[])
        single_timeout = max(30.0, timeout / 4)
        blamed = False
        for path in paths:
            one_status, one = in_thread(lambda p=path: analyze([p]), single_timeout)
            if one_status == "ok":
                for key in ("seen", "chosen", "analysed", "lines"):
                    result[key] += one[key]
                result["mv901"] += one["mv901"]
                result["diagnostics"] += one["diagnostics"]
                result["stopped"] += one["stopped"]
                result["crashes"] += one["failed"]
                continue
            blamed = True
            result["crashes"].append(crash_record(path, one_status, one, single_timeout))
            if one_status == "hung":
                break  # that thread still runs; the rest of the chunk would only queue behind it
        if not blamed:  # fails only together with the other files of the chunk
            record = crash_record(None, status, value, timeout)
            record["files"] = paths
            result["crashes"].append(record)
    result["seconds"] = time.perf_counter() - start
    return result


def crash_record(path: str | None, status: str, error: BaseException | None, timeout: float) -> dict[str, Any]:
    if status == "error" and error is not None:
        return {"file": path, **describe(error)}
    what = "still running, could not be interrupted" if status == "hung" else "interrupted"
    return {"file": path, "kind": "timeout", "exception": f"ran past {timeout:g} s ({what})", "frame": None,
            "traceback": None}


def worker_died(label: str, paths: list[str], error: BaseException) -> dict[str, Any]:
    return {"source": label, "paths": paths, "first": paths[0], "files": len(paths), "seen": 0, "chosen": 0,
            "analysed": 0,
            "lines": 0, "mv901": [], "diagnostics": [], "stopped": [], "seconds": 0.0,
            "crashes": [{"file": None, "files": paths, "kind": "worker died",
                         "exception": f"{type(error).__name__}: {error}"[:300], "frame": None, "traceback": None}]}


# ---------------------------------------------------------------- driving the chunks


def run_all(work: list[tuple[str, list[str]]], jobs: int, force: bool, timeout: float,
            progress: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    if jobs <= 1:
        init_worker(force)
        for label, paths in work:
            results.append(analyze_chunk(label, paths, timeout))
            progress(results[-1])
        return results
    retry: list[tuple[str, list[str]]] = []
    with ProcessPoolExecutor(jobs, initializer=init_worker, initargs=(force,)) as pool:
        pending = {pool.submit(analyze_chunk, label, paths, timeout): (label, paths) for label, paths in work}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                label, paths = pending.pop(future)
                try:
                    results.append(future.result())
                    progress(results[-1])
                except BrokenProcessPool:
                    retry.append((label, paths))
    for label, paths in retry:  # a worker died (a signal): each chunk again, alone, to name it
        with ProcessPoolExecutor(1, initializer=init_worker, initargs=(force,)) as pool:
            try:
                results.append(pool.submit(analyze_chunk, label, paths, timeout).result())
            except BrokenProcessPool as error:
                results.append(worker_died(label, paths, error))
        progress(results[-1])
    return results


# ---------------------------------------------------------------- generated programs


def analyze_generated(seeds: list[int], statements: int, timeout: float) -> list[dict[str, Any]]:
    """In a worker: each seed's program (bench/generated_programs.py) analysed alone, in a big-stack thread:
    its outcome, seconds, and the peak of the memory it allocated (tracemalloc)."""
    import tracemalloc

    from devicelint.runner import check_source

    from bench.generated_programs import generate_seeded

    out = []
    for seed in seeds:
        source = generate_seeded(seed, statements)
        start = time.perf_counter()
        tracemalloc.start()
        status, value = in_thread(lambda text=source, n=seed: check_source(text, f"generated_{n}.py"), timeout)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        record: dict[str, Any] = {"seed": seed, "seconds": time.perf_counter() - start, "peak_bytes": peak,
                                  "lines": source.count("\n"), "crash": None, "stopped": None}
        if status == "ok":
            failed = [d for d in value.diagnostics if d.code == "MV903"]
            notes = getattr(value, "notes", [])
            if failed:
                trace = next((n.message for n in notes if n.name == "analysis-traceback"), "")
                record["crash"] = {"kind": "MV903", "exception": failed[0].message[:300], "traceback": trace[-6000:]}
            record["stopped"] = next((n.message for n in notes if n.name == "analysis-budget"), None)
        elif status == "error":
            record["crash"] = describe(value)
        else:
            record["crash"] = crash_record(None, status, None, timeout)
        out.append(record)
    return out


def init_generated() -> None:
    threading.stack_size(THREAD_STACK)


def run_generated(count: int, seed: int, statements: int, jobs: int,
                  timeout: float) -> tuple[list[dict[str, Any]], float]:
    """``--generated N``: N generated programs (seeds ``seed`` ...), crashes, budget stops, time, peak memory."""
    seeds = list(range(seed, seed + count))
    size = max(1, min(50, count // max(1, jobs * 4)))
    batches = [seeds[i:i + size] for i in range(0, len(seeds), size)]
    print(f"# devicelint robustness: {count} generated programs (seeds {seed}..{seed + count - 1}, "
          f"{statements} statements each), {jobs} job{'s' if jobs != 1 else ''}")
    start = time.perf_counter()
    records: list[dict[str, Any]] = []
    if jobs <= 1:
        init_generated()
        for batch in batches:
            records += analyze_generated(batch, statements, timeout)
    else:
        with ProcessPoolExecutor(jobs, initializer=init_generated) as pool:
            for done in pool.map(analyze_generated, batches, [statements] * len(batches),
                                 [timeout] * len(batches)):
                records += done
    wall = time.perf_counter() - start
    crashes = [r for r in records if r["crash"]]
    stopped = [r for r in records if r["stopped"]]
    seconds = sorted(r["seconds"] for r in records)
    peak = max((r["peak_bytes"] for r in records), default=0)
    print(markdown_table(["programs", "lines", "crashes", "stopped at a budget", "median s", "max s",
                          "peak MiB (max)"],
                         [[len(records), sum(r["lines"] for r in records), len(crashes), len(stopped),
                           f"{seconds[len(seconds) // 2]:.2f}" if seconds else "-",
                           f"{seconds[-1]:.2f}" if seconds else "-", f"{peak / 2 ** 20:.1f}"]]))
    for record in crashes:
        print(f"- seed {record['seed']}: {record['crash']['kind']}: {record['crash']['exception']}")
    for record in stopped:
        print(f"- seed {record['seed']}: {record['stopped']}")
    slowest = sorted(records, key=lambda r: -r["seconds"])[:5]
    print("Slowest: " + "; ".join(f"seed {r['seed']} {r['seconds']:.2f} s" for r in slowest))
    print(f"robustness: {len(records)} generated programs, {len(crashes)} crashes, {len(stopped)} stopped at a "
          f"budget, peak {peak / 2 ** 20:.1f} MiB, in {wall:.0f} s")
    return records, wall


# ---------------------------------------------------------------- report


def totals(results: list[dict[str, Any]], label: str | None) -> dict[str, Any]:
    chosen = [r for r in results if label is None or r["source"] == label]
    crashes = [c for r in chosen for c in r["crashes"]]
    return {"source": label or "total", "files": sum(r["files"] for r in chosen),
            "lines": sum(r["lines"] for r in chosen), "analysed": sum(r["analysed"] for r in chosen),
            "not_discovered": sum(r["files"] - r["seen"] - sum(c["file"] is not None for c in r["crashes"])
                                  for r in chosen),
            "skipped": sum(max(0, r["seen"] - r["chosen"]) for r in chosen),
            "mv901": sum(len(r["mv901"]) for r in chosen), "diagnostics": sum(len(r["diagnostics"]) for r in chosen),
            "crashes": sum(c["kind"] in ("exception", "internal error", "worker died", "MV903") for c in crashes),
            "stopped": sum(len(r.get("stopped", ())) for r in chosen),
            "timeouts": sum(c["kind"] == "timeout" for c in crashes),
            "chunk_seconds": sum(r["seconds"] for r in chosen)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"the standard library only, first {QUICK_FILES} files")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="the first N files only")
    parser.add_argument("--force-analyze", action=argparse.BooleanOptionalAction, default=True,
                        help="analyse every file, not only those mentioning runtime_shim (default: on)")
    parser.add_argument("--chunk", type=int, default=25, help="files per analysis run (default 25)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: all cores; 1: in this process)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per chunk before it is interrupted")
    parser.add_argument("--show", type=int, default=20, help="MV901 files and diagnostics listed (default 20)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--generated", type=int, default=None, metavar="N",
                        help="analyse N generated device-heavy programs instead of the installed files")
    parser.add_argument("--seed", type=int, default=0, help="the first generated program's seed (default 0)")
    parser.add_argument("--statements", type=int, default=40, help="statements per generated program (default 40)")
    args = parser.parse_args(argv)
    if args.chunk < 1:
        parser.error("--chunk must be at least 1")
    try:
        import devicelint.runner  # noqa: F401 - fail here, once, when the analyzer cannot even be imported
    except Exception:  # noqa: BLE001
        print("robustness: the analyzer cannot be imported:\n" + traceback.format_exc(), file=sys.stderr)
        return 2

    if args.generated is not None:
        records, wall = run_generated(args.generated, args.seed, args.statements, args.jobs, args.timeout)
        write_json(args.json, {"benchmark": "robustness-generated", "environment": environment(),
                               "seed": args.seed, "statements": args.statements, "jobs": args.jobs, "wall_s": wall,
                               "programs": records})
        return 1 if any(r["crash"] for r in records) else 0

    files = collect(args.quick, args.limit)
    work = chunks(files, args.chunk)
    sources = ", ".join(f"{label}: {path}" for label, path in (roots()[:1] if args.quick else roots()))
    mode = ("relevance skip disabled (--force-analyze): every file parsed and interpreted" if args.force_analyze
            else "relevance skip on: only files mentioning runtime_shim are parsed")
    print("# devicelint robustness: the analyzer in process over real-world Python")
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs; {sources}")
    print(f"{len(files)} files{' (--quick)' if args.quick else ''}; {mode}; "
          f"chunks of {args.chunk} files, {args.jobs} job{'s' if args.jobs != 1 else ''}")

    start = time.perf_counter()
    state = {"files": 0, "crashes": 0, "next": 0.0}

    def progress(result: dict[str, Any]) -> None:
        state["files"] += result["files"]
        state["crashes"] += len(result["crashes"])
        for crash in result["crashes"]:
            print(f"  CRASH {crash['file'] or crash.get('files')}: {crash['exception']} [{crash['frame']}]",
                  file=sys.stderr)
        if state["files"] / len(files) >= state["next"] or state["files"] == len(files):
            state["next"] += 0.05
            print(f"  {state['files']}/{len(files)} files, {state['crashes']} crashes, "
                  f"{time.perf_counter() - start:.0f} s", file=sys.stderr)

    results = run_all(work, args.jobs, args.force_analyze, args.timeout, progress)
    wall = time.perf_counter() - start
    order = {item: index for index, item in enumerate(files)}
    results.sort(key=lambda r: order[(r["source"], r["first"])])
    labels = list(dict.fromkeys(label for label, _ in files))
    rows = [totals(results, label) for label in labels] + ([totals(results, None)] if len(labels) > 1 else [])
    crashes = [dict(c, source=r["source"]) for r in results for c in r["crashes"]]
    mv901 = [m for r in results for m in r["mv901"]]
    diagnostics = [d for r in results for d in r["diagnostics"]]

    print()
    print(markdown_table(
        ["source", "files", "lines", "analysed", "skipped (no runtime_shim)", "MV901", "other diagnostics",
         "crashes", "timeouts", "chunk s"],
        [[r["source"], r["files"], r["lines"], r["analysed"], r["skipped"], r["mv901"], r["diagnostics"],
          r["crashes"], r["timeouts"], f"{r['chunk_seconds']:.1f}"] for r in rows]))
    print()
    total = rows[-1]
    if total["not_discovered"]:
        print(f"{total['not_discovered']} files given explicitly were not analysed at all (discovery dropped them)")
    if crashes:
        print(f"Crashes ({len(crashes)}):")
        for crash in crashes:
            where = crash["file"] or f"{len(crash.get('files', []))} files together, from {crash['files'][0]}"
            print(f"- {where}: {crash['kind']}: {crash['exception']} [{crash['frame']}]")
        print()
    if mv901:
        print(f"MV901 ({len(mv901)}{f', first {args.show}' if len(mv901) > args.show else ''}):")
        for file, row, message in mv901[: args.show]:
            print(f"- {file}:{row}: {message}")
        print()
    if diagnostics:
        codes = Counter(code for code, *_ in diagnostics)
        print(f"Other diagnostics ({len(diagnostics)}: {dict(sorted(codes.items()))}"
              f"{f', first {args.show}' if len(diagnostics) > args.show else ''}):")
        for code, file, row, message in diagnostics[: args.show]:
            print(f"- {file}:{row}: {code} {message}")
        print()
    slowest = sorted(results, key=lambda r: -r["seconds"])[:5]
    print("Slowest chunks: " + "; ".join(f"{r['first']} (+{r['files'] - 1}) {r['seconds']:.1f} s" for r in slowest))
    text = (f"robustness: {total['files']} files ({total['lines']} lines), {total['analysed']} analysed, "
            f"{total['skipped']} skipped, {total['mv901']} MV901, {total['diagnostics']} other diagnostics, "
            f"{total['crashes']} crashes, {total['timeouts']} timeouts in {wall:.0f} s "
            f"({'forced analysis' if args.force_analyze else 'relevance skip on'})")
    print(text)
    write_json(args.json, {"benchmark": "robustness", "environment": environment(),
                           "roots": {label: str(path) for label, path in roots()}, "quick": args.quick,
                           "limit": args.limit, "force_analyze": args.force_analyze, "chunk": args.chunk,
                           "jobs": args.jobs, "wall_s": wall, "rows": rows, "crashes": crashes,
                           "mv901": [{"file": f, "row": r, "message": m} for f, r, m in mv901],
                           "diagnostics": [{"code": c, "file": f, "row": r, "message": m}
                                           for c, f, r, m in diagnostics],
                           "slowest_chunks": [{"first": r["first"], "files": r["files"], "seconds": r["seconds"]}
                                              for r in slowest],
                           "summary": text})
    return 1 if total["crashes"] or total["timeouts"] else 0


if __name__ == "__main__":
    sys.exit(main())
