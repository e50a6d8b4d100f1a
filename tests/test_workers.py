"""What each process of ``run --workers N`` is given (the process tree itself is tested in
tests/integration/test_workers.py)."""

from __future__ import annotations

from sidecar.settings import Settings
from sidecar.workers import worker_settings


def test_each_worker_gets_its_own_port_and_static_member_id() -> None:
    settings = Settings(http={"port": 9464}, kafka={"group_instance_id": "sidecar-a"})
    second = worker_settings(settings, 1, 3)
    assert second.http.port == 9465
    assert second.kafka.group_instance_id == "sidecar-a-1"
    assert second.kafka.group_id == settings.kafka.group_id  # one consumer group
    assert second.rules == settings.rules
    # Port 0 (any free port) stays 0; no static id stays none; one worker is run itself.
    anywhere = worker_settings(Settings(http={"port": 0}), 2, 3)
    assert anywhere.http.port == 0
    assert anywhere.kafka.group_instance_id is None
    assert worker_settings(settings, 0, 1) is settings
