"""KafkaJS with `idempotent: true` produces through the fault-injecting proxy (responses of
processed Produce requests are lost, connections break) without duplicates or losses."""
import json
import subprocess
from pathlib import Path

import pytest

from clients import create_topic, read_all
from test_idempotence import check_exactly_once, proxied_broker

JS_DIR = Path(__file__).resolve().parent / "js"
PARTITIONS = 3
KEYS = 20
PER_KEY = 200



@pytest.mark.parametrize("max_in_flight", [1, 5])
def test_kafkajs_idempotent_through_faulty_proxy(broker_factory, node, max_in_flight):
    broker, proxy = proxied_broker(broker_factory)
    try:
        topic = f"js-idem-{max_in_flight}"
        create_topic(broker.bootstrap, topic, PARTITIONS)
        proxy.drop_every = 5
        proc = subprocess.run([node, str(JS_DIR / "idempotent_produce.js"), f"127.0.0.1:{proxy.listen_port}", topic,
                               str(KEYS), str(PER_KEY), str(max_in_flight)],
                              cwd=JS_DIR, capture_output=True, timeout=180)
        assert proc.returncode == 0, f"kafkajs failed:\n{proc.stderr.decode()[-3000:]}"
        out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
        assert out["acked"] == KEYS * PER_KEY and not out["errors"], out
        stats = proxy.stats()
        assert stats["dropped"] >= 5, stats
        proxy.drop_every = 0
        got = read_all(broker.bootstrap, topic, PARTITIONS)
        assert sum(len(v) for v in got.values()) == KEYS * PER_KEY
        check_exactly_once(got, PER_KEY)
    finally:
        proxy.stop()
