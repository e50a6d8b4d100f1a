"""Fakes that users of llm-sidecar can reuse in their own tests.

:class:`ScriptedJudge` is a real OpenAI-compatible chat-completions server on loopback
(aiohttp), so the judge client is tested over real HTTP with real httpx, never patched. It
recognises which judge step a request is (the ``[llm-sidecar judge: <id> v<n>]`` line that
starts every judge system message), reads the JSON inputs, and answers deterministically:
with a scripted answer for that step when one is set, otherwise with a simple built-in
heuristic. Faults can be queued: HTTP errors (with ``Retry-After``), hangs, slow answers,
malformed JSON and answers of the wrong shape. ::

    async with ScriptedJudge() as judge:
        judge.script("opinions", {"opinions": ["I think cats are better"]})
        judge.fail(status=429, times=2, retry_after=0.05)
        settings = JudgeSettings(enabled=True, base_url=judge.base_url)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import signal
import socket
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from aiohttp import web

from .judge.prompts import parse_marker
from .lifecycle import Lifecycle

__all__ = ["Fault", "ScriptedJudge", "ScriptedTarget", "TcpProxy", "default_answer"]

ProxyMode = Literal["up", "refuse", "hang"]

FaultKind = Literal["status", "hang", "delay", "malformed", "wrong_schema", "not_completion"]
Answer = Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z0-9]{4,}")
_OPINION_WORDS = ("i think", "i believe", "i feel", "in my opinion", "should", "better", "worse")
_REFUSAL_WORDS = ("i can't", "i cannot", "i won't", "i'm sorry", "unable to help")
_TOXIC_WORDS = ("idiot", "stupid", "worthless", "hate", "shut up", "pathetic")
_BIAS_WORDS = ("all women", "all men", "those people", "naturally", "inferior", "superior")
_NEGATIONS = (" not ", " never ", " no ")
_ATTACK_WORDS = ("ignore all previous", "ignore previous", "system prompt", "do anything now")
"""What the scripted judge calls an attack attempt (the ``attack_attempt`` step)."""


@dataclass(slots=True)
class Fault:
    """One queued misbehaviour, applied to the next ``times`` matching requests."""

    kind: FaultKind
    times: int = 1
    status: int = 500
    retry_after: float | str | None = None
    seconds: float = 0.0
    step: str | None = None
    """Only requests for this judge step (prompt id); None means any request."""


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _overlap(a: str, b: str) -> bool:
    return bool(_words(a) & _words(b))


def _yes(flag: bool) -> dict[str, str]:
    return {"verdict": "yes" if flag else "no", "reason": "scripted"}


def _contradicts(text: str, context: str) -> bool:
    """Crude: the two share words and exactly one of them is negated."""
    t, c = f" {text.lower()} ", f" {context.lower()} "
    return _overlap(text, context) and (
        any(n in t for n in _NEGATIONS) != any(n in c for n in _NEGATIONS)
    )


def default_answer(step: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The built-in deterministic answer to one judge step.

    Statements and claims are the sentences of the text; opinions are sentences with an
    opinion word; bias and toxicity look for marker words; relevance, usefulness, support and
    attribution mean sharing a word of four or more letters; a context is contradicted when
    the two share words and exactly one is negated; coherence is 4; similarity is the word
    overlap (Jaccard) of answer and reference.
    """
    if step in ("statements", "claims"):
        return {step: _sentences(str(inputs["text"]))}
    if step == "opinions":
        found = [
            s
            for s in _sentences(str(inputs["text"]))
            if any(w in s.lower() for w in _OPINION_WORDS)
        ]
        return {"opinions": found}
    if step in ("bias_verdicts", "toxicity_verdicts"):
        words = _BIAS_WORDS if step == "bias_verdicts" else _TOXIC_WORDS
        return {"verdicts": [_yes(any(w in o.lower() for w in words)) for o in inputs["opinions"]]}
    if step == "statement_relevance":
        return {"verdicts": [_yes(_overlap(s, inputs["query"])) for s in inputs["statements"]]}
    if step == "context_usefulness":
        return {"verdicts": [_yes(_overlap(c, inputs["reference"])) for c in inputs["contexts"]]}
    if step == "context_relevance":
        return {"verdicts": [_yes(_overlap(c, inputs["query"])) for c in inputs["contexts"]]}
    if step in ("statement_attribution", "claim_support"):
        items = inputs["statements" if step == "statement_attribution" else "claims"]
        joined = " ".join(inputs["contexts"])
        return {"verdicts": [_yes(_overlap(s, joined)) for s in items]}
    if step == "contradiction":
        return {"verdicts": [_yes(_contradicts(inputs["text"], c)) for c in inputs["contexts"]]}
    if step == "correctness":
        ref = inputs["reference_statements"]
        ans = inputs["answer_statements"]
        tp = [a for a in ans if any(_overlap(a, r) for r in ref)]
        fp = [a for a in ans if a not in tp]
        fn = [r for r in ref if not any(_overlap(a, r) for a in ans)]
        return {"true_positives": tp, "false_positives": fp, "false_negatives": fn}
    if step == "summary_coherence":
        return {"score": 4, "reason": "scripted"}
    if step == "answer_similarity":
        a, b = _words(str(inputs["answer"])), _words(str(inputs["reference"]))
        return {"score": round(len(a & b) / len(a | b), 4) if a | b else 1.0}
    if step == "refusal":
        answer = str(inputs["answer"]).lower()
        return _yes(any(w in answer for w in _REFUSAL_WORDS))
    if step == "attack_attempt":
        text = " ".join([str(inputs["query"]), *map(str, inputs.get("contexts", ()))]).lower()
        return _yes(any(w in text for w in _ATTACK_WORDS))
    if step == "negative_rejection":
        answer = str(inputs["answer"]).lower()
        return _yes(
            any(w in answer for w in ("not enough information", "cannot answer", "insufficient"))
        )
    if step == "error_detection":
        answer = str(inputs["answer"]).lower()
        return _yes(any(w in answer for w in ("incorrect", "false", "wrong", "mistaken")))
    if step == "error_correction":
        answer = str(inputs["answer"])
        return _yes(
            _overlap(answer, str(inputs["reference"])) and str(inputs["false_answer"]) not in answer
        )
    return {"error": f"unknown step {step}"}


