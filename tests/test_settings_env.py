"""Settings from the environment: plain lists and mappings, one-line errors, hints."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.errors import ConfigError
from sidecar.settings import load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("LLM_SIDECAR_"):
            monkeypatch.delenv(key)


def test_lists_may_be_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_RULES", "/etc/llm-sidecar/rules, /etc/extra.yaml")
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__TOPICS", "llm-events")
    monkeypatch.setenv("LLM_SIDECAR_LABELS__ROUTES", "/chat,/search")
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__TRIGGERS__FAILED_CHECKS", "refusal")
    monkeypatch.setenv("LLM_SIDECAR_WINDOWS__WINDOWS", "1m,5m")
    s = load_settings()
    assert s.rules == [Path("/etc/llm-sidecar/rules"), Path("/etc/extra.yaml")]
    assert s.kafka.topics == ["llm-events"]
    assert s.labels.routes == ["/chat", "/search"]
    assert s.judge.triggers.failed_checks == ["refusal"]
    assert s.windows.windows == ["1m", "5m"]


def test_json_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__TOPICS", '["a", "b,c"]')
    monkeypatch.setenv("LLM_SIDECAR_SYSTEM_PROMPTS", '{"support": "Be brief, be kind."}')
    s = load_settings()
    assert s.kafka.topics == ["a", "b,c"]
    assert s.system_prompts == {"support": "Be brief, be kind."}


def test_mappings_may_be_key_value_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_SYSTEM_PROMPTS", "support=You help, sales=You sell")
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__ROUTE_RATES", "/chat=0.5")
    s = load_settings()
    assert s.system_prompts == {"support": "You help", "sales": "You sell"}
    assert s.judge.route_rates == {"/chat": 0.5}


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("LLM_SIDECAR_KAFKA__TOPICS", '["a",', "topics: '[\"a\",' is not valid JSON"),
        ("LLM_SIDECAR_SECRETS", "canary", "secrets: 'canary' is not key=value"),
        ("LLM_SIDECAR_KAFKA__MAX_BATCH", "-1", "kafka.max_batch: Input should be greater"),
        ("LLM_SIDECAR_MQTT__HOST", "mqtt..svc", "mqtt.host: 'mqtt..svc' is not a host name"),
        ("LLM_SIDECAR_MQTT__HOST", "x" * 64, "is not a host name"),
        ("LLM_SIDECAR_MQTT__HOST", "mqtt://broker", "without a scheme"),
        ("LLM_SIDECAR_MQTT__HOST", "broker:1883", "the port as mqtt.port"),
        # The Kafka client raised these as a traceback at the first connection, or waited
        # for ever as if the cluster were down.
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "kafka:notaport", "'kafka:notaport': the port"),
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "a:9092,b:9092x", "'b:9092x': the port"),
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "a:70000", "from 1 to 65535"),
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", " ", "give at least one host:port"),
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "a:9092,,b:9092", "an empty server name"),
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "kafka://a:9092", "without a scheme"),
        ("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", "[::1:9092", "[address]:port"),
        # ...and the judge's HTTP client, at its first request.
        ("LLM_SIDECAR_JUDGE__BASE_URL", "http://judge:80o0/v1", "Invalid port: '80o0'"),
        ("LLM_SIDECAR_JUDGE__BASE_URL", "http://judge:99999/v1", "port 99999 is not from 1"),
        ("LLM_SIDECAR_JUDGE__BASE_URL", "http://", "no host"),
    ],
)
def test_bad_values_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("invalid settings (from the environment): ")
    assert message in text


def test_validator_messages_lose_pydantics_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "needs sasl_plain_username" in str(info.value)
    assert "Value error" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("LLM_SIDECAR_LOGLEVEL", "LLM_SIDECAR_LOG_LEVEL"),
        ("LLM_SIDECAR_KAFKA_TOPICS", "LLM_SIDECAR_KAFKA__TOPICS"),
        ("LLM_SIDECAR_JUDGE_BASE_URL", "LLM_SIDECAR_JUDGE__BASE_URL"),
    ],
)
def test_unknown_variables_name_the_likely_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, hint: str
) -> None:
    monkeypatch.setenv(name, "x")
    with pytest.raises(ConfigError, match=f"did you mean {hint}\\?"):
        load_settings()


@pytest.mark.parametrize(
    ("servers", "parsed"),
    [
        ("kafka:9092", [("kafka", 9092)]),
        ("kafka", [("kafka", 9092)]),  # the client's default port
        ("a:1, b:2", [("a", 1), ("b", 2)]),
        ("[::1]:9093", [("::1", 9093)]),
        ("::1", [("::1", 9092)]),
    ],
)
def test_bootstrap_servers_are_read_as_the_kafka_client_reads_them(
    monkeypatch: pytest.MonkeyPatch, servers: str, parsed: list[tuple[str, int]]
) -> None:
    from sidecar.settings import kafka_server

    monkeypatch.setenv("LLM_SIDECAR_KAFKA__BOOTSTRAP_SERVERS", servers)
    s = load_settings()
    assert [kafka_server(e) for e in s.kafka.bootstrap_servers.split(",")] == parsed


def _openssl(*args: str) -> None:
    import subprocess

    from tests.conftest import require_tool

    subprocess.run([require_tool("openssl"), *args], check=True, capture_output=True)


def test_kafka_tls_files_that_do_not_load_are_named_at_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A CA file or client certificate that is not PEM, or an encrypted key without its
    password, used to surface as an ssl traceback at the first connection (and the key's
    password as a prompt on the terminal). They are settings errors now, naming the files."""
    key, cert = tmp_path / "client.key", tmp_path / "client.pem"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=client",
             "-days", "1", "-keyout", str(key), "-out", str(cert))  # fmt: skip
    locked = tmp_path / "locked.key"
    _openssl("rsa", "-in", str(key), "-aes256", "-passout", "pass:s3cret", "-out", str(locked))
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate\n")
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SECURITY_PROTOCOL", "SSL")
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_CAFILE", str(cert))
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_CERTFILE", str(cert))
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_KEYFILE", str(key))
    assert load_settings().kafka.ssl_keyfile == key  # a good set loads

    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_KEYFILE", str(locked))
    with pytest.raises(ConfigError, match=r"the TLS files do not load .*ssl_keyfile"):
        load_settings()  # no password: an error, not a prompt
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_PASSWORD", "s3cret")
    assert load_settings().kafka.ssl_keyfile == locked

    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_CAFILE", str(not_pem))
    with pytest.raises(ConfigError, match=f"the TLS files do not load \\(ssl_cafile {not_pem}"):
        load_settings()
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_CAFILE", str(tmp_path))
    with pytest.raises(ConfigError, match=f"ssl_cafile {tmp_path}: a directory"):
        load_settings()
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SSL_CAFILE", "/nonexistent/ca.pem")
    with pytest.raises(ConfigError, match=r"ssl_cafile /nonexistent/ca\.pem: no such file"):
        load_settings()
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SECURITY_PROTOCOL", "PLAINTEXT")
    assert load_settings().kafka.ssl_cafile is not None  # not read without TLS


