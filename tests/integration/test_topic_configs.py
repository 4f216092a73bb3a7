"""Topic configs of Kafka 4.x that brokerd honours: accepted by CreateTopics, listed by
DescribeConfigs with Kafka's defaults, and doing what they say."""
import os
import time

from confluent_kafka.admin import ConfigResource, NewTopic

import clients
from clients import admin
from kafka_wire import Connection, fetch, produce, record_batch

INVALID_TIMESTAMP = 32
HOUR_MS = 3600 * 1000

KAFKA_4_DEFAULTS = {
    "segment.jitter.ms": "0",
    "preallocate": "false",
    "unclean.leader.election.enable": "false",
    "message.timestamp.before.max.ms": "9223372036854775807",
    "message.timestamp.after.max.ms": "3600000",
    "message.timestamp.difference.max.ms": "9223372036854775807",
    "compression.type": "producer",
    "compression.gzip.level": "-1",
    "compression.lz4.level": "9",
    "compression.zstd.level": "3",
}


def create(bootstrap, name, config):
    client = admin(bootstrap)
    for f in client.create_topics([NewTopic(name, 1, 1, config=config)], operation_timeout=15).values():
        f.result(timeout=30)


def described(bootstrap, name):
    client = admin(bootstrap)
    res = client.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, name)])
    return {k: v.value for k, v in list(res.values())[0].result(timeout=30).items()}


def test_kafka_4_topic_configs_are_listed_with_their_defaults_and_accepted(broker):
    create(broker.bootstrap, "plain", {})
    got = described(broker.bootstrap, "plain")
    for key, value in KAFKA_4_DEFAULTS.items():
        assert got.get(key) == value, (key, got.get(key))
    chosen = {"segment.jitter.ms": "1000", "preallocate": "true", "unclean.leader.election.enable": "true",
              "message.timestamp.before.max.ms": "86400000", "message.timestamp.after.max.ms": "60000",
              "message.timestamp.difference.max.ms": "172800000"}
    create(broker.bootstrap, "chosen", chosen)
    got = described(broker.bootstrap, "chosen")
    for key, value in chosen.items():
        assert got.get(key) == value, (key, got.get(key))


def test_timestamps_outside_the_bounds_are_refused(broker):
    create(broker.bootstrap, "bounded", {"message.timestamp.before.max.ms": "60000",
                                         "message.timestamp.after.max.ms": "60000"})
    create(broker.bootstrap, "by-default", {})
    create(broker.bootstrap, "append-time", {"message.timestamp.type": "LogAppendTime",
                                             "message.timestamp.after.max.ms": "0"})
    now = int(time.time() * 1000)
    with Connection(broker.port) as conn:
        def send(topic, ts):
            return produce(conn, topic, 0, record_batch([(b"k", b"v", ts)], base_timestamp=ts))["error"]

        assert send("bounded", now) == 0
        assert send("bounded", now - HOUR_MS) == INVALID_TIMESTAMP
        assert send("bounded", now + HOUR_MS) == INVALID_TIMESTAMP
        # One record out of bounds fails its batch, though the batch's first timestamp is fine.
        batch = record_batch([(b"a", b"1", now), (b"b", b"2", now + HOUR_MS)], base_timestamp=now)
        assert produce(conn, "bounded", 0, batch)["error"] == INVALID_TIMESTAMP
        # Kafka 4's defaults: any age, at most an hour ahead.
        assert send("by-default", now - 365 * 24 * HOUR_MS) == 0
        assert send("by-default", now + 2 * HOUR_MS) == INVALID_TIMESTAMP
        # The bounds are for CreateTime: a LogAppendTime topic stamps records itself.
        assert send("append-time", now + 2 * HOUR_MS) == 0


def test_preallocate_reserves_the_whole_segment(broker):
    create(broker.bootstrap, "reserved", {"preallocate": "true", "segment.bytes": str(8 << 20)})
    with Connection(broker.port) as conn:
        assert produce(conn, "reserved", 0, record_batch([(b"k", b"v")]))["error"] == 0
    seg = broker.segment_files("reserved", 0)[-1]
    st = os.stat(seg)
    assert st.st_size < 4096, st.st_size  # the file's size is still its data
    assert st.st_blocks * 512 >= 8 << 20, st.st_blocks


def test_configs_removed_in_kafka_4_are_accepted_and_ignored_beside_real_changes(broker):
    create(broker.bootstrap, "older-tools", {"message.format.version": "2.8-IV1"})
    client = admin(broker.bootstrap)
    # AlterConfigs (the whole set of overrides), as Kafka 3.x tools send it.
    resource = ConfigResource(ConfigResource.Type.TOPIC, "older-tools", set_config={
        "message.format.version": "2.8-IV1", "message.downconversion.enable": "false", "retention.ms": "3600000"})
    for f in client.alter_configs([resource]).values():
        f.result(timeout=30)
    got = described(broker.bootstrap, "older-tools")
    assert got["retention.ms"] == "3600000"
    assert got["message.format.version"] == "2.8-IV1"
    assert got["message.downconversion.enable"] == "false"
    text = broker.log_text()
    assert text.count("topic config message.format.version was removed in Kafka 4.0") == 1
    assert text.count("topic config message.downconversion.enable was removed in Kafka 4.0") == 1
    # An unknown key is still refused, by name.
    bad = ConfigResource(ConfigResource.Type.TOPIC, "older-tools", set_config={"no.such.config": "1"})
    err = None
    for f in client.alter_configs([bad]).values():
        try:
            f.result(timeout=30)
        except Exception as e:  # KafkaException carrying INVALID_CONFIG
            err = str(e)
    assert err and "no.such.config" in err, err


