"""The acknowledgement audit: every path that answers Produce with error 0 is checked by
reading the acknowledged offsets back. A success must always describe exactly what was
stored; what is refused must leave the log untouched."""
import pytest

import kafka_wire as kw
from clients import create_topic, produce_and_confirm, producer, read_all
from brokerd_harness import module_broker

INVALID_RECORD = 87


@pytest.fixture(scope="module")
def b(tmp_path_factory):
    yield from module_broker(tmp_path_factory, "acks")


def log_end(b, topic, partition=0):
    with kw.Connection(b.port) as conn:
        return kw.list_offsets(conn, topic, partition, kw.LATEST)["offset"]


def record_at(b, topic, partition, offset):
    """(key, value) of the record stored at `offset`."""
    for rec in kw.read_partition(b.port, topic, partition, start=offset, end=offset + 1):
        if rec[0] == offset:
            return rec[2], rec[3]
    raise AssertionError(f"no record at {topic}-{partition}@{offset}")


def produce_ok(conn, topic, batch, version=3, acks=-1):
    resp = kw.produce(conn, topic, 0, batch, acks=acks, version=version)
    assert resp["error"] == 0, resp
    return resp["base_offset"]


@pytest.mark.parametrize("version,acks", [(3, -1), (3, 1), (7, 1), (8, -1)])
def test_plain_batches_are_readable_at_the_acknowledged_offset(b, version, acks):
    topic = f"ack-plain-v{version}-{acks}"
    create_topic(b.bootstrap, topic, 1)
    with kw.Connection(b.port) as conn:
        for i in range(5):
            recs = [(f"k{i}-{j}".encode(), f"v{i}-{j}".encode()) for j in range(i + 1)]
            base = produce_ok(conn, topic, kw.record_batch(recs), version=version, acks=acks)
            for j, (k, v) in enumerate(recs):
                assert record_at(b, topic, 0, base + j) == (k, v)