def test_config_file_mistakes_say_what_they_are(tmp_path: Path) -> None:
    """A directory, a key given twice (the first silently lost) and a rule file given as
    the settings file each get their own one-line error."""
    with pytest.raises(ConfigError, match=f"config file {tmp_path} is a directory"):
        load_settings(tmp_path)
    twice = tmp_path / "twice.yaml"
    twice.write_text("http:\n  port: 0\nhttp:\n  port: 9000\n")
    with pytest.raises(ConfigError, match=r"line 3, column 1: .* key 'http' is given twice"):
        load_settings(twice)
    rules = tmp_path / "rules.yaml"
    rules.write_text("version: 1\nrules:\n  - {id: a, check: length_greater_than}\n")
    with pytest.raises(ConfigError, match=r"is a rule file .*: give rule files with --rules"):
        load_settings(rules)
    paths = tmp_path / "settings.yaml"
    paths.write_text(f"rules: [{rules}]\n")
    assert load_settings(paths).rules == [rules]  # a list of paths is what rules: takes


def test_variable_names_are_checked_without_regard_to_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pydantic-settings reads them in any case; the check for unknown names did not, so
    LLM_SIDECAR_source=xyz was called unknown (with a hint about double underscores) and a
    lower-case typo was silently ignored."""
    monkeypatch.setenv("LLM_SIDECAR_source", "xyz")
    with pytest.raises(ConfigError, match="source: Input should be 'kafka' or 'mqtt'"):
        load_settings()
    monkeypatch.delenv("LLM_SIDECAR_source")
    monkeypatch.setenv("llm_sidecar_judge__sample_rate", "0.25")
    assert load_settings().judge.sample_rate == 0.25
    monkeypatch.setenv("llm_sidecar_kafka_topics", "x")
    with pytest.raises(
        ConfigError, match="llm_sidecar_kafka_topics \\(did you mean LLM_SIDECAR_KAFKA__TOPICS\\?"
    ):
        load_settings()


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("LLM_SIDECAR_KAFKA__DLQ_TOPIC", "kafka.dlq_topic"),
        ("LLM_SIDECAR_KAFKA__VERDICT_TOPIC", "kafka.verdict_topic"),
        ("LLM_SIDECAR_JUDGE__TOPIC", "judge.topic"),
    ],
)
def test_a_topic_llm_sidecar_writes_cannot_also_be_one_it_reads(
    monkeypatch: pytest.MonkeyPatch, name: str, setting: str
) -> None:
    """With the DLQ on the input topic, one bad record became 1,281 dead letters in 24 s;
    with the judge's samples there, one attack event was checked 775 times in 15 s."""
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__TOPICS", "llm-events,other")
    monkeypatch.setenv(name, "other")
    with pytest.raises(ConfigError, match=f"{setting} 'other' is also in kafka.topics"):
        load_settings()
    monkeypatch.setenv("LLM_SIDECAR_SOURCE", "mqtt")  # then llm-sidecar writes no topic
    assert load_settings().source == "mqtt"


