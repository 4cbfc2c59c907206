"""Smoke tests of bench/: each benchmark runs in --quick mode on the CPU, exits 0 and prints its table.

They keep the scripts from rotting as runtime_shim changes; the numbers themselves are not checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.tools import tool

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("script", "args", "row"),
    [
        ("move_bandwidth.py", ["--quick", "--max-mb", "1"], "| numpy→host | 1 |"),
        ("move_bandwidth.py", ["--quick", "--sizes", "2", "--stager", "threads=2,buffers=3,piece_kb=512"],
         "| host→numpy | 2 |"),
        ("host_copy.py", ["--mb", "4", "--repeats", "1"], "| 16 |"),
        ("dispatch_overhead.py", ["--quick"], "| Autodiff(Cpu) | to_device |"),
        ("dispatch_overhead.py", ["--quick", "--virtual"], "| Cuda(0) virtual | add |"),
        ("checkpointing_memory.py", ["--quick"], "| Flex | residual | Balanced |"),
        ("burn_next_gradcheck.py", ["--quick"], "| Flex → Cpu → LibTorch(Cpu) | Balanced/Balanced/Balanced |"),
        ("burn_next_gradcheck.py", ["--quick", "--virtual"], "| Flex → Cuda(0) → LibTorch(Cuda(0)) (virtual) |"),
    ],
)
def test_quick_run_prints_its_table(script: str, args: list[str], row: str, tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "RUNTIME_SHIM_RECORD"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args, "--json", str(result)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| --- |" in done.stdout and row in done.stdout, done.stdout
    payload = json.loads(result.read_text(encoding="utf-8"))
    assert payload["summary"] in done.stdout
    assert payload["rows"]


@pytest.mark.parametrize("args", [["--stager", "threads=two"], ["--stager", "colour=3"], ["--sizes", "64,big"]])
def test_move_bandwidth_rejects_bad_settings_clearly(args: list[str]) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "move_bandwidth.py"), "--quick", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and ("--stager" in done.stderr or "--sizes" in done.stderr), done.stderr


def test_run_all_is_valid_bash() -> None:
    subprocess.run([tool("bash"), "-n", str(ROOT / "bench" / "run_all.sh")], check=True)


def test_dispatch_overhead_measures_a_base_checkout_beside_this_one(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "dispatch_overhead.py"), "--quick", "--base", str(ROOT),
                           "--json", str(result)], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| base µs |" in done.stdout and "; base tree: " in done.stdout, done.stdout
    rows = json.loads(result.read_text(encoding="utf-8"))["rows"]
    assert {r["route"] for r in rows} >= {"Cpu", "Flex", "Autodiff(Cpu)"}
    assert all(r["base_us"] > 0 and "base_added_us" in r for r in rows)


def test_dispatch_overhead_rejects_a_base_without_runtime_shim(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "dispatch_overhead.py"), "--quick", "--base",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "no runtime_shim/__init__.py" in done.stderr, done.stderr
