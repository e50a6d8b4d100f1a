"""Probe -> MQTT (Mosquitto) -> run: probe events published at QoS 1 are checked like any."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from sidecar.app import App
from sidecar.embedded import free_port
from sidecar.probe.attacks import load_library
from sidecar.probe.runner import MqttSink, Prober, mqtt_topic
from sidecar.settings import Settings
from sidecar.testing import ScriptedTarget
from tests.conftest import REPO
from tests.integration.test_mqtt import mqtt_settings, running_mosquitto
from tests.probe.test_attacks import SMALL

pytestmark = pytest.mark.integration


async def test_probe_events_reach_a_sidecar_over_mqtt(tmp_path: Path) -> None:
    lib_path = tmp_path / "lib.yaml"
    lib_path.write_text(SMALL)
    library = load_library([lib_path], builtin=False)
    async with (
        running_mosquitto(tmp_path, free_port()) as port,
        ScriptedTarget(behaviour=lambda s, u: "comply" if "pirate" in u else "refuse") as target,
    ):
        settings = Settings(
            source="mqtt",
            mqtt=mqtt_settings(port, "sidecar-probe-test"),
            http={"host": "127.0.0.1", "port": 0},
            rules=[REPO / "rules" / "default.yaml"],
            system_prompts={"support": "You are the assistant of Acme Bikes."},
            probe={
                "base_url": target.base_url,
                "system_prompt_id": "support",
                "probes_per_hour": 36_000,
            },
        )
        assert mqtt_topic(settings) == "llm/events/probe"
        registry = CollectorRegistry()
        app = App(settings, registry=registry)
        await app.start()
        task = asyncio.create_task(app.run())
        try:
            sink = MqttSink(settings, mqtt_topic(settings))
            await sink.start()
            try:
                prober = Prober(settings, library, sink)
                assert await asyncio.wait_for(prober.run(asyncio.Event(), once=True), 30) == 0
            finally:
                await sink.stop()
            for _ in range(200):
                if app.tally.events >= 4:
                    break
                await asyncio.sleep(0.05)
            assert app.tally.events == 4
            labels = {"score": "adversarial_robustness", "subject": "intermediate",
                      "window": "5m", "route": "*", "model": "*", "tenant": "*"}  # fmt: skip
            assert registry.get_sample_value("llm_sidecar_window_score", labels) == 0.0
            labels["subject"] = "basic"
            assert registry.get_sample_value("llm_sidecar_window_score", labels) == 1.0
        finally:
            app.request_stop()
            await asyncio.wait_for(task, 10)
            await app.stop()
