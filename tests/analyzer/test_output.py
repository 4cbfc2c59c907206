"""Output formats: json, json-lines, github, sarif (structure checked against a subset of the SARIF
2.1.0 schema), --statistics and -o/--output-file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from devicelint.cli import main
from devicelint.rules import all_rules

from bench.tools import tool

REPO = Path(__file__).resolve().parents[2]

FAILING = """\
from runtime_shim import Device, Tensor

weights = Tensor.random([2], Device.flex().autodiff())
weights.to_device(Device.ndarray())
"""

ADVISORY = """\
from runtime_shim import Device, Tensor, reveal_device

Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())
Tensor.ones([2], Device.flex()).to_device(Device.flex().autodiff())
reveal_device(Device.flex())
"""

JSON_KEYS = {"code", "name", "message", "severity", "filename", "location", "end_location", "fix", "url", "related"}


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "failing.py").write_text(FAILING, encoding="utf-8")
    (tmp_path / "src" / "advisory.py").write_text(ADVISORY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_and_json_lines(project: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _err = run(capsys, "check", "--output-format", "json")
    assert code == 1
    items = json.loads(out)
    assert [i["code"] for i in items] == ["MV150", "MV150", None, "MV102"]  # sorted by file, then position
    for item in items:
        assert set(item) == JSON_KEYS
        assert item["location"]["row"] >= 1 and item["location"]["column"] >= 1
    assert items[2]["fix"] is None  # reveal_device
    assert [items[0]["fix"]["applicability"], items[-1]["fix"]["applicability"]] == ["unsafe", "safe"]
    assert items[-1]["fix"] == {"applicability": "safe", "message": "Leave the graph with `.inner()` before the move",
                                "edits": [{"content": ".inner()", "location": {"row": 4, "column": 8},
                                           "end_location": {"row": 4, "column": 8}}]}
    mv102 = items[-1]
    assert mv102["filename"] == os.path.join("src", "failing.py") and mv102["severity"] == "error"
    assert mv102["url"].endswith("#mv102-autodiff-mismatch-move")
    assert items[2]["severity"] == "note" and items[2]["url"] is None  # reveal_device
    code, out, _err = run(capsys, "check", "--output-format", "json-lines")
    lines = out.splitlines()
    assert [json.loads(line) for line in lines] == items
    assert run(capsys, "check", "--output-format", "json", "--select", "MV105", "src/failing.py")[1] == "[]\n"


def test_github_annotations(project: Path, capsys: pytest.CaptureFixture) -> None:
    (project / "src" / "odd, name.py").write_text(FAILING, encoding="utf-8")
    code, out, _err = run(capsys, "check", "--output-format", "github")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("::warning title=devicelint (MV150),file=src/advisory.py,line=3,col=1,endLine=3,")
    assert "::MV150 " in lines[0]
    assert any(line.startswith("::notice title=devicelint (reveal_device),file=src/advisory.py,line=5") for line in
               lines)
    error = [line for line in lines if "failing.py" in line][0]
    assert error.startswith("::error title=devicelint (MV102),file=src/failing.py,line=4,col=1,endLine=4,"
                            "endColumn=36::MV102 Cannot move between autodiff and non-autodiff instances.")
    odd = [line for line in lines if "odd" in line][0]
    assert "file=src/odd%2C name.py," in odd  # properties are escaped
    assert "Found" not in out  # no summary after machine formats


# A subset of the SARIF 2.1.0 schema (https://json.schemastore.org/sarif-2.1.0.json) for what devicelint writes:
# closed objects (additionalProperties: false) so that a misspelt property fails here.
_TEXT = {"type": "object", "required": ["text"], "additionalProperties": False,
         "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}}}
_REGION = {"type": "object", "additionalProperties": False, "required": ["startLine"],
           "properties": {k: {"type": "integer", "minimum": 1} for k in
                          ("startLine", "startColumn", "endLine", "endColumn")}}
_ARTIFACT = {"type": "object", "additionalProperties": False, "required": ["uri"],
             "properties": {"uri": {"type": "string", "format": "uri-reference"}, "uriBaseId": {"type": "string"}}}
_FIX = {"type": "object", "additionalProperties": False, "required": ["description", "artifactChanges"],
        "properties": {"description": _TEXT, "artifactChanges": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["artifactLocation", "replacements"],
            "properties": {"artifactLocation": _ARTIFACT, "replacements": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["deletedRegion", "insertedContent"],
                "properties": {"deletedRegion": _REGION, "insertedContent": {
                    "type": "object", "additionalProperties": False, "required": ["text"],
                    "properties": {"text": {"type": "string"}}}}}}}}}}}
_PHYSICAL = {"type": "object", "additionalProperties": False, "required": ["artifactLocation", "region"],
             "properties": {"artifactLocation": _ARTIFACT, "region": _REGION}}
SARIF_SUBSET = {
    "type": "object", "additionalProperties": False, "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string"}, "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "additionalProperties": False, "required": ["driver"], "properties": {
                    "driver": {"type": "object", "additionalProperties": False, "required": ["name", "rules"],
                               "properties": {
                                   "name": {"type": "string"}, "version": {"type": "string"},
                                   "semanticVersion": {"type": "string"}, "informationUri": {"type": "string"},
                                   "rules": {"type": "array", "items": {
                                       "type": "object", "additionalProperties": False,
                                       "required": ["id", "name", "shortDescription", "fullDescription", "help",
                                                    "helpUri"],
                                       "properties": {
                                           "id": {"type": "string"}, "name": {"type": "string"},
                                           "shortDescription": _TEXT, "fullDescription": _TEXT, "help": _TEXT,
                                           "helpUri": {"type": "string", "pattern": "^docs/rules\\.md#mv\\d{3}-"},
                                           "defaultConfiguration": {
                                               "type": "object", "additionalProperties": False,
                                               "properties": {"level": {"enum": ["none", "note", "warning",
                                                                                  "error"]}}},
                                           "properties": {"type": "object"}}}}}}}},
                "originalUriBaseIds": {"type": "object", "additionalProperties": {
                    "type": "object", "required": ["uri"], "properties": {"uri": {"type": "string",
                                                                                  "pattern": "^file:///.*/$"}}}},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "results": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False,
                    "required": ["ruleId", "level", "message", "locations", "partialFingerprints"],
                    "properties": {
                        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]}, "message": _TEXT,
                        "locations": {"type": "array", "minItems": 1, "items": {
                            "type": "object", "additionalProperties": False, "required": ["physicalLocation"],
                            "properties": {"physicalLocation": _PHYSICAL}}},
                        "relatedLocations": {"type": "array", "items": {
                            "type": "object", "additionalProperties": False,
                            "required": ["id", "physicalLocation", "message"],
                            "properties": {"id": {"type": "integer", "minimum": 0}, "message": _TEXT,
                                           "physicalLocation": _PHYSICAL}}},
                        "fixes": {"type": "array", "items": _FIX},
                        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}}}}}}}},
    },
}


def test_sarif_log(project: Path, capsys: pytest.CaptureFixture) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    subprocess.run([tool("git"), "init", "-q", "."], cwd=project, check=False, capture_output=True)
    (project / "src" / "sub dir").mkdir()
    (project / "src" / "sub dir" / "x.py").write_text(FAILING, encoding="utf-8")
    os.chdir(project / "src")  # the paths are relative to the work tree's root, not to the cwd
    code, out, _err = run(capsys, "check", "--output-format", "sarif", ".")
    assert code == 1
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SUBSET)
    run_ = log["runs"][0]
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    driver = run_["tool"]["driver"]
    assert driver["name"] == "devicelint"
    assert [r["id"] for r in driver["rules"]] == [r.code for r in all_rules()]
    mv102 = next(r for r in driver["rules"] if r["id"] == "MV102")
    assert mv102["name"] == "autodiff-mismatch-move" and "## Example" in mv102["help"]["text"]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path(project).resolve().as_uri() + "/" or \
        run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file://" + str(project) + "/"
    results = run_["results"]
    assert all(r["ruleId"] for r in results)  # reveal_device notes are not results
    by_uri = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in results}
    assert set(by_uri) == {"src/advisory.py", "src/failing.py", "src/sub%20dir/x.py"}
    failing = by_uri["src/failing.py"]
    assert failing["level"] == "error" and failing["ruleIndex"] == driver["rules"].index(mv102)
    assert failing["locations"][0]["physicalLocation"]["region"] == {"startLine": 4, "startColumn": 1,
                                                                      "endLine": 4, "endColumn": 36}
    assert failing["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert sorted(r["physicalLocation"]["region"]["startLine"] for r in failing["relatedLocations"]) == [3, 4]
    assert [r["id"] for r in failing["relatedLocations"]] == list(range(len(failing["relatedLocations"])))
    fingerprints = [r["partialFingerprints"]["devicelint/v1"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)  # the two identical MV150 lines differ by occurrence
    advisory = [r for r in results if r["ruleId"] == "MV150"]
    assert len(advisory) == 2 and all(r["level"] == "warning" for r in advisory)


def test_sarif_fingerprints_survive_moved_lines(project: Path, capsys: pytest.CaptureFixture) -> None:
    before = json.loads(run(capsys, "check", "--output-format", "sarif", "src/failing.py")[1])
    (project / "src" / "failing.py").write_text("# a new first line\n" + FAILING, encoding="utf-8")
    after = json.loads(run(capsys, "check", "--output-format", "sarif", "src/failing.py")[1])
    [b], [a] = before["runs"][0]["results"], after["runs"][0]["results"]
    assert a["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert a["partialFingerprints"] == b["partialFingerprints"]


def test_statistics(project: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, _err = run(capsys, "check", "--statistics")
    assert code == 1
    assert out.splitlines() == ["2\tMV150\tuntracked-autodiff-move", "1\tMV102\t[*] autodiff-mismatch-move",
                                "Found 3 findings (1 error, 2 warnings).",
                                "[*] 1 fixable with the `--fix` option (2 hidden fixes can be enabled with the "
                                "`--unsafe-fixes` option)."]
    code, out, _err = run(capsys, "check", "--statistics", "--output-format", "json")
    assert json.loads(out) == [
        {"code": "MV150", "name": "untracked-autodiff-move", "count": 2, "fixable": True, "fixable_count": 0},
        {"code": "MV102", "name": "autodiff-mismatch-move", "count": 1, "fixable": True, "fixable_count": 1}]
    code, out, _err = run(capsys, "check", "--statistics", "--output-format", "json", "--unsafe-fixes")
    assert [row["fixable_count"] for row in json.loads(out)] == [2, 1]
    code, out, _err = run(capsys, "check", "--statistics", "--output-format", "json", "--select", "MV150,MV105")
    assert json.loads(out)[0]["fixable"] is True
    code, out, _err = run(capsys, "check", "--statistics", "--select", "MV105")
    assert code == 0 and out == "All checks passed!\n"
    assert run(capsys, "check", "--statistics", "--exit-zero")[0] == 0


def test_output_file(project: Path, capsys: pytest.CaptureFixture) -> None:
    target = project / "reports" / "nested" / "devicelint.json"
    code, out, _err = run(capsys, "check", "--output-format", "json", "-o", str(target))
    assert code == 1 and out == ""
    assert len(json.loads(target.read_text(encoding="utf-8"))) == 4
    code, out, _err = run(capsys, "check", "--output-file", str(project / "report.txt"))
    assert out == "" and "Found 3 findings (1 error, 2 warnings).\n" in (project / "report.txt").read_text(
        encoding="utf-8")
    (project / "blocked").write_text("a file, not a directory")
    code, _out, err = run(capsys, "check", "-o", str(project / "blocked" / "report.txt"))
    assert code == 2 and "cannot write" in err and "Traceback" not in err


def test_full_output_shows_source_from_cache(project: Path, capsys: pytest.CaptureFixture) -> None:
    cold = run(capsys, "check", "--output-format", "full", "src/failing.py")[1]
    warm = run(capsys, "check", "--output-format", "full", "src/failing.py")[1]
    assert cold == warm and "4 | weights.to_device(Device.ndarray())" in warm


def test_quiet_and_silent(project: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "-s"], capture_output=True, text=True,
                          cwd=project, env=env)
    assert proc.returncode == 1 and proc.stdout == "" and proc.stderr == ""
    proc = subprocess.run([sys.executable, "-m", "devicelint", "check", "-q"], capture_output=True, text=True,
                          cwd=project, env=env)
    assert proc.returncode == 1 and "Found" not in proc.stdout and proc.stdout.count("\n") == 4


CONTAINER = """\
import torch
from torch import nn


