"""The SARIF log validates against the official SARIF 2.1.0 schema (tests/data/, see its README) and has
what GitHub code scanning reads: repo-relative URIs, rules with id/shortDescription/fullDescription/
help/helpUri, relatedLocations, partialFingerprints; fixes as SARIF fixes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from devicelint.cli import main

from bench.tools import tool

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"

PROGRAM = """\
from runtime_shim import Device, Tensor

w\u00e9ights = Tensor.random([2], Device.flex().autodiff())
w\u00e9ights.to_device(Device.ndarray())
"""
ADVISORY = """\
from runtime_shim import Device, Tensor

batch = Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())
"""


def _sarif(capsys: pytest.CaptureFixture, *paths: str) -> dict:
    code = main(["check", "--no-cache", "--output-format", "sarif", *paths])
    assert code == 1
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    subprocess.run([tool("git"), "init", "-q", str(tmp_path)], check=True, capture_output=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(PROGRAM, encoding="utf-8")
    (tmp_path / "pkg" / "data.py").write_text(ADVISORY, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "pkg")  # a subdirectory: URIs stay relative to the repository's root
    return tmp_path


def test_sarif_validates_against_the_official_schema(repo: Path, capsys: pytest.CaptureFixture) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    log = _sarif(capsys, ".")
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    # the validator does catch what it should: a result without its message
    broken = json.loads(json.dumps(log))
    del broken["runs"][0]["results"][0]["message"]
    assert not validator.is_valid(broken)


def test_what_github_code_scanning_reads(repo: Path, capsys: pytest.CaptureFixture) -> None:
    run = _sarif(capsys, ".")["runs"][0]
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["id"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"] == f"docs/rules.md#{rule['id'].lower()}-{rule['name']}"  # a relative URI reference
        assert rule["properties"]["precision"] == "high"
        assert rule["properties"]["problem.severity"] in ("error", "warning", "recommendation")
    results = {r["ruleId"]: r for r in run["results"]}
    mv102, mv150 = results["MV102"], results["MV150"]
    location = mv102["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    assert location["region"] == {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 36}
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in mv102["relatedLocations"]] == ["pkg/train.py"] * 2
    assert mv102["partialFingerprints"]["devicelint/v1"] != mv150["partialFingerprints"]["devicelint/v1"]
    # fixes: one change per artifact, regions in characters (the é counts once: columnKind)
    [fix] = mv102["fixes"]
    assert fix["artifactChanges"][0]["artifactLocation"]["uri"] == "pkg/train.py"
    assert fix["artifactChanges"][0]["replacements"] == [
        {"deletedRegion": {"startLine": 4, "startColumn": 8, "endLine": 4, "endColumn": 8},
         "insertedContent": {"text": ".inner()"}}]
    assert mv150["fixes"][0]["description"]["text"].endswith("(unsafe)")


def test_github_annotations_use_repository_paths(repo: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["check", "--no-cache", "--output-format", "github", "train.py"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("::error title=devicelint (MV102),file=pkg/train.py,line=4,col=1,endLine=4,endColumn=36::"
                          "MV102 Cannot move between autodiff and non-autodiff instances.")
    os.chdir(repo)
    main(["check", "--no-cache", "--output-format", "github", "pkg/train.py"])
    assert "file=pkg/train.py," in capsys.readouterr().out
