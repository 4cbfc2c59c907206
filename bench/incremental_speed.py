"""Incremental runs on a corpus after a one-file edit, as ratios to ruff's cold run, all in one process run.

What it measures (``python bench/analyzer_speed.py --incremental``, the corpora and helpers of
:mod:`bench.analyzer_speed`), on a copy of each corpus's package in a scratch directory, median of
``--repeats`` runs of each (interleaved where they do not depend on each other):

* ruff cold: ``ruff check --no-cache --isolated --exit-zero -q PKG``;
* devicelint cold: ``python -m devicelint check PKG --no-cache`` (the flags of analyzer_speed's runs);
* devicelint warm, no change: the same with ``--cache-dir`` (filled by one untimed run first);
* after a comment appended to the edited file (:data:`EDITED`, a new comment each repeat);
* after a statement inserted into a function body of that file (``_bench_edit = N`` as the first
  statement of :data:`EDITED_FUNCTION`, a new ``N`` each repeat);
* a pre-commit style run naming only that file (``check PKG/<EDITED>``, the same cache), after a comment
  appended to it, and after a body edit.

Each edit is undone after its timed run, and one untimed run brings the cache back to the unedited corpus,
so every repeat starts from the same state. Paths are relative to the scratch directory (the working
directory of every run), as in a project's CI.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

EDITED = {"transformers": "models/bert/modeling_bert.py", "timm": "models/resnet.py",
          "torchvision": "models/resnet.py", "pytorch-lightning": "trainer/trainer.py"}
EDITED_FUNCTION = {"transformers": "forward", "timm": "forward", "torchvision": "forward",
                   "pytorch-lightning": "fit"}


def _body_edit(text: str, function: str, n: int) -> str:
    """``_bench_edit = n`` as the first statement of the first function named ``function`` with a body
    of its own (after its docstring)."""
    import ast

    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            body = node.body
            first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) else body[0]
            lines = text.splitlines(keepends=True)
            lines.insert(first.lineno - 1, " " * first.col_offset + f"_bench_edit = {n}\n")
            return "".join(lines)
    raise ValueError(f"no function {function!r} to edit")


def measure_incremental(name: str, package_dir: Path, repeats: int, check_flags: list[str],
                        timeout: float, edited_file: str | None = None, function: str | None = None) -> dict[str, Any]:
    """The runs above on a copy of ``package_dir``; ``edited_file`` (relative to it) and ``function``
    default to the corpus's own (:data:`EDITED`, :data:`EDITED_FUNCTION`)."""
    from bench.analyzer_speed import devicelint_env, ruff_binary, run_command

    scratch = Path(tempfile.mkdtemp(prefix="devicelint-incremental-"))
    try:
        package = package_dir.name
        shutil.copytree(package_dir, scratch / package)
        relative = edited_file or EDITED[name]
        function = function or EDITED_FUNCTION[name]
        edited = scratch / package / relative
        original = edited.read_bytes()
        env = devicelint_env()
        cache = str(scratch / "cache")
        check = [sys.executable, "-m", "devicelint", "check", *check_flags]
        ruff = ruff_binary()
        commands = {
            "ruff_cold": [*ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q", package] if ruff else None,
            "cold": [*check, package, "--no-cache"],
            "warm": [*check, package, "--cache-dir", cache],
            "file": [*check, f"{package}/{relative}", "--cache-dir", cache],
        }

        def run(key: str) -> float:
            command = commands[key]
            assert command is not None
            done = run_command(command, scratch, timeout, False, env)
            if not done.ok:
                raise RuntimeError(f"{' '.join(command)} failed: {done.error}")
            return done.seconds

        def comment(n: int) -> None:
            edited.write_bytes(original + f"# bench edit {n}\n".encode())

        def body(n: int) -> None:
            edited.write_text(_body_edit(original.decode("utf-8"), function, n), encoding="utf-8")

        def after(edit: Callable[[int], None], key: str, n: int) -> float:
            edit(n)
            try:
                return run(key)
            finally:
                edited.write_bytes(original)
                run("warm")  # (untimed) the cache back to the unedited corpus

        samples: dict[str, list[float]] = {k: [] for k in
                                           ("ruff_cold", "cold", "warm", "comment", "body", "file_comment",
                                            "file_body")}
        print(f"  {name}: filling the cache", file=sys.stderr)
        run("warm")
        for n in range(repeats):
            print(f"  {name}: round {n + 1}/{repeats}", file=sys.stderr)
            if commands["ruff_cold"] is not None:
                samples["ruff_cold"].append(run("ruff_cold"))
            samples["cold"].append(run("cold"))
            samples["warm"].append(run("warm"))
            samples["comment"].append(after(comment, "warm", 2 * n))
            samples["body"].append(after(body, "warm", 2 * n))
            samples["file_comment"].append(after(comment, "file", 2 * n + 1))
            samples["file_body"].append(after(body, "file", 2 * n + 1))
        medians = {k: statistics.median(v) if v else None for k, v in samples.items()}
        ruff_s = medians["ruff_cold"]
        return {"corpus": name, "edited": relative, "samples_s": samples, "median_s": medians,
                "vs_ruff": {k: (v / ruff_s if v is not None and ruff_s else None) for k, v in medians.items()}}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


LABELS = (("ruff_cold", "ruff cold"), ("cold", "devicelint cold"), ("warm", "warm, no change"),
          ("comment", "comment appended"), ("body", "function body edited"),
          ("file_comment", "pre-commit (the file), comment"), ("file_body", "pre-commit (the file), body edit"))
GOALS = {"warm": 0.5, "comment": 1.0, "body": 1.0, "file_comment": 1.0, "file_body": 1.0}


def report(result: dict[str, Any]) -> str:
    lines = [f"{result['corpus']} (edited: {result['edited']})", "",
             "| run | median | / ruff cold | goal |", "|---|---:|---:|---|"]
    for key, label in LABELS:
        seconds, ratio = result["median_s"][key], result["vs_ruff"][key]
        goal = GOALS.get(key)
        status = "" if goal is None or ratio is None else f"≤ {goal:g}: {'met' if ratio <= goal else '**not met**'}"
        lines.append(f"| {label} | {'n/a' if seconds is None else f'{seconds:.3f} s'} | "
                     f"{'n/a' if ratio is None else f'{ratio:.2f}'} | {status} |")
    return "\n".join(lines)
