"""The protocol's rules that pygls leaves to the server: what a message may do at each point of the session.

Every request gets an answer: before ``initialize``, -32002 (ServerNotInitialized); after
``shutdown``, -32600 (InvalidRequest); a value that is no JSON-RPC message, -32600; params
that do not match the method's types (a missing field, a negative or out-of-range position),
-32602 (InvalidParams). Notifications that break a rule are dropped and logged, as the
protocol says; ``exit`` always ends the server (status 0 after ``shutdown``, else 1).
A ``didChange`` for a document that is not open is logged and ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import cattrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("devicelint.lsp")
MsgId = int | str


def _valid_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _why(error: Exception) -> str:
    """A one-line reason a message's fields do not fit the method's types (cattrs' own words, joined)."""
    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(error))
    return str(error) or type(error).__name__


class DeviceLintProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False

    # ------------------------------------------------------------------ replies that are not a handler's

    def send_error(self, msg_id: MsgId | None, error: JsonRpcException) -> None:
        """An error response; ``msg_id`` None when the request's id could not be read (JSON-RPC's ``null``)."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": error.code, "message": error.message}})

    def receive(self, raw: object) -> None:
        """One JSON value from the client: checked against the session's state, structured, dispatched."""
        if not isinstance(raw, dict):
            self.send_error(None, JsonRpcInvalidRequest(f"a message must be a JSON object, not {type(raw).__name__}"))
            return
        msg_id = raw.get("id")
        method = raw.get("method")
        is_request = "id" in raw and "method" in raw
        if raw.get("jsonrpc") != "2.0" or ("method" in raw and not isinstance(method, str)) or \
                ("id" in raw and not _valid_id(msg_id)) or ("method" not in raw and "id" not in raw):
            if is_request or not ("method" in raw or "result" in raw or "error" in raw):
                self.send_error(msg_id if _valid_id(msg_id) else None,
                                JsonRpcInvalidRequest('not a JSON-RPC 2.0 message ("jsonrpc": "2.0", a string '
                                                      '"method", an integer or string "id")'))
            else:
                log.warning("dropped a notification that is not JSON-RPC 2.0: %.200r", raw)
            return
        if isinstance(method, str):
            refusal = self._refusal(method)
            if refusal is not None:
                if is_request:
                    self.send_error(msg_id, refusal)
                else:
                    log.info("dropped the notification %s: %s", method, refusal.message)
                return
        try:
            message = self._structure(raw)
        except Exception as error:  # noqa: BLE001 - any mismatch of the params is the client's error
            if is_request:
                self.send_error(msg_id, JsonRpcInvalidParams(f"invalid params for {method}: {_why(error)}"))
            else:
                log.warning("dropped %s: %s", method or f"the response to {msg_id!r}", _why(error))
            return
        if is_request and method == types.INITIALIZE:
            self.initialize_received = True  # (only once its params are valid: the workspace needs them)
        self.handle_message(message)

    def _refusal(self, method: str) -> JsonRpcException | None:
        """Why the session's state forbids ``method`` now (None: it may run)."""
        if method == types.EXIT:
            return None
        if not self.initialize_received and method != types.INITIALIZE:
            return JsonRpcServerNotInitialized(f"the server is not initialized yet: {method} must come after "
                                               "the initialize request")
        if self._shutdown:
            return JsonRpcInvalidRequest(f"the server is shutting down: {method} came after the shutdown request")
        if method == types.INITIALIZE and self.initialize_received:
            return JsonRpcInvalidRequest("the server is already initialized (initialize may be sent only once)")
        return None

    def _structure(self, raw: dict[str, Any]) -> Any:
        """pygls' ``structure_message`` without its logged traceback: the caller answers the error."""
        method = raw.get("method")
        if "method" in raw:
            if method == types.INITIALIZED and raw.get("params") is None:
                raw = {**raw, "params": {}}  # its params are empty anyway; dropping it would stall every analysis
            message_type = self.get_message_type(method)
            if message_type is None:  # a method we do not know: its params are optional and untyped
                raw = {"params": None, **raw}
                message_type = JsonRPCRequestMessage if "id" in raw else JsonRPCNotification
        elif "error" in raw:
            message_type = types.ResponseErrorMessage
        else:
            message_type = self._result_types.pop(raw["id"], None) or JsonRPCResponseMessage
        return self._converter.structure(raw, message_type)

    # ------------------------------------------------------------------ documents

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Iterator[Any]:
        """pygls' document update, for open documents only (an edit to one the client never opened is ignored)."""
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            log.warning("ignored a change to %s: the client never opened it (didOpen)", uri)
            return
        yield from super().lsp_text_document__did_change(params)
