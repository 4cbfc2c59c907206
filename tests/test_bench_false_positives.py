"""The pure parts of bench/false_positives.py on synthetic input: no download, no devicelint run.

Parsing devicelint's JSON output, applying the triage file, the false positives per 50,000 lines and
the selection split of bench/analyzer_speed.py that both benches use (``--select MV2`` before MV2xx exist).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.analyzer_speed import corpus_names, package_of, split_selection, wheel_stem  # noqa: E402
from bench.false_positives import (  # noqa: E402
    apply_triage,
    fp_per_50k,
    parse_diagnostics,
    parse_triage,
    tally,
    triage_table,
)


def finding(filename: str, row: int, code: str | None, severity: str = "error", message: str = "m") -> dict:
    return {"code": code, "name": "x", "message": message, "severity": severity, "filename": filename,
            "location": {"row": row, "column": 4}, "end_location": {"row": row, "column": 9}, "fix": None,
            "url": None, "related": []}


OUTPUT = json.dumps([
    finding("timm/models/vit.py", 120, "MV201", message="moved | twice\nhere"),
    finding("timm/layers/mlp.py", 7, "MV203", severity="warning"),
    finding("timm/layers/mlp.py", 9, None, severity="note"),  # reveal_device: not a finding
    finding("timm/data/loader.py", 30, "MV205"),
])

TRIAGE = """
["timm:timm/models/vit.py:120:MV201"]
verdict = "true-bug"
note = "upstream #1"

["timm:timm/layers/mlp.py:7:MV203"]
verdict = "false-positive"

["timm:timm/gone.py:1:MV201"]
verdict = "false-positive"
note = "fixed"
"""


def test_parse_apply_and_count(tmp_path: Path) -> None:
    root = tmp_path / "src" / "timm-1.0.31"
    diagnostics = parse_diagnostics(OUTPUT, "timm", root, root)
    assert [(d.path, d.line, d.code) for d in diagnostics] == [
        ("timm/data/loader.py", 30, "MV205"), ("timm/layers/mlp.py", 7, "MV203"), ("timm/models/vit.py", 120, "MV201")]
    assert diagnostics[2].key == "timm:timm/models/vit.py:120:MV201"
    assert diagnostics[2].message == "moved | twice here"

    stale = apply_triage(diagnostics, parse_triage(TRIAGE))
    assert stale == ["timm:timm/gone.py:1:MV201"]
    assert [d.verdict for d in diagnostics] == ["untriaged", "false-positive", "true-bug"]
    assert diagnostics[2].note == "upstream #1"

    counts = tally(diagnostics, 100_000)
    assert (counts["true_bugs"], counts["false_positives"], counts["untriaged"]) == (1, 1, 1)
    assert counts["counted_false"] == 2  # the untriaged one counts against the goal
    assert counts["fp_per_50k"] == pytest.approx(1.0) and counts["goal_met"] is True
    assert counts["by_code"] == {"MV201": 1, "MV203": 1, "MV205": 1}
    assert tally(diagnostics, 100_000, measured=False)["fp_per_50k"] is None
    assert "moved \\| twice here" in triage_table(diagnostics)


def test_absolute_paths_are_made_relative(tmp_path: Path) -> None:
    root = tmp_path / "src" / "torchvision-0.29.1"
    output = json.dumps([finding(str(root / "torchvision" / "ops" / "boxes.py"), 3, "MV202")])
    (diagnostic,) = parse_diagnostics(output, "torchvision", root, tmp_path)
    assert diagnostic.key == "torchvision:torchvision/ops/boxes.py:3:MV202"


def test_rates() -> None:
    assert fp_per_50k(0, 1_480_704) == 0
    assert fp_per_50k(3, 150_000) == pytest.approx(1.0)
    assert fp_per_50k(1, 0) is None
    assert tally([], 38_875)["goal_met"] is True


@pytest.mark.parametrize(("text", "error"), [
    ('["timm:a.py:1:MV201"]\nverdict = "maybe"\n', "verdict"),
    ('["timm-a.py"]\nverdict = "true-bug"\n', "corpus:path:line:code"),
    ('["timm:a.py:1:MV201"]\nverdict = "true-bug"\nnotes = "typo"\n', "unknown keys"),
    ("not toml [", "not TOML"),
])
def test_bad_triage_files_are_refused(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_triage(text)


def test_bad_output_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not JSON"):
        parse_diagnostics("devicelint: error", "timm", tmp_path, tmp_path)


def test_selection_and_corpora() -> None:
    codes = ["MV101", "MV102", "MV150", "MV901"]
    assert split_selection("MV2", codes) == ("", ["MV2"])
    assert split_selection("MV1, MV2", codes) == ("MV1", ["MV2"])
    assert split_selection("ALL", codes) == ("ALL", [])
    assert split_selection("MV2", [*codes, "MV201"]) == ("MV2", [])
    assert corpus_names("all") == ["timm", "transformers", "torchvision", "pytorch-lightning"]
    assert corpus_names("torchvision, timm") == ["torchvision", "timm"]
    with pytest.raises(ValueError, match="unknown corpora lightning"):
        corpus_names("timm,lightning")
    assert (package_of("pytorch-lightning"), wheel_stem("pytorch-lightning")) == ("pytorch_lightning",
                                                                                 "pytorch_lightning")
    assert package_of("timm") == "timm"


def test_example_trees_are_named_and_checked(tmp_path: Path) -> None:
    from bench.false_positives import parse_tree

    assert parse_tree(f"examples@77f55b9={tmp_path}") == ("examples", "77f55b9", tmp_path)
    assert parse_tree(f"pyg={tmp_path}") == ("pyg", "-", tmp_path)
    assert parse_tree(str(tmp_path)) == (tmp_path.resolve().name, "-", tmp_path)
    with pytest.raises(ValueError, match="not a directory"):
        parse_tree(f"x={tmp_path / 'absent'}")
    with pytest.raises(ValueError, match="name"):
        parse_tree(f"a:b={tmp_path}")
