"""KafkaJS produces keyed records (none, GZIP) through its default partitioner; every
record is read back with librdkafka. KafkaJS admin calls work against brokerd."""
import json
import subprocess
from pathlib import Path

import pytest

from clients import create_topic, read_all

JS_DIR = Path(__file__).resolve().parent / "js"
PARTITIONS = 6
KEYS = 10
PER_KEY = 30



def run_js(node, *args, timeout=90):
    proc = subprocess.run([node, str(JS_DIR / "kafkajs_client.js"), *map(str, args)], cwd=JS_DIR,
                          capture_output=True, timeout=timeout)
    assert proc.returncode == 0, f"kafkajs failed:\n{proc.stderr.decode()}"
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_kafkajs_keyed_produce(broker, node, codec):
    topic = f"js-{codec}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    out = run_js(node, "produce", broker.bootstrap, topic, codec, KEYS, PER_KEY)
    assert out["acks"] and all(a["errorCode"] == 0 for a in out["acks"]), out
    got = read_all(broker.bootstrap, topic, PARTITIONS)
    total = sum(len(v) for v in got.values())
    assert total == KEYS * PER_KEY
    seqs, where = {}, {}
    for p, msgs in got.items():
        for m in msgs:
            key, value = m.key().decode(), m.value().decode()
            assert value.startswith(key + ":")
            assert where.setdefault(key, p) == p, f"key {key} in two partitions"
            seqs.setdefault(key, []).append(int(value.rsplit(":", 1)[1]))
    assert len(seqs) == KEYS
    for key, s in seqs.items():
        assert s == list(range(PER_KEY)), f"{key}: {s}"
    assert len({p for p, v in got.items() if v}) > 1, "the default partitioner used a single partition"
    acked_partitions = {a["partition"] for a in out["acks"]}
    assert acked_partitions == {p for p, v in got.items() if v}


def test_kafkajs_admin(broker, node):
    topic = "js-admin"
    out = run_js(node, "admin", broker.bootstrap, topic, 3)
    assert out["created"] is True
    assert out["createdAgain"] is False  # already exists: KafkaJS reports false
    [md] = out["metadata"]["topics"]
    assert md["name"] == topic
    assert sorted(p["partitionId"] for p in md["partitions"]) == [0, 1, 2]
    assert all(p["leader"] == 1 and p["partitionErrorCode"] == 0 for p in md["partitions"]), md
    offsets = {o["partition"]: o for o in out["offsets"]}
    assert sorted(offsets) == [0, 1, 2]
    assert (offsets[0]["low"], offsets[0]["high"], offsets[0]["offset"]) == ("0", "2", "2")
    assert (offsets[1]["low"], offsets[1]["high"]) == ("0", "1")
    assert (offsets[2]["low"], offsets[2]["high"]) == ("0", "0")
    assert topic in out["topics"]
