"""The server's promises under a raw JSON-RPC client: malformed frames, the session's rules, bad documents and
bad configuration (the server runs as a subprocess fed raw bytes; see raw_client.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .raw_client import RawServer, frame, notification, request

pytest.importorskip("pygls", reason="the LSP tests need the `lsp` extra (pygls, lsprotocol)")

MOVE = ("from runtime_shim import Device, Tensor\n\n"
        "w = Tensor.zeros([2], Device.flex().autodiff())\n"
        "out = w.to_device(Device.ndarray())\n")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, NOT_INITIALIZED = -32700, -32600, -32601, -32602, -32002


@pytest.fixture
def server(workspace: Path) -> Iterator[RawServer]:
    process = RawServer(workspace)
    yield process
    process.close()


def hover(uri: str, line: object = 0, character: object = 0) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def error_code(answer: dict) -> int | None:
    return answer.get("error", {}).get("code")


def shut_down(server: RawServer) -> None:
    """shutdown answered, then exit with status 0, and no traceback on stderr along the way."""
    answer = server.call("bye", "shutdown")
    assert answer.get("result", "missing") is None, answer
    server.send(notification("exit"))
    assert server.wait_exit() == 0
    assert b"Traceback" not in server.stderr, server.stderr.decode(errors="replace")


# ---------------------------------------------------------------------- framing


def test_a_content_length_too_large_does_not_swallow_the_next_request(server: RawServer, workspace: Path):
    server.initialize(workspace)
    uri = (workspace / "none.py").as_uri()
    server.write(frame(request(1, "textDocument/hover", hover(uri)), length=100_000))
    server.send(request(2, "textDocument/hover", hover(uri)))
    assert "result" in server.response(1) and "result" in server.response(2)
    shut_down(server)


def test_a_content_length_too_small_is_answered_and_the_stream_goes_on(server: RawServer, workspace: Path):
    server.initialize(workspace)
    uri = (workspace / "none.py").as_uri()
    server.write(frame(request(1, "textDocument/hover", hover(uri)), length=12))  # cut inside the body
    answer = server.wait_for(lambda m: m.get("id") in (1, None) and ("result" in m or "error" in m),
                             "an answer to the cut request (its result, or a parse error)")
    assert "result" in answer or error_code(answer) == PARSE_ERROR
    server.send(request(2, "textDocument/hover", hover(uri)))
    assert "result" in server.response(2)
    shut_down(server)


def test_a_body_that_is_not_json_gets_a_parse_error(server: RawServer, workspace: Path):
    server.initialize(workspace)
    server.write(frame(b'{"jsonrpc": "2.0", "id": 1, "method": '))
    server.write(frame(b"\xff\xfe not even text"))
    first = server.response(None)
    assert error_code(first) == PARSE_ERROR
    assert error_code(server.wait_for(lambda m: m is not first and m.get("id") is None, "a second parse error")) \
        == PARSE_ERROR
    shut_down(server)


def test_requests_without_a_usable_header_are_answered_and_garbage_is_skipped(server: RawServer, workspace: Path):
    server.initialize(workspace)
    uri = (workspace / "none.py").as_uri()
    server.write(b"this is no header\r\n\r\n")
    server.write(b"Content-Type: application/vscode-jsonrpc\r\n\r\n"
                 + frame(request(1, "textDocument/hover", hover(uri))).split(b"\r\n\r\n", 1)[1])
    server.write(b"Content-Length: lots\r\n\r\n" + frame(request(2, "shutdown")).split(b"\r\n\r\n", 1)[1])
    server.write(frame(request(3, "textDocument/hover", hover(uri))).split(b"\r\n\r\n", 1)[1])  # no header at all
    for msg_id in (1, 2, 3):
        answer = server.response(msg_id)
        assert error_code(answer) == INVALID_REQUEST and "Content-Length" in answer["error"]["message"]
    server.send(request(4, "textDocument/hover", hover(uri)))
    assert "result" in server.response(4)
    shut_down(server)  # the header-less shutdown was refused, not run


def test_input_cut_short_inside_a_message_ends_the_server(server: RawServer, workspace: Path):
    server.initialize(workspace)
    server.call(1, "shutdown")
    server.write(frame(request(2, "textDocument/hover", hover("file:///x.py")))[:-10])
    server.close_input()
    assert server.wait_exit() == 0  # shut down, then the input ended: no exit notification needed
    assert b"Traceback" not in server.stderr


# ---------------------------------------------------------------------- the session's rules


def test_a_request_before_initialize_gets_server_not_initialized(server: RawServer, workspace: Path):
    server.send(notification("textDocument/didOpen", {"textDocument": {
        "uri": (workspace / "a.py").as_uri(), "languageId": "python", "version": 1, "text": MOVE}}))  # dropped
    answer = server.call(1, "textDocument/hover", hover((workspace / "a.py").as_uri()))
    assert error_code(answer) == NOT_INITIALIZED
    assert error_code(server.call(2, "shutdown")) == NOT_INITIALIZED
    assert error_code(server.call(3, "initialize", {"processId": None})) == INVALID_PARAMS
    assert error_code(server.call(4, "textDocument/hover", hover((workspace / "a.py").as_uri()))) == NOT_INITIALIZED
    assert "capabilities" in server.initialize(workspace)["result"]
    assert error_code(server.call(5, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})) \
        == INVALID_REQUEST
    shut_down(server)


@pytest.mark.parametrize("params", [
    hover("file:///a.py", line=-1),
    hover("file:///a.py", character=-5),
    hover("file:///a.py", line=2 ** 40),
    hover("file:///a.py", line="three"),
    {"textDocument": {"uri": "file:///a.py"}},
    None,
], ids=["negative-line", "negative-character", "line-out-of-range", "line-not-a-number", "no-position", "no-params"])
def test_bad_params_get_invalid_params(server: RawServer, workspace: Path, params: object):
    server.initialize(workspace)
    answer = server.call(1, "textDocument/hover", params)
    assert error_code(answer) == INVALID_PARAMS, answer
    assert "position" in answer["error"]["message"] or "params" in answer["error"]["message"]
    shut_down(server)


def test_a_code_action_with_a_negative_range_gets_invalid_params(server: RawServer, workspace: Path):
    server.initialize(workspace)
    uri = server.open(workspace / "a.py", MOVE)
    server.diagnostics(uri, 1)
    answer = server.call(1, "textDocument/codeAction", {
        "textDocument": {"uri": uri}, "context": {"diagnostics": []},
        "range": {"start": {"line": 0, "character": -1}, "end": {"line": 0, "character": 0}}})
    assert error_code(answer) == INVALID_PARAMS
    shut_down(server)


def test_messages_that_are_not_json_rpc_get_invalid_request(server: RawServer, workspace: Path):
    server.initialize(workspace)
    server.write(frame(b"[1, 2]"))
    assert error_code(server.response(None)) == INVALID_REQUEST
    assert error_code(server.call(1, "devicelint/noSuchMethod")) == METHOD_NOT_FOUND
    server.send({"id": 2, "method": "shutdown"})  # no "jsonrpc": "2.0"
    assert error_code(server.response(2)) == INVALID_REQUEST
    shut_down(server)


def test_requests_after_shutdown_get_invalid_request(server: RawServer, workspace: Path):
    server.initialize(workspace)
    assert server.call(1, "shutdown").get("result", "missing") is None
    assert error_code(server.call(2, "textDocument/hover", hover("file:///a.py"))) == INVALID_REQUEST
    assert error_code(server.call(3, "shutdown")) == INVALID_REQUEST
    server.send(notification("exit"))
    assert server.wait_exit() == 0


def test_an_initialized_notification_without_params_still_starts_the_analyses(server: RawServer, workspace: Path):
    server.call(1, "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}})
    server.send({"jsonrpc": "2.0", "method": "initialized"})
    uri = server.open(workspace / "a.py", MOVE)
    assert [d["code"] for d in server.diagnostics(uri, 1)] == ["MV102"]
    shut_down(server)


def test_exit_without_shutdown_exits_with_status_1(server: RawServer, workspace: Path):
    server.initialize(workspace)
    server.send(notification("exit"))
    assert server.wait_exit() == 1
    assert b"Traceback" not in server.stderr


# ---------------------------------------------------------------------- documents


def test_a_change_to_an_unopened_document_is_ignored(server: RawServer, workspace: Path):
    server.initialize(workspace)
    server.send(notification("textDocument/didChange", {
        "textDocument": {"uri": (workspace / "never.py").as_uri(), "version": 2},
        "contentChanges": [{"text": "x = 1\n"}]}))
    uri = server.open(workspace / "a.py", MOVE)
    assert [d["code"] for d in server.diagnostics(uri, 1)] == ["MV102"]
    # the change was handled before the open (in order): a complaint would have come first
    assert not [m for m in server.received if m.get("method") == "window/showMessage"]
    shut_down(server)


def test_an_undecodable_buffer_affects_only_its_document(server: RawServer, workspace: Path):
    server.initialize(workspace)
    (workspace / "model.py").write_text(MOVE, encoding="utf-8")
    model = server.open(workspace / "model.py")
    broken = server.open(workspace / "user.py", "import model\nfrom runtime_shim import Device\nname = '\ud800'\n")
    assert [d["code"] for d in server.diagnostics(model, 1)] == ["MV102"]
    (diagnostic,) = server.diagnostics(broken, 1)
    assert diagnostic["code"] == "MV901" and diagnostic["range"]["start"]["line"] == 2
    answer = server.call(1, "textDocument/hover", hover(broken, 2, 1))
    assert answer.get("result", "missing") is None  # nothing to show, and no error
    shut_down(server)


# ---------------------------------------------------------------------- configuration


@pytest.mark.parametrize(("table", "line", "needle"), [
    ('exclude = ["[z-a]"]', 1, "[z-a]"),
    ('extend-exclude = ["ok/*.py", "bad[z-a].py"]', 1, "bad[z-a].py"),
    ('[tool.devicelint.per-file-ignores]\n"[z-a]*.py" = ["MV102"]', 2, "[z-a]*.py"),
    ('select = "MV1', 1, "invalid TOML"),
], ids=["exclude", "extend-exclude", "per-file-ignores", "invalid-toml"])
def test_a_configuration_error_is_shown_and_the_other_files_keep_their_diagnostics(
        server: RawServer, workspace: Path, table: str, line: int, needle: str):
    config = workspace / "pyproject.toml"
    config.write_text(f"[tool.devicelint]\n{table}\n", encoding="utf-8")
    server.initialize(workspace)
    uri = server.open(workspace / "a.py", MOVE)
    assert [d["code"] for d in server.diagnostics(uri, 1)] == ["MV102"]  # analysed with the default settings
    shown = server.notified("window/showMessage", lambda p: "pyproject.toml" in p["message"])
    assert shown["type"] == 1 and needle in shown["message"]
    (problem,) = server.diagnostics(config.as_uri())
    assert problem["severity"] == 1 and needle in problem["message"] and problem["range"]["start"]["line"] == line
    assert "Traceback" not in shown["message"] and b"Traceback" not in server.stderr
    config.write_text("[tool.devicelint]\n", encoding="utf-8")  # fixed and saved: the error goes
    server.send(notification("textDocument/didSave", {"textDocument": {"uri": config.as_uri()}}))
    assert server.notified("textDocument/publishDiagnostics",
                           lambda p: p["uri"] == config.as_uri() and not p["diagnostics"]) is not None
    shut_down(server)


def test_a_pulling_client_gets_the_configuration_error_when_it_asks(server: RawServer, workspace: Path):
    config = workspace / "pyproject.toml"
    config.write_text('[tool.devicelint]\nexclude = ["[z-a]"]\n', encoding="utf-8")
    server.call("init", "initialize", {"processId": None, "rootUri": workspace.as_uri(),
                                       "capabilities": {"textDocument": {"diagnostic": {}}}})
    server.send(notification("initialized", {}))
    uri = server.open(workspace / "a.py", MOVE)
    pulled = server.call(1, "textDocument/diagnostic", {"textDocument": {"uri": uri}})["result"]
    assert [d["code"] for d in pulled["items"]] == ["MV102"]
    answer = server.call(2, "textDocument/diagnostic", {"textDocument": {"uri": config.as_uri()}})
    (problem,) = answer["result"]["items"]
    assert "[z-a]" in problem["message"] and problem["range"]["start"]["line"] == 1
    assert not [m for m in server.received if m.get("method") == "textDocument/publishDiagnostics"]
    shut_down(server)
