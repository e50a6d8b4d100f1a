"""The ``llm-sidecar`` command: run | demo | replay | probe | judge | validate | version.

Every expected failure (bad options, settings, rule files) ends in one
line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import signal
import sys

if sys.argv[1:2] in (["run"], ["judge"]):
    # SIGHUP is "reload the rules" to these two, but only once their handler is installed,
    # after the imports and the settings (most of a second): until then it would end the
    # process. Ignored until then: the rules about to load are the current ones anyway.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

import argparse
import asyncio
import functools
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .errors import ConfigError, EmbeddedBrokerError, RuleSetError, SidecarError, rules_error
from .formats.config import FORMATS
from .settings import Settings, load_ruleset, load_settings
from .workers import MAX_WORKERS

__all__ = ["main"]

log = logging.getLogger("sidecar")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
RED_TEAM_FORMATS = ("garak", "promptfoo")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit 2), like every other error."""

    def error(self, message: str) -> NoReturn:
        if message == "the following arguments are required: file" and any(
            a.dest == "rules" for a in self._actions
        ):
            # --rules takes every path after it: "replay --rules r.yaml events.jsonl" reads
            # the events file as a second rule path and then misses FILE.
            message += " (after --rules, every path is a rule path: put FILE before --rules)"
        self.exit(EXIT_USAGE, f"llm-sidecar: error: {message} (see {self.prog} --help)\n")


class _Once(argparse.Action):
    """A file option that may be given once: a second one used to replace the first without
    a word (and an invalid first --config was never read)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} is given twice: give one")
        setattr(namespace, self.dest, values)


def _whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, not {n}")
        return n

    return parse


def _port(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535, not {n}")
    return n


MAX_DEMO_PARTITIONS = 64


def _worker(text: str) -> tuple[int, int]:
    """``I/N``: this process is worker I of N (set by ``run --workers``)."""
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N") from None
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"{text!r}: I must be between 0 and N-1")
    return i, n


_SETTINGS_HELP = """\
settings come from LLM_SIDECAR_* environment variables (nested with __, e.g.
LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS=kafka:9092; lists as a,b,c or JSON), which override the
YAML file given with --config. A LLM_SIDECAR_* variable that names no setting is an error.
docs/configuration.md lists every key and its default.

