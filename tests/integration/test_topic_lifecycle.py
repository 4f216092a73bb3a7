"""Topic admin and timestamp semantics seen through real clients: LogAppendTime topics,
partitions added at run time, deleted and recreated topics, fetch position errors."""
import time

from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, TopicPartition
from confluent_kafka.admin import NewPartitions

import kafka_wire as kw
from clients import admin, consumer, create_topic, produce_and_confirm, producer, read_all, wait_for_topic, watermarks


def test_log_append_time_topic(broker):
    topic = "append-time"
    create_topic(broker.bootstrap, topic, 1, config={"message.timestamp.type": "LogAppendTime"})
    old = int(time.time() * 1000) - 86_400_000
    t0 = int(time.time() * 1000)
    reports = produce_and_confirm(producer(broker.bootstrap, linger_ms=0), topic,
                                  [{"value": b"x", "timestamp": old + i} for i in range(5)])
    t1 = int(time.time() * 1000)
    for m in reports:
        ts_type, ts = m.timestamp()
        assert ts_type == TIMESTAMP_LOG_APPEND_TIME and t0 - 1000 <= ts <= t1 + 1000, m.timestamp()
    got = read_all(broker.bootstrap, topic, 1)[0]
    for m in got:
        ts_type, ts = m.timestamp()
        assert ts_type == TIMESTAMP_LOG_APPEND_TIME and t0 - 1000 <= ts <= t1 + 1000, m.timestamp()
    # Lookups use the broker's time, not the producer's.
    c = consumer(broker.bootstrap)
    try:
        [r] = c.offsets_for_times([TopicPartition(topic, 0, old + 10)], timeout=10)
        assert r.offset == 0
        [r] = c.offsets_for_times([TopicPartition(topic, 0, t1 + 5000)], timeout=10)
        assert r.offset == -1
    finally:
        c.close()


def test_create_time_is_kept(broker):
    topic = "create-time"
    create_topic(broker.bootstrap, topic, 1)
    ts = int(time.time() * 1000) - 5000
    produce_and_confirm(producer(broker.bootstrap), topic, [{"value": b"x", "timestamp": ts}])
    [m] = read_all(broker.bootstrap, topic, 1)[0]
    assert m.timestamp() == (TIMESTAMP_CREATE_TIME, ts)


def test_create_partitions_then_restart(broker):
    topic = "grown"
    create_topic(broker.bootstrap, topic, 2)
    a = admin(broker.bootstrap)
    a.create_partitions([NewPartitions(topic, 5)])[topic].result(timeout=15)
    wait_for_topic(broker.bootstrap, topic, 5)
    p = producer(broker.bootstrap)
    produce_and_confirm(p, topic, [{"value": f"p{i}".encode(), "partition": i} for i in range(5)])
    broker.stop()
    broker.restart()
    wait_for_topic(broker.bootstrap, topic, 5)
    got = read_all(broker.bootstrap, topic, 5)
    assert {pt: [m.value() for m in msgs] for pt, msgs in got.items()} == {i: [f"p{i}".encode()] for i in range(5)}


def test_delete_and_recreate_topic(broker):
    topic = "recreated"
    create_topic(broker.bootstrap, topic, 1)
    produce_and_confirm(producer(broker.bootstrap), topic, [{"value": b"old"} for _ in range(10)])
    a = admin(broker.bootstrap)
    a.delete_topics([topic], operation_timeout=15)[topic].result(timeout=15)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and topic in a.list_topics(timeout=5).topics:
        time.sleep(0.1)
    assert topic not in a.list_topics(timeout=5).topics
    create_topic(broker.bootstrap, topic, 1)
    assert watermarks(broker.bootstrap, topic, 0) == (0, 0), "a recreated topic must start empty"
    [m] = produce_and_confirm(producer(broker.bootstrap), topic, [{"value": b"new"}])
    assert m.offset() == 0
    broker.stop()
    broker.restart()
    wait_for_topic(broker.bootstrap, topic, 1)
    got = read_all(broker.bootstrap, topic, 1)[0]
    assert [x.value() for x in got] == [b"new"]


