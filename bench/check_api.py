"""``POST /v1/check`` under wrk, beside a bare aiohttp handler measured in the same run.

    python bench/check_api.py [--duration 10] [--connections 50] [--rounds 1]
                              [--rules rules/default.yaml] [--before PATH]

Starts the sidecar's HTTP server (``App`` with the default rule pack, the check API on, no
stream) in its own process pinned to core 1 (``taskset -c 1``), and drives it with
``wrk -t1 -c50 --latency`` and a POST Lua script from core 0, one 1 KB event per request.
Beside it, on the same core and with the same wrk, a bare aiohttp handler that reads the body
and answers a small JSON document: the ceiling of the HTTP stack on this machine. Each is
also measured over one connection. ``--before PATH`` measures a second checkout of llm-sidecar
(say ``git worktree add /tmp/before main``) the same way, in the same run. ``--loop asyncio
uvloop`` runs every server on both event loops (uvloop is not a dependency: install it first).

Prints requests/s, p50/p99, the non-2xx count and the server's CPU time per request (user
plus system, all threads: the figure that holds when other work shares the cores) of every
run, the load average before and after, and the sidecar's own request count by outcome (and
requests per batch). Needs ``wrk`` and ``taskset`` (Linux). ``git archive main | tar -x -C
/tmp/before`` is another way to get a checkout for ``--before``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent
SERVER_CORE = "1"
CLIENT_CORE = "0"


def make_event() -> bytes:
    """One event of about 1 KB, words as bench/throughput.py draws them."""
    sys.path.insert(0, str(REPO / "bench"))
    from throughput import make_event as draw

    doc = orjson.loads(draw(1, random.Random(7)))
    doc["labels"] = {"source": "bench"}
    while len(orjson.dumps(doc)) < 1000:
        doc["response"] += " Thanks."
    return orjson.dumps(doc)


# -- the servers (run in a child process, pinned) ----------------------------------------------


async def serve_bare(port: int) -> None:
    from aiohttp import web

    async def check(request: web.Request) -> web.Response:
        body = await request.read()
        return web.Response(
            body=orjson.dumps({"id": "x", "passed": True, "n": len(body)}),
            content_type="application/json",
        )

    app = web.Application()
    app.router.add_post("/v1/check", check)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await asyncio.Event().wait()


async def serve_sidecar(port: int, rules: list[str]) -> None:
    from prometheus_client import CollectorRegistry

    from sidecar.app import App
    from sidecar.settings import Settings
    from sidecar.sinks import Sink
    from sidecar.sources.file import FileSource

    empty = Path(tempfile.mkdtemp()) / "none.jsonl"
    empty.write_text("")
    settings = Settings(
        rules=[Path(r) for r in rules],
        reload_interval_s=0,
        http={"host": "127.0.0.1", "port": port},
    )
    app = App(settings, source=FileSource(empty), sink=Sink(), registry=CollectorRegistry())
    await app.start()
    app.settle_heap()  # as `llm-sidecar run` does (limits.tune_gc)
    try:
        await asyncio.Event().wait()
    finally:
        await app.stop()


# -- the driver ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(
    kind: str, rules: list[str], src: Path, loop: str
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    cmd = ["taskset", "-c", SERVER_CORE, sys.executable, str(Path(__file__).resolve())]
    cmd += ["--serve", kind, "--port", str(port), "--loop", loop, "--rules", *rules]
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen(cmd, env=env, cwd=src)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the {kind} server exited with status {proc.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/check", timeout=1)
        except urllib.error.HTTPError:
            return proc, port  # 405 to a GET: it is up
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the {kind} server did not come up within 30 s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


LUA = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[%s]]
"""


