"""A local OpenAI-compatible HTTP server: a TEST DOUBLE standing in for OpenAI / vLLM.

It speaks the real wire format (POST /v1/chat/completions, JSON in and out) so the real
`openai` client and the real HTTP stack are exercised; it records every request and answers
with a deterministic text describing what it received.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional


@dataclass
class Reply:
    status: int = 200
    content: Optional[str] = None
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    reasoning: Optional[str] = None  # vLLM's --reasoning-parser puts thoughts in `reasoning_content`
    #: tool calls the model makes: [{"name", "arguments": dict or raw JSON text}] (finish_reason tool_calls)
    tool_calls: Optional[list] = None
    #: an audio answer (WAV bytes), sent as chat completions' audio output: `content` is its transcript
    audio: Optional[bytes] = None
    #: a refusal instead of content (OpenAI's `message.refusal`, content null)
    refusal: Optional[str] = None
    #: the choice's finish_reason as sent, when not the usual `stop`/`tool_calls`
    finish_reason: Optional[str] = None
    #: a page sent instead of any completion, status 200 and text/html (a proxy's error page)
    html: Optional[str] = None


class OpenAITestServer:
    def __init__(self, delay: float = 0.0, fail_when: Optional[Callable[[dict], Optional[int]]] = None,
                 respond: Optional[Callable[[dict], "Reply"]] = None):
        """`respond(request) -> Reply` scripts any answer (status, content, headers, delay)."""
        self.requests: list[dict] = []
        self.authorizations: list = []  # each request's Authorization header (the key a client sent), or None
        self.respond = respond
        self.delay = delay
        self.fail_when = fail_when  # request -> HTTP status to fail with, or None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers: no new connection per request
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("Authorization"))
                if server.respond is not None:
                    reply = server.respond(body)
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.status != 200:  # `content`, when given, is the error's message
                        self._send(reply.status, {"error": {"message": reply.content or "scripted failure",
                                                            "type": "server_error"}}, reply.headers)
                    elif reply.html is not None:
                        self._page(reply.html)
                    elif body.get("stream"):
                        self._stream(server.completion(body, reply.content, reply.reasoning, reply.tool_calls))
                    else:
                        completion = server.completion(body, reply.content, reply.reasoning, reply.tool_calls,
                                                       reply.audio)
                        if reply.refusal is not None:
                            completion["choices"][0]["message"].update(content=None, refusal=reply.refusal)
                        if reply.finish_reason is not None:
                            completion["choices"][0]["finish_reason"] = reply.finish_reason
                        self._send(200, completion)
                    return
                if server.delay:
                    time.sleep(server.delay)
                status = server.fail_when(body) if server.fail_when else None
                if status:
                    self._send(status, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                self._send(200, server.completion(body))

            def _stream(self, completion):
                """The completion as server-sent events, the way vLLM streams it: the role, the text in
                two pieces, each tool call's name then its arguments in two pieces, the finish reason,
                a usage chunk, [DONE]."""
                message = completion["choices"][0]["message"]
                base = {key: completion[key] for key in ("id", "created", "model")}
                base["object"] = "chat.completion.chunk"

                def chunk(delta=None, finish=None, usage=None):
                    choices = [] if delta is None and finish is None else [
                        {"index": 0, "delta": delta or {}, "finish_reason": finish}]
                    return {**base, "choices": choices, **({"usage": usage} if usage else {})}

                text = message.get("content") or ""
                events = [chunk({"role": "assistant", "content": ""})]
                halves = (text[:len(text) // 2], text[len(text) // 2:])
                events += [chunk({"content": piece}) for piece in halves if piece]
                for index, call in enumerate(message.get("tool_calls") or []):
                    arguments = call["function"]["arguments"]
                    events.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                                         "function": {"name": call["function"]["name"],
                                                                      "arguments": ""}}]}))
                    for piece in (arguments[:len(arguments) // 2], arguments[len(arguments) // 2:]):
                        events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
                events.append(chunk({}, completion["choices"][0]["finish_reason"]))
                events.append(chunk(usage=completion["usage"]))
                data = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
                encoded = data.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                self.wfile.write(encoded)

            def _page(self, html: str):
                data = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send(self, status, payload, headers=None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @staticmethod
    def completion(body: dict, content: Optional[str] = None, reasoning: Optional[str] = None,
                   tool_calls: Optional[list] = None, spoken: Optional[bytes] = None) -> dict:
        audio = sum(1 for m in body["messages"] if isinstance(m.get("content"), list)
                    for part in m["content"] if part.get("type") == "input_audio")
        last = body["messages"][-1].get("content")
        last_text = last if isinstance(last, str) else "<audio>"
        text = content if content is not None else f"heard {audio} audio clip(s); last user turn: {last_text[:40]}"
        calls = [{"id": f"call_{len(body['messages'])}_{i}", "type": "function",
                  "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str)
                               else json.dumps(c["arguments"])}} for i, c in enumerate(tool_calls or [])]
        return {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": {
                "role": "assistant", "content": None if spoken else text, **({"tool_calls": calls} if calls else {}),
                **({"audio": {"id": "audio-test", "data": base64.b64encode(spoken).decode(), "expires_at": 0,
                              "transcript": text}} if spoken else {}),
                **({"reasoning_content": reasoning} if reasoning else {})}}],
            "usage": {"prompt_tokens": 100 + audio, "completion_tokens": 12, "total_tokens": 112 + audio},
        }

    def __enter__(self) -> "OpenAITestServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


class SilentServer:
    """A TEST DOUBLE of a server that hangs: it accepts every connection and never answers (a stuck vLLM, a
    firewall that swallows the reply). A client waits its whole timeout on each request."""

    def __init__(self):
        import socket

        self._socket = socket.create_server(("127.0.0.1", 0))
        self._held: list = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:  # closed by __exit__
                return
            self._held.append(connection)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    @property
    def connections(self) -> int:
        """How many requests are waiting on it."""
        return len(self._held)

    def __enter__(self) -> "SilentServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._socket.close()
        for connection in self._held:
            connection.close()
