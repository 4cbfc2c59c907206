"""End-to-end tests of ``devicelint lsp`` through pytest-lsp (the server runs as a subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .lsp_support import published, server_config, wait_for

pytestmark = pytest.mark.asyncio

HEADER = "from runtime_shim import Device, Tensor\n\n"
MOVE = HEADER + ("w = Tensor.zeros([2], Device.flex().autodiff())\n"
                 "out = w.to_device(Device.ndarray())\n")
AD_FLEX = "Autodiff { device: Flex, checkpointing: Disabled }"


def open_file(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))


def codes(diagnostics: list[types.Diagnostic]) -> list[tuple[str | None, int]]:
    return [(d.code, d.range.start.line) for d in diagnostics]


async def test_open_publishes_diagnostics_with_related_information(client: LanguageClient, workspace: Path):
    uri = open_file(client, workspace / "main.py", MOVE)
    (diagnostic,) = await published(client, uri, 1)
    assert diagnostic.code == "MV102" and diagnostic.source == "devicelint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(types.Position(3, 6), types.Position(3, 35))
    assert diagnostic.message.startswith("Cannot move between autodiff and non-autodiff instances.")
    assert diagnostic.code_description is not None  # the rules page of this checkout, an absolute URI
    assert diagnostic.code_description.href.startswith("file://")
    assert diagnostic.code_description.href.endswith("/docs/rules.md#mv102-autodiff-mismatch-move")
    related = {(r.location.uri, r.location.range.start.line, r.location.range.start.character, r.message)
               for r in diagnostic.related_information or ()}
    assert (uri, 2, 4, f"tensor: created on {AD_FLEX}") in related
    assert (uri, 3, 18, "device: Device.ndarray()") in related


async def test_columns_are_utf16_code_units_after_non_ascii_text(client: LanguageClient, workspace: Path):
    prefix = 's = "é😀"; out = '
    text = HEADER + "w = Tensor.zeros([2], Device.flex().autodiff())\n" + prefix + "w.to_device(Device.ndarray())\n"
    uri = open_file(client, workspace / "wide.py", text)
    (diagnostic,) = await published(client, uri, 1)
    start = len(prefix.encode("utf-16-le")) // 2  # the emoji is two UTF-16 units, one character
    assert start == len(prefix) + 1
    assert diagnostic.range.start == types.Position(3, start)
    assert diagnostic.range.end == types.Position(3, start + len("w.to_device(Device.ndarray())"))


@pytest_lsp.fixture(config=server_config())
async def utf8_client(lsp_client: LanguageClient, workspace: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8])),
        root_uri=workspace.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def test_a_client_that_counts_utf8_gets_byte_columns(utf8_client: LanguageClient, workspace: Path):
    prefix = 's = "é😀"; out = '
    text = HEADER + "w = Tensor.zeros([2], Device.flex().autodiff())\n" + prefix + "w.to_device(Device.ndarray())\n"
    uri = open_file(utf8_client, workspace / "wide.py", text)
    (diagnostic,) = await published(utf8_client, uri, 1)
    assert diagnostic.range.start == types.Position(3, len(prefix.encode("utf-8")))
    hover = await utf8_client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(3, len(prefix.encode()))))
    assert hover is not None and hover.range.start == diagnostic.range.start


CASCADE = """\
import torch

