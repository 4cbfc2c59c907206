"""Smoke tests of the analyzer benchmarks: each runs in --quick mode (offline, seconds), exits 0 and prints its table.

They keep bench/analyzer_speed.py and bench/robustness.py from rotting as the analyzer changes;
of the numbers only the robustness run's crash count (0) is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_bench(script: str, args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    result = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "RUNTIME_SHIM_RECORD"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args, "--json", str(result)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| --- |" in done.stdout, done.stdout
    payload = json.loads(result.read_text(encoding="utf-8"))
    assert payload["summary"] in done.stdout
    return done, payload


def test_analyzer_speed_quick(tmp_path: Path) -> None:
    done, payload = run_bench("analyzer_speed.py", ["--quick", "--repeats", "1"], tmp_path)
    assert "| runtime_shim (local) |" in done.stdout
    (row,) = payload["rows"]
    assert row["files"] > 0 and row["lines"] > 0
    cold = row["results"]["devicelint_cold"]
    assert cold["ok"], cold["error"]
    assert cold["diagnostics"]["count"] is not None
    assert row["ratios"]["ast_parse_vs_cold"] is not None
    if not payload["devicelint_has_cache"]:
        assert "warm: not available (no cache yet)" in done.stdout


def test_robustness_quick_has_no_crash(tmp_path: Path) -> None:
    done, payload = run_bench("robustness.py", ["--quick", "--force-analyze"], tmp_path)
    assert "| stdlib |" in done.stdout
    (row,) = payload["rows"]
    assert row["files"] == 300 and row["skipped"] == 0
    assert row["analysed"] + row["mv901"] == row["files"]
    assert payload["crashes"] == [], payload["crashes"]
    assert row["timeouts"] == 0


def test_demand_estimate_on_the_torch_fixtures() -> None:
    """bench/demand_estimate.py on a directory (the corpora are downloaded by the speed bench, not in CI)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "demand_estimate.py"), "--engine",
                           "--directory", str(ROOT / "fixtures" / "torch")], capture_output=True, text=True,
                          timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    counts = done.stdout.split("functions; with a device source ")[1]
    sources, closure = (int(part.split(" ", 1)[0].replace(",", "")) for part in counts.split("name closure "))
    assert 0 < sources <= closure  # the fixtures are programs that move tensors; the closure holds its seeds
    assert "calling contexts," in done.stdout and "with a site fact" in done.stdout
    assert int(done.stdout.split("statements executed")[0].rsplit(" ", 2)[-2].replace(",", "")) > 0


def test_warm_compare_on_the_torch_fixtures() -> None:
    """bench/warm_compare.py times cached runs of checkouts against ruff (here one checkout, one round)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "warm_compare.py"), str(ROOT), "--directory",
                           str(ROOT / "fixtures" / "torch"), "--runs", "1"], capture_output=True, text=True,
                          timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith("torch: ") and "x ruff)" in line and line.count(" ms (") == 2, line


def _bench_table(script: str, *args: str) -> list[list[str]]:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr  # (it exits 1 on any difference)
    rows = [line.strip("|").split("|") for line in done.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in row] for row in rows[1:]]  # (the header left out)


def test_scan_check_finds_no_difference_on_the_analyzer() -> None:
    """bench/scan_check.py: the demand sweep's module scan against a walk of each function (here the analyzer)."""
    ((name, functions, sources, differences, scan, walks),) = _bench_table(
        "scan_check.py", "--directory", str(ROOT / "analyzer"), "--repeats", "1")
    assert name == "analyzer" and int(functions.replace(",", "")) > 500 and int(sources) > 0
    assert differences == "0" and scan.endswith(" ms") and walks.endswith(" ms")


def test_reuse_compare_finds_no_difference_on_the_torch_fixtures() -> None:
    """bench/reuse_compare.py: keeping later passes' runs changes neither diagnostics nor module namespaces."""
    ((name, engines, diagnostics, same, names, differ),) = _bench_table(
        "reuse_compare.py", "--directory", str(ROOT / "fixtures" / "torch"))
    assert name == "torch" and int(engines) > 1 and int(diagnostics) > 0
    assert same == "yes" and int(names.replace(",", "")) > 0 and differ == "0"


def test_function_times_on_the_torch_fixtures() -> None:
    """bench/function_times.py: the engine's runs timed per function and module top level."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "function_times.py"), str(ROOT / "fixtures" / "torch"),
                           "--top", "3"], capture_output=True, text=True, timeout=600, check=True)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("engine runs timed: ") and len(lines) == 4
    assert all(" ms " in line and " runs  " in line for line in lines[1:])


def test_incremental_speed_on_a_fixture_package() -> None:
    """The incremental bench's runs on a small package (offline): every run succeeds and is reported."""
    from bench.analyzer_speed import ruff_binary
    from bench.incremental_speed import LABELS, measure_incremental, report

    result = measure_incremental("trainkit", ROOT / "fixtures" / "trainkit", 1, ["--exit-zero", "-q", "--isolated"],
                                 300, "model.py", "forward")
    expected = {key for key, _label in LABELS} - (set() if ruff_binary() else {"ruff_cold"})
    assert {key for key, value in result["median_s"].items() if value is not None} == expected
    assert "| function body edited |" in report(result)