def token_loss(logits, batch):
    return nn.functional.cross_entropy(logits, batch["labels"])


logits = torch.randn(4, 3, device="cuda")
batch = {"labels": torch.randint(0, 3, (4,))}
print(token_loss(logits, batch))
host = torch.randn(4, 3)
features = host @ torch.eye(3, device="cuda")
print(features - host)
print(features + batch["labels"])
"""


def test_a_finding_at_the_caller_names_its_inner_call_in_every_format(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    # the dict passed at line 11 holds the CPU labels the loss inside fails on: reported at the call, the loss a
    # related location in every format. The product at line 13 leaves ``host`` behind: subtracting it from the
    # product's result fails over the same tensor (a related location of that finding), adding the labels is a bug
    # of its own
    program = tmp_path / "prog.py"
    program.write_text(CONTAINER, encoding="utf-8")
    code, full, _err = run(capsys, "check", "--no-cache", "--output-format", "full", str(program))
    assert code == 1
    assert f"{program}:11:7: MV201" in full
    assert f"= related: {program}:6:12: the call that fails, inside `token_loss`" in full
    assert f"{program}:13:12: MV201" in full and f"{program}:15:7: MV201" in full
    assert not [line for line in full.splitlines() if line.startswith(f"{program}:14:")]  # no finding of its own
    assert f"= related: {program}:14:7: fails here too, over the same tensor" in full
    _code, sarif, _err = run(capsys, "check", "--no-cache", "--output-format", "sarif", str(program))
    results = json.loads(sarif)["runs"][0]["results"]
    at_call = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 11)
    inner = [r["physicalLocation"]["region"] for r in at_call["relatedLocations"]
             if "the call that fails" in r["message"]["text"]]
    assert [(r["startLine"], r["startColumn"]) for r in inner] == [(6, 12)]
    assert sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results) == [11, 13, 15]
    product = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 13)
    assert [r["physicalLocation"]["region"]["startLine"] for r in product["relatedLocations"]
            if r["message"]["text"] == "fails here too, over the same tensor"] == [14]

    from devicelint.lsp.convert import to_lsp
    from devicelint.runner import check_source

    [finding] = [d for d in check_source(CONTAINER, str(program)).findings if d.row == 11]
    lines = CONTAINER.splitlines()
    converted = to_lsp(finding, lambda _path: lines)
    infos = [(i.location.range.start.line, i.location.range.start.character, i.message)
             for i in converted.related_information or []]
    assert (5, 11, "the call that fails, inside `token_loss`") in infos
    assert converted.range.start.line == 10
