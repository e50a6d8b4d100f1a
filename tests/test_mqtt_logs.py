"""The MQTT client library's log lines: a lost connection is the source's to report."""

from __future__ import annotations

import logging

import pytest

from sidecar.sources import mqtt


def test_a_lost_connection_is_not_an_error_of_the_client_library(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "sidecar")
    paho = mqtt._paho_log
    paho.error("failed to receive on socket: %s", ConnectionResetError(104, "reset by peer"))
    paho.error("timeout on socket: %s", TimeoutError("timed out"))
    paho.error("Caught exception in on_message: %s", ValueError("boom"))
    paho.warning("something else")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("ERROR", "Caught exception in on_message: boom"),
        ("WARNING", "something else"),
    ]


def test_at_debug_the_lost_connection_is_still_there(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "sidecar")
    mqtt._paho_log.error("failed to receive on socket: %s", OSError("gone"))
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("DEBUG", "failed to receive on socket: gone")
    ]


async def test_the_source_hands_its_logger_to_the_client() -> None:
    from sidecar.settings import MqttSettings

    source = mqtt.MqttSource(MqttSettings(host="127.0.0.1", port=1, topics=["t"]))
    client = source._make_client()
    assert client._client._logger is mqtt._paho_log