def stored_codecs(port, topic):
    """The codec bits of each batch of partition 0, as stored."""
    with Connection(port) as c:
        data = fetch(c, topic, 0, 0, max_wait_ms=0, min_bytes=0)["records"]
    codecs, pos = [], 0
    while pos + 61 <= len(data):
        length = int.from_bytes(data[pos + 8:pos + 12], "big")
        codecs.append(int.from_bytes(data[pos + 21:pos + 23], "big") & 0x7)
        pos += 12 + length
    return codecs


def test_a_compression_type_re_encodes_what_producers_send(broker):
    create(broker.bootstrap, "zstd-topic", {"compression.type": "zstd", "compression.zstd.level": "9"})
    create(broker.bootstrap, "plain-topic", {"compression.type": "uncompressed"})
    assert described(broker.bootstrap, "zstd-topic")["compression.type"] == "zstd"
    values = [f"value-{i}".encode() * 20 for i in range(50)]
    for topic, codec in (("zstd-topic", "none"), ("plain-topic", "lz4")):
        p = clients.producer(broker.bootstrap, compression_type=codec, linger_ms=50)
        clients.produce_and_confirm(p, topic, [{"value": v, "partition": 0} for v in values])
    assert set(stored_codecs(broker.port, "zstd-topic")) == {4}, "stored as zstd"
    assert set(stored_codecs(broker.port, "plain-topic")) == {0}, "stored uncompressed"
    for topic in ("zstd-topic", "plain-topic"):
        got = [m.value() for m in clients.read_all(broker.bootstrap, topic, 1)[0]]
        assert got == values, topic
    # A codec Kafka does not know is refused.
    client = admin(broker.bootstrap)
    f = client.create_topics([NewTopic("brotli-topic", 1, 1, config={"compression.type": "brotli"})],
                             operation_timeout=15)["brotli-topic"]
    try:
        f.result(timeout=30)
        raise AssertionError("compression.type=brotli was accepted")
    except Exception as e:  # noqa: BLE001 - KafkaException carries the code
        assert "INVALID_CONFIG" in str(e) or "InvalidConfig" in str(e), e


def test_flush_messages_syncs_before_the_answer(broker_factory):
    import prometheus_text
    from brokerd_harness import free_port
    metrics_port = free_port()
    # flush.ms an hour: only flush.messages syncs during the test.
    b = broker_factory({"metrics.listener": f"127.0.0.1:{metrics_port}", "log.flush.interval.ms": "3600000"})
    create(b.bootstrap, "every-record", {"flush.messages": "1"})
    create(b.bootstrap, "every-third", {"flush.messages": "3"})
    create(b.bootstrap, "lazy", {})
    assert described(b.bootstrap, "lazy")["flush.messages"] == "9223372036854775807"

    def flushes():
        samples, _ = prometheus_text.scrape(metrics_port)
        return prometheus_text.value(samples, "brokerd_log_flushes_total")

    with Connection(b.port) as c:
        for topic, expected in (("lazy", 0), ("every-record", 6), ("every-third", 2)):
            before = flushes()
            for _ in range(6):
                assert produce(c, topic, 0, record_batch([(b"k", b"v")]))["error"] == 0
            assert flushes() - before == expected, topic


TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5


def described_with_synonyms(bootstrap, name, include_synonyms):
    return clients.described_with_synonyms(bootstrap, "topic", name, include_synonyms)


def test_describe_configs_sources_and_synonyms_follow_kafka(broker_factory):
    # A static broker setting, a topic override and a config set nowhere, each with Kafka's
    # source and synonyms, and synonyms only when asked for.
    b = broker_factory({"log.retention.ms": 3600000})
    create(b.bootstrap, "synonyms", {"segment.bytes": "1048576"})
    got = described_with_synonyms(b.bootstrap, "synonyms", True)
    assert got["retention.ms"] == ("3600000", STATIC_BROKER_CONFIG, [
        ("log.retention.ms", "3600000", STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", DEFAULT_CONFIG)]), got["retention.ms"]
    value, source, synonyms = got["segment.bytes"]
    assert (value, source) == ("1048576", TOPIC_CONFIG)
    assert synonyms[0] == ("segment.bytes", "1048576", TOPIC_CONFIG)
    assert synonyms[1][0] == "log.segment.bytes" and synonyms[1][2] == DEFAULT_CONFIG, synonyms
    value, source, synonyms = got["cleanup.policy"]
    assert (value, source) == ("delete", DEFAULT_CONFIG)
    assert synonyms == [("log.cleanup.policy", "delete", DEFAULT_CONFIG)], synonyms
    plain = described_with_synonyms(b.bootstrap, "synonyms", False)
    assert all(not s for _, _, s in plain.values()), [k for k, (_, _, s) in plain.items() if s]
    assert plain["retention.ms"][:2] == ("3600000", STATIC_BROKER_CONFIG)
    assert plain["cleanup.policy"][:2] == ("delete", DEFAULT_CONFIG)