def test_secrets_from_files_lose_their_newline_and_an_empty_token_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A token or key read from a file that ends in a newline made every request fail (401,
    or "connection failed" for the judge); an empty token turned authentication off."""
    monkeypatch.setenv("LLM_SIDECAR_API__TOKEN", "s3cret\n")
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__API_KEY", " sk-abc\n")
    settings = load_settings(None)
    assert settings.api.token is not None and settings.api.token.get_secret_value() == "s3cret"
    key = settings.judge.api_key
    assert key is not None and key.get_secret_value() == "sk-abc"
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__API_KEY", "\n")
    assert load_settings(None).judge.api_key is None
    monkeypatch.setenv("LLM_SIDECAR_API__TOKEN", "")
    with pytest.raises(ConfigError, match=r"api\.token: is empty"):
        load_settings(None)


def test_a_judge_url_with_the_endpoint_path_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__BASE_URL", "http://judge:8000/v1/chat/completions")
    with pytest.raises(ConfigError, match="ends in /chat/completions, which llm-sidecar adds"):
        load_settings(None)


def test_a_trigger_on_a_check_that_does_not_exist_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A trigger on a misspelled check never fired, silently."""
    monkeypatch.setenv("LLM_SIDECAR_JUDGE__TRIGGERS__FAILED_CHECKS", "refusl")
    with pytest.raises(ConfigError, match="no check is named 'refusl'"):
        load_settings()


def test_a_request_timeout_no_join_can_finish_in_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With request_timeout_ms 5000 and the default 10 s session, every join timed out: the
    sidecar never consumed, logged nothing, and /readyz said ready."""
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__REQUEST_TIMEOUT_MS", "5000")
    with pytest.raises(ConfigError, match=r"request_timeout_ms \(5000\) must be above session"):
        load_settings()
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__SESSION_TIMEOUT_MS", "4000")
    assert load_settings().kafka.request_timeout_ms == 5000
    monkeypatch.setenv("LLM_SIDECAR_KAFKA__REBALANCE_TIMEOUT_MS", "6000")
    with pytest.raises(ConfigError, match=r"must be above rebalance_timeout_ms \(6000\)"):
        load_settings()


def test_an_empty_variable_for_a_list_says_how_to_write_an_empty_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_SIDECAR_LABELS__ROUTES", "")
    with pytest.raises(ConfigError, match=r"not an empty string \(for an empty one write \[\]"):
        load_settings()
    monkeypatch.setenv("LLM_SIDECAR_LABELS__ROUTES", "[]")
    assert load_settings().labels.routes == []