def idempotent_batch(pid, epoch, seq, recs):
    return kw.record_batch(recs, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def test_idempotent_first_writes_and_retries_answer_readable_offsets(b):
    topic = "ack-idempotent"
    create_topic(b.bootstrap, topic, 1)
    with kw.Connection(b.port) as conn:
        err, pid, epoch = kw.init_producer_id(conn)
        assert err == 0
        acked = {}
        for seq in range(0, 12, 2):
            recs = [(b"k%d" % seq, b"v%d" % seq), (b"k%d" % (seq + 1), b"v%d" % (seq + 1))]
            acked[seq] = (produce_ok(conn, topic, idempotent_batch(pid, epoch, seq, recs)), recs)
        end = log_end(b, topic)
        # Retries of each of the last five batches: the original offsets, nothing written.
        for seq in range(2, 12, 2):
            base, recs = acked[seq]
            assert produce_ok(conn, topic, idempotent_batch(pid, epoch, seq, recs)) == base
        assert log_end(b, topic) == end
        for base, recs in acked.values():
            for j, (k, v) in enumerate(recs):
                assert record_at(b, topic, 0, base + j) == (k, v)


def two_batches(first, second):
    return first + second


def test_two_batches_in_one_partition_are_refused_and_nothing_is_written(b):
    topic = "ack-two-batches"
    create_topic(b.bootstrap, topic, 1)
    with kw.Connection(b.port) as conn:
        payload = two_batches(kw.record_batch([(b"a", b"1")]), kw.record_batch([(b"b", b"2")]))
        for version in (3, 8):
            resp = kw.produce(conn, topic, 0, payload, version=version)
            assert resp["error"] == INVALID_RECORD, resp
            assert resp["base_offset"] == -1
    assert log_end(b, topic) == 0


def test_the_same_idempotent_batch_twice_in_one_request_is_refused(b):
    # Once answered error 0 at offset 0 while the log stayed empty.
    topic = "ack-same-batch-twice"
    create_topic(b.bootstrap, topic, 1)
    with kw.Connection(b.port) as conn:
        err, pid, epoch = kw.init_producer_id(conn)
        one = idempotent_batch(pid, epoch, 0, [(b"k", b"v")])
        resp = kw.produce(conn, topic, 0, two_batches(one, one))
        assert resp["error"] == INVALID_RECORD, resp
        assert log_end(b, topic) == 0
        # The producer goes on as if nothing had been sent.
        assert produce_ok(conn, topic, one) == 0
        assert record_at(b, topic, 0, 0) == (b"k", b"v")


def test_a_new_batch_and_a_retry_in_one_request_are_refused_and_the_producer_goes_on(b):
    # Once acknowledged while seq 1 was dropped; seq 2 then failed with OUT_OF_ORDER_SEQUENCE.
    topic = "ack-new-and-retry"
    create_topic(b.bootstrap, topic, 1)
    with kw.Connection(b.port) as conn:
        err, pid, epoch = kw.init_producer_id(conn)
        b0 = idempotent_batch(pid, epoch, 0, [(b"k0", b"v0")])
        b1 = idempotent_batch(pid, epoch, 1, [(b"k1", b"v1")])
        assert produce_ok(conn, topic, b0) == 0
        resp = kw.produce(conn, topic, 0, two_batches(b1, b0))
        assert resp["error"] == INVALID_RECORD, resp
        assert log_end(b, topic) == 1
        assert produce_ok(conn, topic, b1) == 1
        assert produce_ok(conn, topic, idempotent_batch(pid, epoch, 2, [(b"k2", b"v2")])) == 2
        assert [record_at(b, topic, 0, o) for o in range(3)] == [(b"k0", b"v0"), (b"k1", b"v1"), (b"k2", b"v2")]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("idempotent", [False, True])
def test_client_deliveries_are_readable_at_their_offsets(b, codec, idempotent):
    topic = f"ack-client-{codec}-{'idem' if idempotent else 'plain'}"
    create_topic(b.bootstrap, topic, 3)
    p = producer(b.bootstrap, compression_type=codec, enable_idempotence=idempotent, linger_ms=2)
    items = [{"key": f"key-{i % 17}".encode(), "value": f"value-{i}".encode()} for i in range(3000)]
    reports = produce_and_confirm(p, topic, items)
    assert len(reports) == len(items)
    stored = {(pt, m.offset()): (m.key(), m.value()) for pt, msgs in read_all(b.bootstrap, topic, 3).items()
              for m in msgs}
    missing = [(m.partition(), m.offset()) for m in reports
               if stored.get((m.partition(), m.offset())) != (m.key(), m.value())]
    assert not missing, f"{len(missing)} acknowledged records not stored where acknowledged: {missing[:5]}"
    assert len(stored) == len(items)


def test_log_append_time_topic_acknowledges_readable_offsets(b):
    topic = "ack-log-append-time"
    create_topic(b.bootstrap, topic, 1, config={"message.timestamp.type": "LogAppendTime"})
    with kw.Connection(b.port) as conn:
        for i in range(3):
            resp = kw.produce(conn, topic, 0, kw.record_batch([(b"k%d" % i, b"v%d" % i)], base_timestamp=1000),
                              version=3)
            assert resp["error"] == 0 and resp["log_append_time"] > 1000, resp
            assert record_at(b, topic, 0, resp["base_offset"]) == (b"k%d" % i, b"v%d" % i)


def test_min_insync_replicas_above_the_replication_factor_counts_as_the_replication_factor(b):
    # Kafka since 3.7 (KAFKA-15583) takes min(min.insync.replicas, replicas) as the minimum,
    # for acks=all as for the high watermark: RF 1 with min.insync.replicas=2 is written and
    # acknowledged with its one copy, and the record is readable at once.
    topic = "ack-min-isr-above-rf"
    create_topic(b.bootstrap, topic, 1, {"min.insync.replicas": "2"})
    with kw.Connection(b.port) as conn:
        base = produce_ok(conn, topic, kw.record_batch([(b"k", b"v")]), acks=-1)
    assert record_at(b, topic, 0, base) == (b"k", b"v")
