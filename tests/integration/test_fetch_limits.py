"""Fetch responses stay within the request's max_bytes over all partitions (the first batch of
the first non-empty partition excepted, so that a consumer never stalls), and within each
partition's partition_max_bytes likewise: a consumer whose receive limit is about its
fetch.max.bytes reads partitions of large records to the end."""
import time

import pytest

from brokerd_harness import module_broker
from clients import consumer, create_topic, produce_and_confirm, producer
from confluent_kafka import TopicPartition
from kafka_wire import API_FETCH, Connection, array, i8, i32, i64, parse_batches, record_batch, produce, string

PARTITIONS = 4
RECORDS = 6
VALUE = 900 * 1000


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    def setup(b):
        create_topic(b.bootstrap, "large", PARTITIONS)
        p = producer(b.bootstrap, linger_ms=0, batch_num_messages=1)
        produce_and_confirm(p, "large", [{"partition": n % PARTITIONS, "key": f"k{n}".encode(),
                                         "value": bytes([n]) * VALUE} for n in range(PARTITIONS * RECORDS)])
        create_topic(b.bootstrap, "small", PARTITIONS)
        with Connection(b.port) as conn:
            for part in range(PARTITIONS):  # ten batches of 10 KB each
                for n in range(10):
                    assert produce(conn, "small", part, record_batch([(b"k", b"s" * 10000)]))["error"] == 0
    yield from module_broker(tmp_path_factory, "fetch-limits", setup=setup)


def raw_fetch(conn, topic, offsets, max_bytes, partition_max_bytes, version):
    """A Fetch (v4 to v6 layout) of `offsets` {partition: offset}; {partition: record bytes}."""
    def part(p):
        return i32(p) + i64(offsets[p]) + (i64(-1) if version >= 5 else b"") + i32(partition_max_bytes)

    body = (i32(-1) + i32(100) + i32(1) + i32(max_bytes) + i8(0) +
            array(["x"], lambda _: string(topic) + array(sorted(offsets), part)))
    r = conn.request(API_FETCH, version, body)
    r.i32()  # throttle

    def partition(x):
        p, err = x.i32(), x.i16()
        x.i64(), x.i64()
        if version >= 5:
            x.i64()
        x.array(lambda y: (y.i64(), y.i64()))
        assert err == 0, (p, err)
        return p, x.nbytes() or b""

    topics = r.array(lambda x: (x.string(), x.array(partition)))
    return dict(topics[0][1])


@pytest.mark.parametrize("version", [4, 5, 6])
def test_the_response_stays_within_max_bytes_but_for_the_first_batch(broker, version):
    with Connection(broker.port, timeout=30) as conn:
        # Batches of 900 KB under a 1 MB max_bytes: one batch of the first partition, and
        # nothing from the others (a second batch would pass the limit).
        got = raw_fetch(conn, "large", {p: 0 for p in range(PARTITIONS)}, 1_000_000, 5_000_000, version)
        sizes = [len(got[p]) for p in range(PARTITIONS)]
        assert sum(sizes) <= 1_000_000, sizes
        assert sizes[0] > 0 and len(parse_batches(got[0])) == 1, sizes
        # A max_bytes below one batch: the first batch still comes, whole, and nothing else.
        got = raw_fetch(conn, "large", {p: 0 for p in range(PARTITIONS)}, 100_000, 5_000_000, version)
        sizes = [len(got[p]) for p in range(PARTITIONS)]
        assert sizes[0] > 100_000 and sum(sizes[1:]) == 0, sizes
        # Small batches: whole batches from several partitions, within max_bytes together and
        # within partition_max_bytes each.
        got = raw_fetch(conn, "small", {p: 0 for p in range(PARTITIONS)}, 100_000, 45_000, version)
        sizes = [len(got[p]) for p in range(PARTITIONS)]
        assert sum(sizes) <= 100_000 and all(s <= 45_000 for s in sizes), sizes
        assert sizes[0] > 0 and sizes[1] > 0, sizes
        for p in range(PARTITIONS):
            assert all(b["crc_ok"] for b in parse_batches(got[p])), p


def test_a_consumer_with_a_receive_limit_near_fetch_max_bytes_reads_large_records(broker):
    c = consumer(broker.bootstrap, fetch_max_bytes=1_000_000, receive_message_max_bytes=1_000_512,
                 max_partition_fetch_bytes=5_000_000)
    try:
        c.assign([TopicPartition("large", p, 0) for p in range(PARTITIONS)])
        got = {p: 0 for p in range(PARTITIONS)}
        deadline = time.monotonic() + 60
        while sum(got.values()) < PARTITIONS * RECORDS and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            assert not m.error(), m.error()
            assert len(m.value()) == VALUE
            got[m.partition()] += 1
        assert got == {p: RECORDS for p in range(PARTITIONS)}, got
    finally:
        c.close()


def test_kafka_python_reads_large_records_with_a_small_fetch_max_bytes(broker):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP
    c = KafkaConsumer(bootstrap_servers=broker.bootstrap, fetch_max_bytes=1_000_000,
                      max_partition_fetch_bytes=5_000_000, enable_auto_commit=False, consumer_timeout_ms=1000,
                      api_version_auto_timeout_ms=10000)
    try:
        c.assign([KTP("large", p) for p in range(PARTITIONS)])
        for p in range(PARTITIONS):
            c.seek(KTP("large", p), 0)
        count = 0
        deadline = time.monotonic() + 60
        while count < PARTITIONS * RECORDS and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=500).values():
                count += len(records)
        assert count == PARTITIONS * RECORDS
    finally:
        c.close()
