"""Retention by time and DeleteRecords move the log start offset; consumers below it
are reset (earliest) or told OFFSET_OUT_OF_RANGE."""
import time

from confluent_kafka import KafkaError, TopicPartition
from confluent_kafka.admin import ConfigResource

import kafka_wire as kw
from clients import admin, consumer, create_topic, produce_and_confirm, producer, read_all, watermarks

OFFSET_OUT_OF_RANGE = 1


def fill(broker, topic, count, partition=0, value_size=100, first=0, timestamp=0):
    p = producer(broker.bootstrap, linger_ms=0)
    for i in range(first, first + count, 10):
        produce_and_confirm(p, topic, [{"value": f"{j:05d}" + "r" * value_size, "partition": partition,
                                        "timestamp": timestamp}
                                       for j in range(i, min(i + 10, first + count))])


def first_message(bootstrap, topic, offset, reset, timeout=15.0):
    """Assign one consumer at `offset`; return its first message or error."""
    c = consumer(bootstrap, auto_offset_reset=reset)
    try:
        c.assign([TopicPartition(topic, 0, offset)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None:
                return m
        return None
    finally:
        c.close()


def test_retention_deletes_old_segments(broker_factory):
    broker = broker_factory({"log.retention.check.interval.ms": 500, "log.segment.delete.delay.ms": 0})
    topic = "retained"
    create_topic(broker.bootstrap, topic, 1, config={"segment.bytes": "2048"})
    # 150 records an hour old, then 50 current ones: only the old segments expire.
    fill(broker, topic, 150, timestamp=int(time.time() * 1000) - 3_600_000)
    fill(broker, topic, 50, first=150)
    before = broker.segment_files(topic, 0)
    assert len(before) >= 5, [s.name for s in before]
    assert watermarks(broker.bootstrap, topic, 0) == (0, 200)

    a = admin(broker.bootstrap)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic,
                         set_config={"retention.ms": "600000", "segment.bytes": "2048"})
    a.alter_configs([res])[res].result(timeout=15)
    desc = a.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    configs = list(desc.values())[0].result(timeout=15)
    assert configs["retention.ms"].value == "600000"

    deadline = time.monotonic() + 20
    lo = 0
    while time.monotonic() < deadline:
        lo, hi = watermarks(broker.bootstrap, topic, 0)
        remaining = broker.segment_files(topic, 0)
        if lo > 0 and before[0] not in remaining:
            break
        time.sleep(0.25)
    remaining = broker.segment_files(topic, 0)
    assert lo > 0, "log start offset did not move after retention.ms was lowered"
    assert before[0] not in remaining, f"old segment files still there: {[s.name for s in remaining]}"
    assert hi == 200, "retention must not touch the log end"
    assert len(remaining) < len(before)
    assert int(remaining[0].name[:-4]) == lo, f"first segment {remaining[0].name}, log start {lo}"
    assert lo <= 150, f"segments holding current records were deleted (log start {lo})"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
            p.suffix in (".index", ".timeindex") and int(p.stem) < lo for p in broker.partition_dir(topic, 0).iterdir()
            if p.stem.isdigit()):
        time.sleep(0.2)
    leftovers = [p.name for p in broker.partition_dir(topic, 0).iterdir() if p.stem.isdigit() and int(p.stem) < lo]
    assert not leftovers, f"files of deleted segments remain: {leftovers}"

    assert lo < hi, f"retention removed the active segment too (start {lo}, end {hi})"
    # A consumer positioned below the new start: earliest -> reads from the new start.
    m = first_message(broker.bootstrap, topic, 0, "earliest")
    assert m is not None and m.error() is None, m and m.error()
    assert m.offset() == lo
    # With no automatic reset the consumer sees OFFSET_OUT_OF_RANGE.
    m = first_message(broker.bootstrap, topic, 0, "error")
    assert m is not None and m.error() is not None, "expected an offset-out-of-range error"
    assert m.error().code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE), m.error()
    with kw.Connection(broker.port) as conn:
        assert kw.fetch(conn, topic, 0, 0, max_wait_ms=0)["error"] == OFFSET_OUT_OF_RANGE
        assert kw.fetch(conn, topic, 0, lo, max_wait_ms=0)["error"] == 0
    # Records from the new start on are intact.
    got = read_all(broker.bootstrap, topic, 1, start=lo)[0]
    assert [int(m.value()[:5]) for m in got] == list(range(lo, 200))

    # The new start survives a restart.
    broker.stop()
    broker.restart()
    assert watermarks(broker.bootstrap, topic, 0)[0] >= lo


def test_delete_records_moves_log_start(broker):
    topic = "trimmed"
    create_topic(broker.bootstrap, topic, 2)
    fill(broker, topic, 100, partition=0)
    fill(broker, topic, 20, partition=1)
    with kw.Connection(broker.port) as conn:
        r = kw.delete_records(conn, topic, 0, 40)
        assert (r["error"], r["low_watermark"]) == (0, 40), r
        assert kw.list_offsets(conn, topic, 0, kw.EARLIEST)["offset"] == 40
        assert kw.fetch(conn, topic, 0, 10, max_wait_ms=0)["error"] == OFFSET_OUT_OF_RANGE
        f = kw.fetch(conn, topic, 0, 40, max_wait_ms=0)
        assert f["error"] == 0 and f["log_start_offset"] == 40
        first = kw.parse_batches(f["records"])
        assert first and any(rec[0] == 40 for b in first for rec in b["records"])
        # Deleting below the current start is a no-op that reports the start.
        r = kw.delete_records(conn, topic, 0, 10)
        assert (r["error"], r["low_watermark"]) == (0, 40), r
        # Beyond the high watermark: OFFSET_OUT_OF_RANGE, nothing changes.
        r = kw.delete_records(conn, topic, 0, 101)
        assert r["error"] == OFFSET_OUT_OF_RANGE, r
        assert kw.list_offsets(conn, topic, 0, kw.EARLIEST)["offset"] == 40
        # -1 means the high watermark.
        r = kw.delete_records(conn, topic, 1, -1)
        assert (r["error"], r["low_watermark"]) == (0, 20), r
        # Unknown partition.
        r = kw.delete_records(conn, topic, 7, 1)
        assert r["error"] == 3, r  # UNKNOWN_TOPIC_OR_PARTITION
    assert watermarks(broker.bootstrap, topic, 0) == (40, 100)
    assert watermarks(broker.bootstrap, topic, 1) == (20, 20)
    m = first_message(broker.bootstrap, topic, 0, "earliest")
    assert m.error() is None and m.offset() == 40

    # The log start offset is durable across a clean restart and a crash.
    broker.stop()
    broker.restart()
    assert watermarks(broker.bootstrap, topic, 0) == (40, 100)
    broker.kill()
    broker.restart()
    assert watermarks(broker.bootstrap, topic, 0) == (40, 100)
    # Producing continues at the end.
    p = producer(broker.bootstrap)
    [rep] = produce_and_confirm(p, topic, [{"value": "tail", "partition": 1}])
    assert rep.offset() == 20