def test_fetch_positions_and_unknown_partitions(broker):
    topic = "positions"
    create_topic(broker.bootstrap, topic, 1)
    produce_and_confirm(producer(broker.bootstrap, compression_type="lz4", linger_ms=50), topic,
                        [{"value": f"{i}".encode()} for i in range(30)])
    with kw.Connection(broker.port) as conn:
        assert kw.fetch(conn, topic, 0, 31, max_wait_ms=0)["error"] == 1  # beyond the end
        assert kw.fetch(conn, topic, 0, 30, max_wait_ms=0)["error"] == 0  # at the end: empty
        assert kw.fetch(conn, topic, 0, -5, max_wait_ms=0)["error"] == 1
        assert kw.fetch(conn, topic, 3, 0, max_wait_ms=0)["error"] == 3
        assert kw.fetch(conn, "no-such-topic-x", 0, 0, max_wait_ms=0)["error"] == 3
        assert kw.list_offsets(conn, topic, 9, kw.LATEST)["error"] == 3
        resp = kw.produce(conn, topic, 4, kw.record_batch([(None, b"v")]))
        assert resp["error"] == 3
    # Starting in the middle of a compressed batch yields exactly the records from there.
    got = read_all(broker.bootstrap, topic, 1, start=17)[0]
    assert [int(m.value()) for m in got] == list(range(17, 30))
    assert [m.offset() for m in got] == list(range(17, 30))


def test_oversized_first_batch_is_still_returned(broker):
    """KIP-74: a batch larger than the fetch limits is returned whole so consumers progress."""
    topic = "big-batches"
    create_topic(broker.bootstrap, topic, 1)
    with kw.Connection(broker.port) as conn:
        for i in range(3):
            r = kw.produce(conn, topic, 0, kw.record_batch([(None, bytes([65 + i]) * 50_000)]))
            assert r["error"] == 0
        r = kw.fetch(conn, topic, 0, 0, max_wait_ms=0, max_bytes=1000)
        assert r["error"] == 0
        batches = kw.parse_batches(r["records"])
        assert batches and batches[0]["records"][0][0] == 0 and len(batches[0]["records"][0][3]) == 50_000
        r = kw.fetch(conn, topic, 0, 1, max_wait_ms=0, max_bytes=1000)
        assert kw.parse_batches(r["records"])[0]["records"][0][0] == 1


def test_pipelined_requests_answer_in_order(broker):
    topic = "pipelined"
    create_topic(broker.bootstrap, topic, 3)
    with kw.Connection(broker.port) as conn:
        sent = []
        for i in range(60):
            part = i % 3
            batch = kw.record_batch([(None, f"{i}".encode())])
            body = (kw.string(None) + kw.i16(-1) + kw.i32(10000) +
                    kw.array([topic], lambda t: kw.string(t) + kw.array([part], lambda p: kw.i32(p) + kw.nbytes(batch))))
            if i % 5 == 4:  # mix in other APIs, which complete at different speeds
                sent.append((conn.send(kw.API_API_VERSIONS, 0, b""), None))
            sent.append((conn.send(kw.API_PRODUCE, 3, body), part))
        next_offset = {0: 0, 1: 0, 2: 0}
        for corr, part in sent:
            r = kw.Reader(conn.recv_frame())
            assert r.i32() == corr, "responses must come back in request order"
            if part is None:
                continue
            [(name, [pr])] = r.array(lambda x: (x.string(), x.array(lambda y: (y.i32(), y.i16(), y.i64()))))
            assert pr[:3] == (part, 0, next_offset[part])
            next_offset[part] += 1
    got = read_all(broker.bootstrap, topic, 3)
    assert [int(m.value()) for m in got[0]] == list(range(0, 60, 3))