exit status: 0 ok, 1 runtime failure, 2 usage or configuration error, 130 interrupted"""


def _parser() -> argparse.ArgumentParser:
    # --log-level is accepted before and after the subcommand; SUPPRESS keeps a subcommand's
    # unset copy from overwriting a value given before it.
    common = _Parser(add_help=False)
    common.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default=argparse.SUPPRESS,
        help="log level (overrides log_level)",
    )
    p = _Parser(
        prog="llm-sidecar",
        description="Streaming guardrail and quality monitor for LLM services.",
        epilog="exit status: 0 ok, 1 runtime failure, 2 usage or configuration error, "
        "130 interrupted",
    )
    p.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default=None,
        help="log level (overrides log_level)",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    text = argparse.RawDescriptionHelpFormatter
    # demo and replay take rule paths the same way.
    with_rules = _Parser(add_help=False)
    with_rules.add_argument(
        "--rules",
        type=Path,
        action="extend",
        nargs="+",
        metavar="PATH",
        help="rule files or directories (repeatable; default: rules, else the bundled pack)",
    )

    run = sub.add_parser(
        "run",
        parents=[common],
        help="run the sidecar (the production service)",
        description="Consume events from Kafka or MQTT, run the rules on every event, "
        "judge a sample, export /metrics and commit.",
        epilog=_SETTINGS_HELP,
        formatter_class=text,
    )
    run.add_argument(
        "--config", type=Path, action=_Once, help="YAML settings file (environment overrides it)"
    )
    run.add_argument(
        "--workers",
        type=_whole_number(1, MAX_WORKERS),
        default=1,
        help="check processes to start in the consumer group (Kafka only; default 1): "
        "worker i serves HTTP on http.port + i, the judge budgets are divided among them",
    )
    run.add_argument("--worker", type=_worker, default=None, help=argparse.SUPPRESS)

    demo = sub.add_parser(
        "demo",
        parents=[common, with_rules],
        help="start an embedded broker, publish the sample stream and check it live",
        description="Start an embedded Kafka-compatible broker, publish a JSONL stream to it and "
        "run the sidecar on it as run would (LLM_SIDECAR_* settings and --config apply, except "
        "source and kafka.*, which are its own), serving /metrics and printing a summary.",
        epilog=_SETTINGS_HELP,
        formatter_class=text,
    )
    demo.add_argument(
        "--port", type=_port, default=None, help="HTTP port for /metrics (default 9464)"
    )
    demo.add_argument(
        "--events", type=Path, help="JSONL stream to publish (default: the bundled sample)"
    )
    demo.add_argument("--once", action="store_true", help="exit 0 once the stream is drained")
    demo.add_argument(
        "--partitions",
        type=_whole_number(1, MAX_DEMO_PARTITIONS),
        default=3,
        help=f"partitions of the demo topic, 1 to {MAX_DEMO_PARTITIONS} (default 3)",
    )
    demo.add_argument(
        "--format",
        choices=FORMATS,
        default="llm-sidecar-v1",
        help="publish the stream as native events or as OTLP traces (as a Collector would)",
    )
    demo.add_argument(
        "--config", type=Path, action=_Once, help="YAML settings file (environment overrides it)"
    )

    replay = sub.add_parser(
        "replay",
        parents=[common, with_rules],
        help="run the checks over a JSONL file, without a broker",
        description="Run the rules over a JSONL file (- for standard input): one verdict per "
        "event, pass rates per rule. Lines that are not events are reported and counted. "
        "Exits 1 when no line is an event, or when --judge scored none of the sampled events.",
        epilog=_SETTINGS_HELP,
        formatter_class=text,
    )
    replay.add_argument("file", help="JSONL events, or - for standard input")
    replay.add_argument(
        "--format",
        choices=[*FORMATS, *RED_TEAM_FORMATS],
        help="what the file holds (default: input.format, llm-sidecar-v1); otlp-json is one "
        "request per line, otlp-proto length-prefixed requests (kcat -f '%%R%%s'); garak a "
        "garak report (JSONL), promptfoo a promptfoo results file: their attacks as probes",
    )
    replay.add_argument(
        "--out", type=Path, action=_Once, help="write one verdict per event here (JSONL)"
    )
    replay.add_argument("--config", type=Path, action=_Once, help="YAML settings file")
    replay.add_argument(
        "--judge",
        action="store_true",
        help="also score sampled events with the LLM judge at judge.base_url (which must be "
        "set); scores go into --out",
    )
    replay.add_argument(
        "--report",
        type=Path,
        action=_Once,
        help="write a self-contained HTML report of the run here",
    )
    replay.add_argument(
        "--intervals",
        choices=["analytic", "bootstrap"],
        help="bounds of rates in the report: Wilson (default) or BCa bootstrap",
    )

    judge = sub.add_parser(
        "judge",
        parents=[common],
        help="judge worker: consume the judge topic (scale-out mode) and score events",
        description="Consume judge.topic, score the events with the LLM judge, publish the "
        "scored verdicts and commit after judging.",
        epilog=_SETTINGS_HELP,
        formatter_class=text,
    )
    judge.add_argument(
        "--config", type=Path, action=_Once, help="YAML settings file (environment overrides it)"
    )

    probe = sub.add_parser(
        "probe",
        parents=[common],
        help="send the attack library to the service's model and publish the answers as events",
        description="Red-team probing: send the attack library's vectors to the OpenAI-"
        "compatible target at probe.base_url with the service's system prompt, within the "
        "probe budget, and publish each answer as an event (attack, labels.origin=probe) to "
        "the events topic, where run scores robustness and leakage.",
        epilog=_SETTINGS_HELP,
        formatter_class=text,
    )
    probe.add_argument(
        "--config", type=Path, action=_Once, help="YAML settings file (environment overrides it)"
    )
    probe.add_argument(
        "--dry-run", action="store_true", help="print the plan and exit; opens no connection"
    )
    probe.add_argument(
        "--once", action="store_true", help="send every vector once, then exit (no topic)"
    )
    probe.add_argument(
        "--out", type=Path, action=_Once, help="with --once: write the events here (JSONL)"
    )
    probe.add_argument(
        "--score",
        action="store_true",
        help="with --once: check the events in this process, as replay does",
    )
    probe.add_argument(
        "--report", type=Path, action=_Once, help="with --score: write the HTML report here"
    )
    probe.add_argument(
        "--seed", type=_whole_number(0, 2**32 - 1), default=None, help="fix the vector order"
    )

    validate = sub.add_parser(
        "validate",
        parents=[common],
        help="check rule files; exit 1 if any is invalid",
        description="Load and check rule files: exit 0 when all are valid, 1 with file, rule id "
        "and reason for every problem, 2 when a path does not exist.",
    )
    validate.add_argument("paths", type=Path, nargs="+", help="rule files or directories")
    validate.add_argument(
        "--config", type=Path, action=_Once, help="YAML settings file (system prompts, secrets)"
    )

    sub.add_parser(
        "version", parents=[common], help="print the version", description="Print the version."
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    global _fatal_line
    _fatal_line = _plain_fatal_line  # until the command has set up its logs
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args)
    except (ConfigError, EmbeddedBrokerError, SidecarError) as exc:
        print(_fatal_line(str(exc)), file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `llm-sidecar validate rules/ | head -1`: the reader is gone
        # Point stdout at nothing, so that the flush at exit does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


class JsonFormatter(logging.Formatter):
    """One JSON object per line: what log collectors parse without a custom regex."""

    def __init__(self, worker: str | None = None) -> None:
        super().__init__()
        self.worker = worker

    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "ts": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if self.worker is not None:
            doc["worker"] = self.worker
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False)


def _plain_fatal_line(message: str, worker: str | None = None) -> str:
    line = f"llm-sidecar: error: {message}"
    if worker is None:
        return line
    return "\n".join(f"[worker {worker}] {part}" for part in line.splitlines())


_fatal_line: Callable[[str], str] = _plain_fatal_line
"""How :func:`main` writes the one line of an expected failure: as the logs are written, once
they are set up (a JSON object with ``log_format: json``, the worker named in a worker)."""


def _setup_logging(
    settings: Settings | None, override: str | None, *, worker: str | None = None
) -> None:
    """Log to stderr; a worker of ``run --workers`` names itself in every line."""
    global _fatal_line
    level = override or (settings.log_level if settings else "INFO")
    handler = logging.StreamHandler(sys.stderr)
    if settings is not None and settings.log_format == "json":
        formatter = JsonFormatter(worker)
        handler.setFormatter(formatter)

        def json_line(message: str) -> str:
            record = logging.makeLogRecord(
                {"name": "sidecar", "levelno": logging.ERROR, "levelname": "ERROR", "msg": message}
            )
            return formatter.format(record)

        _fatal_line = json_line
    else:
        who = "" if worker is None else f"[worker {worker}] "
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s %(levelname)-7s {who}%(name)s: %(message)s")
        )
        _fatal_line = functools.partial(_plain_fatal_line, worker=worker)
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # aiokafka logs every rebalance step at INFO; keep it for debugging only.
    logging.getLogger("aiokafka").setLevel(max(logging.getLevelName(level), logging.WARNING))


_SCORER_STATES = {
    "built": "compiled",
    "missing": "numpy (the compiled one was not built: install with a C compiler to build it)",
    "stale": "numpy (the compiled one was built from another version of its C file:"
    " pip install -e . rebuilds it)",
}


def _dispatch(args: argparse.Namespace) -> int:
    cmd = args.command
    if cmd == "version":
        from .checks.refusal_model import native_state

        print(f"llm-sidecar {__version__}")
        print("refusal model's batch scorer: " + _SCORER_STATES[native_state()])
        return EXIT_OK
    if cmd == "validate":
        return _validate(args)
    if cmd == "replay":
        from .replay import replay

        settings = load_settings(args.config, **({"rules": args.rules} if args.rules else {}))
        if args.intervals:
            windows = settings.windows.model_copy(update={"intervals": args.intervals})
            settings = settings.model_copy(update={"windows": windows})
        _setup_logging(settings, args.log_level or "WARNING")
        if args.format in RED_TEAM_FORMATS:
            return _replay_red_team(settings, args)
        return replay(
            settings,
            args.file,
            out=args.out,
            judge=args.judge,
            report=args.report,
            fmt=args.format,
        )
    if cmd == "run":
        from .app import App, serve
        from .workers import SAME_STOP_WITHIN_S, run_workers, worker_settings

        settings = load_settings(args.config)
        index, workers = args.worker or (0, 1)
        _setup_logging(settings, args.log_level, worker=f"{index}" if workers > 1 else None)
        if args.workers > 1:
            _check_rules(settings)  # once, before any worker starts
            passed = ["--config", str(args.config)] if args.config else []
            if args.log_level:
                passed += ["--log-level", args.log_level]
            return run_workers(settings, args.workers, passed)
        settings = worker_settings(settings, index, workers)
        app = App(settings, judge_share=workers)
        same_stop = SAME_STOP_WITHIN_S if workers > 1 else 0.0
        return asyncio.run(serve(settings, app=app, same_stop_within_s=same_stop))
    if cmd == "judge":
        from .app import serve
        from .judge.worker import JudgeWorker

        settings = load_settings(args.config)
        _setup_logging(settings, args.log_level)
        if not settings.judge.topic:
            raise ConfigError("llm-sidecar judge needs judge.topic (LLM_SIDECAR_JUDGE__TOPIC)")
        if settings.source == "mqtt":
            raise ConfigError(
                "llm-sidecar judge reads judge.topic from Kafka, and a source: mqtt sidecar "
                "publishes no samples there (it judges in process): run the judge with the "
                "Kafka settings of a source: kafka deployment"
            )
        return asyncio.run(serve(settings, app=JudgeWorker(settings)))
    if cmd == "probe":
        from .probe.command import probe_command

        settings = load_settings(args.config)
        _setup_logging(settings, args.log_level or ("WARNING" if args.once else None))
        # httpx logs every request at INFO: one line per probe says nothing the metrics don't.
        level = logging.getLogger().getEffectiveLevel()
        logging.getLogger("httpx").setLevel(max(level, logging.WARNING))
        return probe_command(
            settings,
            dry_run=args.dry_run,
            once=args.once,
            out=args.out,
            score=args.score,
            report=args.report,
            seed=args.seed,
        )
    if cmd == "demo":
        from .demo import demo, demo_settings

        settings = demo_settings(args.config, rules=args.rules, port=args.port)
        _setup_logging(settings, args.log_level or "WARNING")
        return asyncio.run(
            demo(
                settings,
                events=args.events,
                once=args.once,
                partitions=args.partitions,
                fmt=args.format,
                probe=settings.probe.enabled,
            )
        )
    raise ConfigError(f"unknown command {cmd}")  # argparse prevents this


def _replay_red_team(settings: Settings, args: argparse.Namespace) -> int:
    """``replay --format garak|promptfoo``: the tool's attempts as events, then replay."""
    import tempfile

    import orjson

    from .formats.redteam import from_garak, from_promptfoo
    from .replay import replay

    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {args.file}: {exc.strerror}") from None
    if args.format == "garak":
        events, skipped = from_garak(raw.splitlines())
    else:
        try:
            events, skipped = from_promptfoo(raw)
        except ValueError as exc:
            raise ConfigError(f"{args.file} is not a promptfoo results file: {exc}") from None
    for reason, n in sorted(skipped.items()):
        print(f"{args.format}: {n} record(s) left out: {reason}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
        return replay(
            settings, str(path), out=args.out, judge=args.judge, report=args.report, fmt=None
        )


def _check_rules(settings: Settings) -> None:
    """Load the rules once, as ``run`` would, to fail with the same message before forking."""
    try:
        load_ruleset(settings)
    except RuleSetError as exc:
        raise ConfigError(rules_error(exc)) from None


def _validate(args: argparse.Namespace) -> int:
    settings = load_settings(args.config)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise ConfigError(f"no such file or directory: {', '.join(missing)}")
    attack_paths, rule_paths = _attack_paths(args.paths)
    status = EXIT_OK
    if attack_paths:
        status = _validate_attacks(attack_paths)
        if not rule_paths:
            return status
    try:
        ruleset = load_ruleset(settings, rule_paths)
    except RuleSetError as exc:
        for err in exc.errors:
            print(f"invalid: {err}", file=sys.stderr)
            if err.context:
                print(err.context, file=sys.stderr)
        if len(exc.errors) > 1:
            print(f"{len(exc.errors)} problems found", file=sys.stderr)
        return EXIT_FAILED
    try:
        settings.judge.merge(ruleset.judge)
    except ConfigError as exc:
        print(f"invalid: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(
        f"ok: {len(ruleset.rules)} rules in {len(ruleset.files)} file(s), version {ruleset.version}"
    )
    from .rules import rule_notes

    for note in rule_notes(ruleset):
        print(f"note: {note}")
    from .scan import ScanPlan

    for line in ScanPlan(ruleset.rules).report(ruleset.rules):
        print(line)
    return status


def _attack_paths(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """``paths`` split into attack library files and rule files (a directory of attack files
    is one of the first)."""
    from .probe.attacks import is_attack_file

    attacks: list[Path] = []
    rules: list[Path] = []
    for p in paths:
        files = sorted([*p.glob("*.yaml"), *p.glob("*.yml")]) if p.is_dir() else [p]
        if files and all(is_attack_file(f) for f in files):
            attacks.append(p)
        else:
            rules.append(p)
    return attacks, rules


def _validate_attacks(paths: Sequence[Path]) -> int:
    from .probe.attacks import load_library

    try:
        library = load_library(paths, builtin=False)
    except RuleSetError as exc:
        for err in exc.errors:
            print(f"invalid: {str(err).replace(': rule ', ': vector ', 1)}", file=sys.stderr)
        if len(exc.errors) > 1:
            print(f"{len(exc.errors)} problems found", file=sys.stderr)
        return EXIT_FAILED
    counts = library.counts()
    by = ", ".join(
        f"{c} {counts[(c, 'robustness')] + counts[(c, 'leakage')]}"
        for c in ("basic", "intermediate", "advanced")
    )
    leakage = sum(n for (_, kind), n in counts.items() if kind == "leakage")
    print(
        f"ok: {len(library.vectors)} attack vectors in {len(library.files)} file(s) ({by}; "
        f"{leakage} leakage)"
    )
    return EXIT_OK
