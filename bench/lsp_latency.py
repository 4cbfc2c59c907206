"""LSP latency: from ``didChange`` to ``publishDiagnostics`` of ``devicelint lsp``, on 1,000- and 5,000-line files.

What it measures
    The real server (``python -m devicelint lsp``, a subprocess) driven over stdio by pygls'
    client. Per file size: one document of realistic runtime_shim code, generated from the
    spec's fixtures (each standalone fixture's body becomes a function, called under
    ``try``, imports hoisted; cut to the size asked), opened, then ``--edits`` edits (an
    incremental change rewriting the first line, a comment: each is a new version the
    server re-analyses in full). Latency is ``time.perf_counter`` from sending the
    ``didChange`` to receiving the ``publishDiagnostics`` of that version; median and p95
    over the edits, after ``--warmup`` untimed ones. The debounce is set to 0 for the
    measurement (``initializationOptions: {"debounceMs": 0}``): the figure is the
    server's work plus the protocol, not the configured quiet period (200 ms by default)
    an editor adds on top while the user types.

    Baselines, same run, same text: the analysis the server does per edit, in this
    process (:meth:`analyzer.projects.Project.analyze`: discovery, relevance, imports,
    the engine and the rules; hover states and fixes are a separate run made on request),
    its CPU time (``time.process_time``: what other load on the machine does not inflate),
    and ``ast.parse`` of the text.

    Goal: p95 < 100 ms at 1,000 lines. ``--quick`` (a 200-line file, 8 edits) is what the
    smoke test runs.

Reproduce
    python bench/lsp_latency.py --json bench-results/lsp_latency.json
    python bench/lsp_latency.py --quick
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import gc
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/lsp_latency.py` from anywhere
    sys.path.insert(0, str(ROOT))

from bench.report import markdown_table, write_json  # noqa: E402

FIXTURES = ROOT / "fixtures"
STANDALONE = {"runtime_shim", "typing", "dataclasses", "functools", "itertools", "contextlib", "collections", "math"}
GOAL_MS = 100.0
GOAL_LINES = 1000


# ---------------------------------------------------------------- the document


def _fixture_cases() -> list[tuple[list[str], str]]:
    """(import lines, body) of every fixture that imports nothing but runtime_shim and the stdlib."""
    cases = []
    for path in sorted(FIXTURES.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        if any(isinstance(node, ast.Global | ast.Nonlocal) for node in ast.walk(tree)):
            continue
        imports, body, foreign = [], [], False
        for node in tree.body:
            segment = ast.get_source_segment(text, node) or ""
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                    continue
                foreign |= bool(getattr(node, "level", 0)) or any(n.split(".")[0] not in STANDALONE for n in names)
                imports.append(segment)
            else:
                body.append(segment)
        if not foreign and body:
            cases.append((imports, "\n".join(body)))
    return cases


def document(lines: int) -> str:
    """About ``lines`` lines of runtime_shim code: fixture bodies as functions, each called under ``try``."""
    cases = _fixture_cases()
    if not cases:
        raise RuntimeError(f"no standalone fixtures under {FIXTURES}")
    imports: list[str] = []
    functions: list[str] = []
    calls: list[str] = []
    size = 2
    n = 0
    while size < lines:
        case_imports, body = cases[n % len(cases)]
        imports.extend(i for i in case_imports if i not in imports)
        function = f"def case_{n}():\n" + "\n".join("    " + line if line.strip() else "" for line in
                                                   body.splitlines()) + "\n    return None\n"
        call = f"try:\n    case_{n}()\nexcept Exception:\n    pass\n"
        functions.append(function)
        calls.append(call)
        size = 2 + len(imports) + sum(f.count("\n") + 1 for f in functions) + sum(c.count("\n") for c in calls)
        n += 1
    text = "# edit 0\n" + "\n".join(imports) + "\n\n" + "\n".join(functions) + "\n" + "".join(calls)
    ast.parse(text)  # the bench measures valid code
    return text


# ---------------------------------------------------------------- driving the server


async def measure_lsp(text: str, path: Path, edits: int, warmup: int) -> dict[str, Any]:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("devicelint-bench", "1")
    waiting: dict[int, asyncio.Future] = {}
    loop = asyncio.get_running_loop()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        future = waiting.pop(params.version, None) if params.version is not None else None
        if future is not None and not future.done():
            future.set_result((time.perf_counter(), len(params.diagnostics)))

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def shown(params: types.ShowMessageParams) -> None:
        for future in waiting.values():
            if not future.done():
                future.set_exception(RuntimeError(f"the server reported: {params.message}"))

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    await client.start_io(sys.executable, "-m", "devicelint", "lsp", env=env)
    try:
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=path.parent.as_uri(),
            initialization_options={"debounceMs": 0}))
        client.initialized(types.InitializedParams())
        uri = path.as_uri()
        waiting[1] = loop.create_future()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        _, count = await asyncio.wait_for(waiting[1], 300)
        first_line = len(text.split("\n", 1)[0])
        samples = []
        for i in range(warmup + edits):
            version = i + 2
            future = waiting[version] = loop.create_future()
            start = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(0, first_line)),
                    text=f"# edit {version}")]))
            first_line = len(f"# edit {version}")
            end, count = await asyncio.wait_for(future, 300)
            if i >= warmup:
                samples.append((end - start) * 1000)
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
    return {"samples_ms": samples, "diagnostics": count}


def measure_in_process(text: str, path: Path, repeats: int) -> dict[str, list[float]]:
    from devicelint import config
    from devicelint.lsp.options import ClientOptions, build_settings
    from devicelint.projects import Project

    project = Project(str(path.parent), build_settings(config.Config(None, str(path.parent), {}), ClientOptions()))
    analysis, cpu, parse = [], [], []
    gc.set_threshold(100_000, 50, 100)  # as the server does (analyzer.lsp.main)
    project.analyze([str(path)], {str(path): text})  # warm: imports, rules
    for i in range(repeats):
        edited = f"# edit {i}\n" + text.split("\n", 1)[1]
        start, start_cpu = time.perf_counter(), time.process_time()
        gc.disable()  # as the server does while it analyses (analyzer.lsp.server.gc_paused)
        try:
            project.analyze([str(path)], {str(path): edited})
        finally:
            gc.enable()
        analysis.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)  # what a busy machine does not inflate
        start = time.perf_counter()
        ast.parse(edited)
        parse.append((time.perf_counter() - start) * 1000)
    return {"analysis_ms": analysis, "analysis_cpu_ms": cpu, "ast_parse_ms": parse}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]  # nearest rank


def summarize(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "p95": percentile(values, 95)}


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000", help="document sizes in lines (default 1000,5000)")
    parser.add_argument("--edits", type=int, default=50, help="timed edits per size (default 50)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed edits first (default 3)")
    parser.add_argument("--quick", action="store_true", help="a 200-line document, 8 edits (the smoke test)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    sizes = [200] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    edits = 8 if args.quick else args.edits
    if edits < 1 or any(size < 10 for size in sizes):
        parser.error("--edits must be at least 1 and sizes at least 10 lines")

    print("# devicelint LSP latency: didChange → publishDiagnostics (debounce 0), same run baselines")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
          + (f" (load average {load:.2f} at the start)" if load is not None else "")
          + f"; {edits} edits per size after {args.warmup} untimed; baselines: the server's analysis in this "
            "process, ast.parse")
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="devicelint-lsp-bench-"))
    try:
        for size in sizes:
            text = document(size)
            path = scratch / f"doc_{size}" / "model.py"
            path.parent.mkdir()
            path.write_text(text, encoding="utf-8")
            lsp = asyncio.run(measure_lsp(text, path, edits, args.warmup))
            local = measure_in_process(text, path, edits)
            rows.append({"lines": text.count("\n"), "target_lines": size, "diagnostics": lsp["diagnostics"],
                         "lsp_ms": summarize(lsp["samples_ms"]), "analysis_ms": summarize(local["analysis_ms"]),
                         "analysis_cpu_ms": summarize(local["analysis_cpu_ms"]),
                         "ast_parse_ms": summarize(local["ast_parse_ms"]), "samples_ms": lsp["samples_ms"]})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(markdown_table(
        ["lines", "diagnostics", "LSP median ms", "LSP p95 ms", "analysis median ms", "analysis p95 ms",
         "analysis CPU median ms", "ast.parse median ms"],
        [[r["lines"], r["diagnostics"], f"{r['lsp_ms']['median']:.1f}", f"{r['lsp_ms']['p95']:.1f}",
          f"{r['analysis_ms']['median']:.1f}", f"{r['analysis_ms']['p95']:.1f}",
          f"{r['analysis_cpu_ms']['median']:.1f}", f"{r['ast_parse_ms']['median']:.2f}"] for r in rows]))
    print()
    parts = []
    for r in rows:
        part = f"{r['lines']} lines: p95 {r['lsp_ms']['p95']:.1f} ms (median {r['lsp_ms']['median']:.1f})"
        if r["target_lines"] == GOAL_LINES:
            part += f", goal p95 < {GOAL_MS:g} ms {'met' if r['lsp_ms']['p95'] < GOAL_MS else 'not met'}"
        parts.append(part)
    text = "lsp latency: " + "; ".join(parts)
    print(text)
    write_json(args.json, {"benchmark": "lsp_latency", "python": platform.python_version(),
                           "cpu_count": os.cpu_count(), "load_average": load, "edits": edits, "warmup": args.warmup,
                           "debounce_ms": 0, "rows": rows, "summary": text})
    return 0


if __name__ == "__main__":
    sys.exit(main())