def to_ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def cpu_seconds(pid: int) -> float:
    """User plus system time of a process so far, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(port: int, script: Path, connections: int, duration: int, pid: int) -> dict[str, float]:
    cpu = cpu_seconds(pid)
    cmd = ["taskset", "-c", CLIENT_CORE, "wrk", "-t1", f"-c{connections}", f"-d{duration}s"]
    cmd += ["--latency", "-s", str(script), f"http://127.0.0.1:{port}/v1/check"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(pid) - cpu
    done = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = to_ms(re.search(r"\s50%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    p99 = to_ms(re.search(r"\s99%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    return {
        "rate": rate,
        "cpu_us": cpu / max(done, 1) * 1e6,
        "p50": p50,
        "p99": p99,
        "non2xx": float(bad.group(1)) if bad else 0.0,
        "socket_errors": float(sum(int(n) for n in re.findall(r"\d+", errors.group(0))))
        if errors
        else 0.0,
    }


def outcomes(port: int) -> str:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    found = re.findall(r'llm_sidecar_check_api_requests_total\{outcome="(\w+)"\} (\S+)', text)
    said = ", ".join(f"{k} {float(v):.0f}" for k, v in found if float(v))
    count = re.search(r"llm_sidecar_check_api_batch_requests_count (\S+)", text)
    total = re.search(r"llm_sidecar_check_api_batch_requests_sum (\S+)", text)
    if count and total and float(count.group(1)):
        said += f"; {float(total.group(1)) / float(count.group(1)):.1f} requests per batch"
    return said


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1, help="repeat the set of runs")
    parser.add_argument("--rules", nargs="+", default=[str(REPO / "rules" / "default.yaml")])
    parser.add_argument("--before", type=Path, help="another llm-sidecar checkout to measure")
    parser.add_argument(
        "--loop",
        nargs="+",
        choices=["asyncio", "uvloop"],
        default=["asyncio"],
        help="event loop(s) of the servers; with two, every server runs on each",
    )
    parser.add_argument("--serve", choices=["bare", "sidecar"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        run = asyncio.run
        if args.loop == ["uvloop"]:
            import uvloop  # not a dependency: pip install uvloop to compare

            run = uvloop.run
        run(serve_bare(args.port) if args.serve == "bare" else serve_sidecar(args.port, args.rules))
        return
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install -y wrk util-linux)")
    if os.cpu_count() is None or os.cpu_count() < 2:  # type: ignore[operator]
        raise SystemExit("needs two cores: the server on core 1, wrk on core 0")

    body = make_event()
    script = Path(tempfile.mkdtemp()) / "post.lua"
    script.write_text(LUA % body.decode())
    targets = [("bare aiohttp", "bare", REPO)]
    if args.before is not None:
        targets.append(("sidecar before", "sidecar", args.before.resolve()))
    targets.append(("sidecar", "sidecar", REPO))
    print(
        f"POST /v1/check, {len(body)}-byte event, wrk -t1 -d{args.duration}s on core "
        f"{CLIENT_CORE}, server on core {SERVER_CORE}; load average before {loadavg()}"
    )
    print(
        f"{'server':<22} {'conns':>5} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'non-2xx':>8} {'CPU µs/req':>10}"
    )
    for _ in range(args.rounds):
        for (label, kind, src), loop in [(t, lp) for t in targets for lp in args.loop]:
            if len(args.loop) > 1:
                label = f"{label} {loop}"
            proc, port = start_server(kind, args.rules, src, loop)
            try:
                for conns in (args.connections, 1):
                    r = run_wrk(port, script, conns, args.duration, proc.pid)
                    print(
                        f"{label:<22} {conns:>5} {r['rate']:>8.0f} {r['p50']:>7.2f} "
                        f"{r['p99']:>7.2f} {r['non2xx']:>8.0f} {r['cpu_us']:>10.0f}"
                        + (
                            f"  socket errors {r['socket_errors']:.0f}"
                            if r["socket_errors"]
                            else ""
                        )
                    )
                if kind == "sidecar":
                    print(f"{'':<22} outcomes: {outcomes(port)}")
            finally:
                stop_server(proc)
    print(f"load average after {loadavg()}")


if __name__ == "__main__":
    main()
