"""Keyed records in every compression codec, from three producer implementations
(librdkafka, kafka-python, kcat), come back exactly once each and in per-key order."""
import subprocess

import pytest
from kafka import KafkaProducer
from kafka import codec as kp_codec

from clients import create_topic, produce_and_confirm, producer, read_all

PARTITIONS = 6
KEYS = 12
PER_KEY = 40


def expected_records(tag):
    # Interleave keys so every batch mixes keys and each key spans many batches.
    return [(f"{tag}-key{k}", f"{tag}-key{k}:{seq}") for seq in range(PER_KEY) for k in range(KEYS)]


def check_exactly_once_in_key_order(bootstrap, topic, sent):
    got = read_all(bootstrap, topic, PARTITIONS)
    seen = {}
    key_partition = {}
    for p, msgs in got.items():
        for m in msgs:
            key, value = m.key().decode(), m.value().decode()
            assert key_partition.setdefault(key, p) == p, f"key {key} found in partitions {key_partition[key]} and {p}"
            seen.setdefault(key, []).append(int(value.rsplit(":", 1)[1]))
            assert value.startswith(key + ":"), f"record {key}={value} mixed up"
    total = sum(len(v) for v in got.values())
    assert total == len(sent), f"read {total} records, sent {len(sent)}"
    for key in {k for k, _ in sent}:
        assert seen.get(key) == list(range(PER_KEY)), f"key {key}: sequence {seen.get(key)}"
    used = {p for p, msgs in got.items() if msgs}
    assert len(used) > 1, "all keys landed in one partition: the topic's partitions were not used"


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_librdkafka_codecs(broker, codec):
    topic = f"rdk-{codec}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    sent = expected_records(codec)
    p = producer(broker.bootstrap, compression_type=codec, linger_ms=20, batch_num_messages=50)
    reports = produce_and_confirm(p, topic, [{"key": k, "value": v} for k, v in sent])
    assert len(reports) == len(sent)
    check_exactly_once_in_key_order(broker.bootstrap, topic, sent)


def kafka_python_codecs():
    out = [None, "gzip"]
    for name, available in (("snappy", kp_codec.has_snappy), ("lz4", kp_codec.has_lz4), ("zstd", kp_codec.has_zstd)):
        out.append(pytest.param(name, marks=pytest.mark.skipif(not available(), reason=f"{name} library missing")))
    return out


@pytest.mark.parametrize("codec", kafka_python_codecs())
def test_kafka_python_codecs(broker, codec):
    topic = f"kp-{codec or 'none'}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    sent = expected_records(codec or "none")
    p = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type=codec, linger_ms=20,
                      retries=0, request_timeout_ms=20000)
    try:
        futures = [p.send(topic, key=k.encode(), value=v.encode()) for k, v in sent]
        p.flush(timeout=60)
        for f in futures:
            md = f.get(timeout=30)
            assert md.offset >= 0
    finally:
        p.close(timeout=10)
    check_exactly_once_in_key_order(broker.bootstrap, topic, sent)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_kcat_codecs(broker, codec):
    topic = f"kcat-{codec}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    sent = expected_records(codec)
    lines = "".join(f"{k}|{v}\n" for k, v in sent)
    proc = subprocess.run(
        ["kcat", "-b", broker.bootstrap, "-P", "-t", topic, "-K", "|", "-z", codec,
         "-X", "acks=all", "-X", "linger.ms=20"],
        input=lines.encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    check_exactly_once_in_key_order(broker.bootstrap, topic, sent)