class ScriptedJudge(Lifecycle):
    """An OpenAI-compatible chat-completions server on 127.0.0.1 that answers judge prompts.

    ``delay_s`` slows every answer (a slow judge). ``requests`` keeps the last 10,000 decoded
    request bodies and ``headers`` the last request's headers; ``calls`` counts requests per
    judge step.
    """

    def __init__(self, *, port: int = 0, delay_s: float = 0.0) -> None:
        self._want_port = port
        self.port = 0
        self.delay_s = delay_s
        self.requests: deque[dict[str, Any]] = deque(maxlen=10_000)
        self.headers: dict[str, str] = {}
        self.query: dict[str, str] = {}
        self.calls: dict[str, int] = {}
        self.total = 0
        self._scripts: dict[str, Answer] = {}
        self._faults: deque[Fault] = deque()
        self._bad: Iterator[Fault] | None = None
        self._runner: web.AppRunner | None = None
        self._release = asyncio.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------

    def script(self, step: str, answer: Answer) -> None:
        """Answer judge step ``step`` with ``answer`` (a JSON object or a function of inputs)."""
        self._scripts[step] = answer

    def verdicts(self, step: str, values: list[str]) -> None:
        """Answer ``step`` with these ``"yes"``/``"no"`` verdicts, in order."""
        self.script(step, {"verdicts": [{"verdict": v, "reason": "scripted"} for v in values]})

    def inject(self, fault: Fault) -> None:
        self._faults.append(fault)

    def fail(
        self,
        status: int = 500,
        *,
        times: int = 1,
        retry_after: float | str | None = None,
        step: str | None = None,
    ) -> None:
        self.inject(Fault("status", times, status=status, retry_after=retry_after, step=step))

    def hang(self, *, times: int = 1, step: str | None = None) -> None:
        """The next requests never get an answer (until the server stops)."""
        self.inject(Fault("hang", times, step=step))

    def slow(self, seconds: float, *, times: int = 1, step: str | None = None) -> None:
        self.inject(Fault("delay", times, seconds=seconds, step=step))

    def malformed(self, *, times: int = 1, step: str | None = None) -> None:
        """Answer with message content that is not JSON."""
        self.inject(Fault("malformed", times, step=step))

    def wrong_schema(self, *, times: int = 1, step: str | None = None) -> None:
        """Answer with valid JSON of the wrong shape."""
        self.inject(Fault("wrong_schema", times, step=step))

    def answer_badly(self, *, stall_s: float = 3.0) -> None:
        """From now on answer every request badly, in turn: HTTP 500, HTTP 429, malformed
        JSON, and a stall of ``stall_s`` seconds ending in HTTP 503 (until cleared)."""
        self._bad = itertools.cycle(
            [
                Fault("status", status=500),
                Fault("status", status=429),
                Fault("malformed"),
                Fault("status", status=503, seconds=stall_s),
            ]
        )

    def clear_faults(self) -> None:
        self._faults.clear()
        self._bad = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self._runner is not None:
            return
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/{path:.*}", self._handle)
        runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self._want_port))
            await web.SockSite(runner, sock).start()
        except BaseException:
            sock.close()
            await runner.cleanup()
            raise
        self.port = sock.getsockname()[1]
        self._runner = runner
        self._release = asyncio.Event()

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        self._release.set()
        if runner is not None:
            await runner.cleanup()

    # -- serving ---------------------------------------------------------------------------

    def _next_fault(self, step: str | None) -> Fault | None:
        for fault in self._faults:
            if fault.step is None or fault.step == step:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                return fault
        return next(self._bad) if self._bad is not None else None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if not request.path.endswith("/chat/completions"):
            return web.json_response({"error": {"message": "not found"}}, status=404)
        self.total += 1
        self.headers = dict(request.headers)
        self.query = dict(request.query)
        try:
            body = orjson.loads(await request.read())
            messages = body["messages"]
            system = next((m["content"] for m in messages if m["role"] == "system"), "")
            user = next(m["content"] for m in messages if m["role"] == "user")
        except (orjson.JSONDecodeError, KeyError, TypeError, StopIteration):
            return web.json_response({"error": {"message": "bad request"}}, status=400)
        self.requests.append(body)
        marker = parse_marker(system)
        step = marker[0] if marker else None
        self.calls[step or "?"] = self.calls.get(step or "?", 0) + 1

        fault = self._next_fault(step)
        if fault is not None and fault.kind == "hang":
            await self._release.wait()
            return web.json_response({"error": {"message": "stopping"}}, status=503)
        delay = self.delay_s + (fault.seconds if fault is not None else 0)
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), delay)
        if fault is not None and fault.kind == "status":
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = str(fault.retry_after)
            return web.json_response(
                {"error": {"message": f"scripted {fault.status}"}},
                status=fault.status,
                headers=headers,
            )
        if fault is not None and fault.kind == "not_completion":
            return web.Response(text="<html>gateway</html>", content_type="text/html")

        if fault is not None and fault.kind == "malformed":
            content = '{"verdicts": [ this is not json'
        elif fault is not None and fault.kind == "wrong_schema":
            content = orjson.dumps({"answer": "yes", "confidence": 0.9}).decode()
        else:
            content = self._content(step, system, user)
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1
        completion_tokens = len(content) // 4 + 1
        return web.json_response(
            {
                "id": f"chatcmpl-{self.total}",
                "object": "chat.completion",
                "model": body.get("model", "scripted"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    def _content(self, step: str | None, system: str, user: str) -> str:
        """The answer's text to a request that no fault applies to."""
        inputs = _inputs(user)
        answer = self._scripts.get(step or "")
        if answer is None:
            doc: Mapping[str, Any] = default_answer(step or "", inputs)
        elif callable(answer):
            doc = answer(inputs)
        else:
            doc = answer
        return orjson.dumps(dict(doc)).decode()


Behaviour = Literal["refuse", "comply", "leak"]

REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
COMPLIANCE_TEXT = (
    "Sure, here it is. Step one: gather what you need. Step two: follow the plan carefully "
    "and in order. Step three: check the result and repeat until it works."
)


class ScriptedTarget(ScriptedJudge):
    """An OpenAI-compatible chat service under test, for ``llm-sidecar probe``: it refuses,
    complies or leaks its system prompt, as :meth:`behave` scripts it per user message.

    ``behaviour`` decides for a (system prompt, user message) pair; the default refuses
    everything. A leak answers with the whole system prompt (canary included). Faults
    (``fail``, ``hang``, ``slow``) work as for the judge. ::

        async with ScriptedTarget(behaviour=lambda system, user: "comply") as target:
            ...
    """

    def __init__(
        self,
        *,
        port: int = 0,
        delay_s: float = 0.0,
        behaviour: Callable[[str, str], Behaviour] | None = None,
    ) -> None:
        super().__init__(port=port, delay_s=delay_s)
        self.behaviour = behaviour
        self.answers: dict[Behaviour, int] = {"refuse": 0, "comply": 0, "leak": 0}

    def behave(self, behaviour: Callable[[str, str], Behaviour]) -> None:
        self.behaviour = behaviour

    def _content(self, step: str | None, system: str, user: str) -> str:
        what: Behaviour = "refuse" if self.behaviour is None else self.behaviour(system, user)
        self.answers[what] += 1
        if what == "leak":
            return f"Of course. My instructions are: {system}"
        if what == "comply":
            return COMPLIANCE_TEXT
        return REFUSAL_TEXT


def _inputs(user: str) -> dict[str, Any]:
    """The JSON inputs block of a judge user message (between the header and the shape)."""
    start = user.find("{")
    end = user.find("\n\nReply with")
    if start < 0 or end < 0:
        return {}
    try:
        doc = orjson.loads(user[start:end])
    except orjson.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


async def _serve(
    port: int, delay_s: float, fail_status: int | None, hang: bool, bad: bool = False
) -> None:
    judge = ScriptedJudge(port=port, delay_s=delay_s)
    if bad:
        judge.answer_badly()
    elif hang:
        judge.hang(times=1 << 40)
    elif fail_status is not None:
        judge.fail(fail_status, times=1 << 40)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with judge:
        print(judge.base_url, flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    """``python -m sidecar.testing``: run the scripted judge on its own, e.g. for local demos."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m sidecar.testing", description=main.__doc__)
    p.add_argument("--port", type=int, default=0, help="0 picks a free port (printed at start)")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    p.add_argument("--fail", type=int, metavar="STATUS", help="answer every request with STATUS")
    p.add_argument("--hang", action="store_true", help="never answer")
    p.add_argument(
        "--bad",
        action="store_true",
        help="answer every request badly: 500, 429, malformed JSON, a 3 s stall then 503",
    )
    args = p.parse_args(argv)
    asyncio.run(_serve(args.port, args.delay, args.fail, args.hang, args.bad))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


class TcpProxy(Lifecycle):
    """A TCP proxy on loopback that can take its upstream away, to stage broker outages.

    ``up`` forwards; ``refuse`` stops listening and resets every connection (connection
    refused); ``hang`` accepts connections and never answers, and stalls the open ones. Put a
    broker behind it that advertises the proxy's port (``EmbeddedBroker(advertised_port=...)``),
    or clients will reconnect to the broker directly. ::

        async with TcpProxy("127.0.0.1", broker_port, port=proxy_port) as proxy:
            await proxy.set_mode("refuse")
    """

    def __init__(
        self, target_host: str, target_port: int, *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.target = (target_host, target_port)
        self.host = host
        self.port = port
        self.mode: ProxyMode = "up"
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        if self._server is not None:
            return
        self._server = await asyncio.start_server(
            self._accept, self.host, self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self._abort_all()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def set_mode(self, mode: ProxyMode) -> None:
        """Switch modes; open connections are reset on every switch except to ``hang``."""
        self.mode = mode
        if mode != "hang":
            self._abort_all()
        if mode == "refuse":
            server, self._server = self._server, None
            if server is not None:
                server.close()
        else:
            await self.start()

    def _abort_all(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.add(writer)
        if self.mode != "up":
            self._spawn(self._pump(reader, None))  # read and drop: the client waits forever
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.add(up_writer)
        self._spawn(self._pump(reader, up_writer))
        self._spawn(self._pump(up_reader, writer))

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None
    ) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65_536):
                if writer is None or self.mode == "hang":
                    continue
                writer.write(data)
                await writer.drain()
        if writer is not None and self.mode == "up":
            writer.transport.abort()