weights = torch.randn(4, 4, device="cuda")
batch = torch.randn(8, 4)
hidden = batch @ weights{noqa}
mixed = hidden + batch
"""


async def test_noqa_on_a_finding_reports_what_it_listed_on_other_lines(client: LanguageClient, workspace: Path):
    # the sum fails again over the CPU batch the product left behind: listed by the product's finding, and
    # reported on its own line once a noqa silences the product's
    uri = open_file(client, workspace / "cascade.py", CASCADE.format(noqa=""))
    (diagnostic,) = await published(client, uri, 1)
    assert diagnostic.range.start.line == 4
    assert [r.location.range.start.line for r in diagnostic.related_information or []
            if "here too" in r.message] == [5]
    replace_all(client, uri, CASCADE.format(noqa="  # noqa: MV201"), 2)
    assert codes(await published(client, uri, 2)) == [("MV201", 5)]


async def test_an_edit_is_rechecked_and_closing_clears(client: LanguageClient, workspace: Path):
    uri = open_file(client, workspace / "main.py", MOVE)
    assert codes(await published(client, uri, 1)) == [("MV102", 3)]
    replace_all(client, uri, MOVE.replace("w.to_device", "w.inner().to_device"), 2)
    assert await published(client, uri, 2) == []
    for version in range(3, 8):  # typing: each edit supersedes the pending re-check
        replace_all(client, uri, "#" * version + "\n" + MOVE, version)
    assert codes(await published(client, uri, 7)) == [("MV102", 4)]
    versions = [p.version for p in client.published if p.uri == uri]
    assert versions == sorted(versions)  # a stale analysis is never published after a newer one
    before = len(client.published)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    assert await published(client, uri, after=before) == []


async def test_pull_diagnostics_answer_from_the_latest_analysis(client: LanguageClient, workspace: Path):
    uri = open_file(client, workspace / "main.py", MOVE)
    await published(client, uri, 1)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert codes(report.items) == [("MV102", 3)]


async def test_hover_shows_the_inferred_state(client: LanguageClient, workspace: Path):
    uri = open_file(client, workspace / "main.py", MOVE)
    await published(client, uri, 1)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(3, 6)))
    assert hover is not None and f"{AD_FLEX} float untracked" in hover.contents.value
    assert hover.range == types.Range(types.Position(3, 6), types.Position(3, 7))
    device = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(3, 25)))
    assert device is not None and "NdArray" in device.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 2)))
    assert nothing is None


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (ASCII text: characters are code units) from the last to the first."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = starts[edit.range.start.line] + edit.range.start.character
        end = starts[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


async def code_actions(client: LanguageClient, uri: str, line: int, only: list[str] | None = None):
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(line, 0), types.Position(line, 0)),
        context=types.CodeActionContext(diagnostics=[], only=only)))


async def test_quick_fix_and_noqa_actions(client: LanguageClient, workspace: Path):
    uri = open_file(client, workspace / "main.py", MOVE)
    await published(client, uri, 1)
    actions = await code_actions(client, uri, 3)
    by_title = {a.title: a for a in actions}
    fix = by_title["devicelint (MV102): Leave the graph with `.inner()` before the move"]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert [d.code for d in fix.diagnostics] == ["MV102"]
    fixed = apply(MOVE, fix.edit.changes[uri])
    assert fixed.endswith("out = w.inner().to_device(Device.ndarray())\n")
    suppress = by_title["devicelint (MV102): suppress with `# noqa: MV102`"]
    suppressed = apply(MOVE, suppress.edit.changes[uri])
    assert suppressed.endswith("out = w.to_device(Device.ndarray())  # noqa: MV102\n")
    replace_all(client, uri, suppressed, 2)
    assert await published(client, uri, 2) == []
    assert await code_actions(client, uri, 0) is None  # nothing on the import line


async def test_fix_all_applies_only_safe_fixes(client: LanguageClient, workspace: Path):
    text = HEADER + ("import sys\n\n"
                     "w = Tensor.zeros([2], Device.flex().autodiff())\n"
                     "if sys.argv:\n"
                     "    out = w.to_device(Device.ndarray())\n"
                     "else:\n"
                     "    moved = w.to_device(Device.ndarray().autodiff())\n")
    uri = open_file(client, workspace / "main.py", text)
    assert codes(await published(client, uri, 1)) == [("MV102", 6), ("MV101", 8)]
    unsafe = [a for a in await code_actions(client, uri, 8) if a.title.endswith("(unsafe)")]
    assert len(unsafe) == 1 and not unsafe[0].is_preferred
    (fix_all,) = await code_actions(client, uri, 0, only=[types.CodeActionKind.SourceFixAll])
    assert fix_all.kind == "source.fixAll.devicelint"
    fixed = apply(text, fix_all.edit.changes[uri])
    assert "    out = w.inner().to_device(Device.ndarray())\n" in fixed  # MV102's fix is safe
    assert "    moved = w.to_device(Device.ndarray().autodiff())\n" in fixed  # MV101's is not
    assert await code_actions(client, uri, 0, only=[types.CodeActionKind.QuickFix]) is None


async def test_editing_a_module_rechecks_the_open_modules_that_import_it(client: LanguageClient, workspace: Path):
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    model = HEADER + "def export(t):\n    return t.to_device(Device.ndarray())\n"
    model_uri = open_file(client, workspace / "pkg" / "model.py", model)
    train = HEADER + "from pkg.model import export\n\nexport(Tensor.zeros([2], Device.flex()))\n"
    train_uri = open_file(client, workspace / "train.py", train)
    assert await published(client, train_uri, 1) == []
    assert await published(client, model_uri, 1) == []
    before = len(client.published)
    # the edit to train.py (unsaved) makes model.py's move fail: model.py is re-checked and published
    replace_all(client, train_uri, train.replace("Device.flex()", "Device.flex().autodiff()"), 2)
    (diagnostic,) = await published(client, model_uri, 1, after=before)
    assert diagnostic.code == "MV102" and diagnostic.range.start.line == 3
    before = len(client.published)
    replace_all(client, model_uri, model.replace("t.to_device", "t.inner().to_device"), 2)
    assert await published(client, model_uri, 2, after=before) == []


async def test_a_crash_inside_a_rule_is_reported_and_the_server_keeps_serving(client: LanguageClient,
                                                                             workspace: Path):
    crash_uri = open_file(client, workspace / "crash_me.py", MOVE)
    message = await wait_for(lambda: [m for m in client.messages if "injected failure in MV102" in m.message],
                             "the failure as a message")
    assert message[0].type == types.MessageType.Error
    logged = [m for m in client.log_messages if "injected failure in MV102" in m.message]
    assert logged and "Traceback" in logged[0].message
    ok_uri = open_file(client, workspace / "ok.py", MOVE)
    assert codes(await published(client, ok_uri, 1)) == [("MV102", 3)]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=ok_uri), position=types.Position(3, 6)))
    assert hover is not None
    # the failure is also an MV903 finding on the file it happened in (its other findings are unknown)
    assert [code for code, _line in codes(await published(client, crash_uri, 1))] == ["MV903"]
    failures = len(client.messages)
    on_crash = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=crash_uri), position=types.Position(3, 6)))
    assert on_crash is None and len(client.messages) > failures  # reported again, answered, still serving


@pytest_lsp.fixture(config=server_config())
async def pulling(lsp_client: LanguageClient, workspace: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
            workspace=types.WorkspaceClientCapabilities(
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True))),
        root_uri=workspace.as_uri(), initialization_options={"debounceMs": 0}))
    yield
    await lsp_client.shutdown_session()


async def pull(client: LanguageClient, uri: str) -> list[tuple[str | None, int]]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    return codes(report.items)


async def test_a_pulling_client_is_not_pushed_to_and_is_asked_to_refresh(pulling: LanguageClient, workspace: Path):
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    model = HEADER + "def export(t):\n    return t.to_device(Device.ndarray())\n"
    model_uri = open_file(pulling, workspace / "pkg" / "model.py", model)
    train = HEADER + "from pkg.model import export\n\nexport(Tensor.zeros([2], Device.flex()))\n"
    train_uri = open_file(pulling, workspace / "train.py", train)
    assert await pull(pulling, model_uri) == [] and await pull(pulling, train_uri) == []
    replace_all(pulling, train_uri, train.replace("Device.flex()", "Device.flex().autodiff()"), 2)
    await wait_for(lambda: pulling.diagnostic_refresh_count > 0, "workspace/diagnostic/refresh")
    assert await pull(pulling, model_uri) == [("MV102", 3)]
    assert pulling.published == []


TORCH_CONFIG = 'import torch\n\nDEVICE = torch.device("cuda")\n'
TORCH_DATA = "import torch\n\n\ndef batch():\n    return torch.randn(4, 3), torch.randint(0, 2, (4,))\n"
TORCH_TRAIN = ("import torch\n\nfrom .config import DEVICE\nfrom .data import batch\n\n"
               "weights = torch.randn(3, 2, device=DEVICE)\nfeatures, labels = batch()\nscores = features @ weights\n")


async def test_a_buffer_gets_what_devicelint_check_of_the_file_gives(client: LanguageClient, workspace: Path,
                                                                      capsys: pytest.CaptureFixture):
    """The server and `devicelint check FILE` analyse a file with the same project (analyzer.projects): here
    the innermost configured root, whose modules share their names with another root's."""
    import json

    from devicelint.cli import main

    (workspace / "pyproject.toml").write_text('[tool.devicelint]\nroots = ["apps/*"]\n', encoding="utf-8")
    for app, device in (("gpu", "cuda"), ("cpu", "cpu")):
        pkg = workspace / "apps" / app / "pkg"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("", encoding="utf-8")
        (pkg / "config.py").write_text(TORCH_CONFIG.replace("cuda", device), encoding="utf-8")
        (pkg / "data.py").write_text(TORCH_DATA, encoding="utf-8")
    gpu_uri = open_file(client, workspace / "apps" / "gpu" / "pkg" / "train.py", TORCH_TRAIN)
    cpu_uri = open_file(client, workspace / "apps" / "cpu" / "pkg" / "train.py", TORCH_TRAIN)
    assert codes(await published(client, gpu_uri, 1)) == [("MV201", 7)]
    assert await published(client, cpu_uri, 1) == []
    capsys.readouterr()
    assert main(["check", "--no-cache", "--output-format", "json", str(workspace / "apps" / "gpu" / "pkg" / "train.py"),
                 str(workspace / "apps" / "cpu" / "pkg" / "train.py")]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(d["code"], d["location"]["row"] - 1, Path(d["filename"]).parts[-3]) for d in found] == [
        ("MV201", 7, "gpu")]
