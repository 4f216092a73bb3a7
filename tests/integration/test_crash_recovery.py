"""Crash safety: kill -9 during an acks=all stream loses no acknowledged record; a torn
or garbage tail of the active segment is cut at the first invalid batch on restart."""
import os
import threading
import time

from confluent_kafka import Producer

import pytest

import kafka_wire as kw
from clients import create_topic, produce_and_confirm, producer, read_all, watermarks

PARTITIONS = 3


@pytest.mark.parametrize("segment_bytes", [None, 8192])
def test_kill9_mid_stream_keeps_every_acknowledged_record(broker_factory, segment_bytes):
    broker = broker_factory({"log.segment.bytes": segment_bytes} if segment_bytes else {})
    topic = "crash-stream"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    acked = []  # (partition, offset, seq)
    lock = threading.Lock()
    stop = threading.Event()

    def on_delivery(err, msg):
        if err is None:
            with lock:
                acked.append((msg.partition(), msg.offset(), int(msg.value())))

    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 2,
                  "message.timeout.ms": 4000, "retries": 2, "reconnect.backoff.max.ms": 200})

    def run():
        seq = 0
        while not stop.is_set():
            try:
                p.produce(topic, key=f"k{seq % 17}", value=str(seq), on_delivery=on_delivery)
                seq += 1
            except BufferError:
                pass
            p.poll(0.0005 if seq % 50 else 0.005)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with lock:
            if len(acked) >= 3000:
                break
        time.sleep(0.02)
    broker.kill()  # mid-stream: the producer keeps sending
    time.sleep(0.3)
    stop.set()
    t.join(timeout=10)
    p.flush(8)  # remaining records fail with timeouts: only the callbacks matter
    with lock:
        acked_now = list(acked)
    assert len(acked_now) >= 500, f"only {len(acked_now)} records acknowledged before the kill"

    broker.restart()
    got = read_all(broker.bootstrap, topic, PARTITIONS)
    stored = {(p, m.offset()): int(m.value()) for p, msgs in got.items() for m in msgs}
    missing = [(p, o, s) for p, o, s in acked_now if stored.get((p, o)) != s]
    assert not missing, f"{len(missing)} of {len(acked_now)} acknowledged records lost or changed, e.g. {missing[:5]}"
    for p, msgs in got.items():
        seqs = [int(m.value()) for m in msgs]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"partition {p} out of order or duplicated"
        offsets = [m.offset() for m in msgs]
        assert offsets == list(range(offsets[0], offsets[0] + len(offsets))) if offsets else True


def _prepare_crashed_log(broker, topic, count):
    create_topic(broker.bootstrap, topic, 1)
    p = producer(broker.bootstrap, linger_ms=0)
    items = [{"key": f"k{i}", "value": f"v{i}"} for i in range(count)]
    # Several flushes: several batches in the active segment.
    for i in range(0, count, 10):
        produce_and_confirm(p, topic, items[i:i + 10])
    assert watermarks(broker.bootstrap, topic, 0)[1] == count
    broker.kill()  # no clean-shutdown marker: recovery must run at restart
    [segment] = broker.segment_files(topic, 0)
    return segment


def _assert_recovered(broker, topic, count, segment, valid_size):
    broker.restart()
    assert "not shut down cleanly" in broker.log_text()
    assert segment.stat().st_size == valid_size, (
        f"segment is {segment.stat().st_size} bytes after recovery, valid data ends at {valid_size}")
    lo, hi = watermarks(broker.bootstrap, topic, 0)
    assert (lo, hi) == (0, count)
    got = read_all(broker.bootstrap, topic, 1)[0]
    assert [m.value().decode() for m in got] == [f"v{i}" for i in range(count)]
    assert [m.offset() for m in got] == list(range(count))
    # Writing continues right after the last valid record.
    p = producer(broker.bootstrap, linger_ms=0)
    reports = produce_and_confirm(p, topic, [{"key": "after", "value": f"after{i}"} for i in range(5)])
    assert sorted(m.offset() for m in reports) == list(range(count, count + 5))
    got = read_all(broker.bootstrap, topic, 1)[0]
    assert [m.value().decode() for m in got][count:] == [f"after{i}" for i in range(5)]
    # Raw view: every stored batch has a valid CRC.
    with kw.Connection(broker.port) as conn:
        resp = kw.fetch(conn, topic, 0, 0, max_wait_ms=0)
        assert resp["error"] == 0
        assert all(b["crc_ok"] for b in kw.parse_batches(resp["records"]))


def test_garbage_tail_is_truncated(broker):
    topic = "torn-garbage"
    segment = _prepare_crashed_log(broker, topic, 50)
    valid_size = segment.stat().st_size
    with open(segment, "ab") as f:
        f.write(os.urandom(3000))
    _assert_recovered(broker, topic, 50, segment, valid_size)


def test_half_batch_tail_is_truncated(broker):
    topic = "torn-half"
    segment = _prepare_crashed_log(broker, topic, 50)
    valid_size = segment.stat().st_size
    batch = kw.record_batch([(b"k", b"x" * 100), (b"k", b"y" * 100)], base_offset=50)
    with open(segment, "ab") as f:
        f.write(batch[:len(batch) // 2])
    _assert_recovered(broker, topic, 50, segment, valid_size)


def test_valid_batch_after_garbage_is_dropped(broker):
    """Truncation is at the FIRST invalid batch: a well-formed batch behind garbage is not resurrected."""
    topic = "torn-middle"
    segment = _prepare_crashed_log(broker, topic, 30)
    valid_size = segment.stat().st_size
    good = kw.record_batch([(b"k", b"ghost")], base_offset=31)
    with open(segment, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x00\x40" + os.urandom(64) + good)
    _assert_recovered(broker, topic, 30, segment, valid_size)


def test_missing_and_damaged_index_files_are_rebuilt(broker_factory):
    broker = broker_factory({"log.segment.bytes": 4096, "log.index.interval.bytes": 64})
    topic = "reindex"
    create_topic(broker.bootstrap, topic, 1)
    base = 1_700_000_000_000
    p = producer(broker.bootstrap, linger_ms=0)
    for i in range(0, 300, 6):
        produce_and_confirm(p, topic, [{"value": f"{j}".encode() + b"z" * 60, "timestamp": base + j * 10}
                                       for j in range(i, i + 6)])
    broker.kill()
    indexes = broker.segment_files(topic, 0, ".index")
    timeindexes = broker.segment_files(topic, 0, ".timeindex")
    assert len(indexes) >= 4
    indexes[0].unlink()
    timeindexes[1].unlink()
    with open(indexes[2], "r+b") as f:
        f.write(os.urandom(64))
    with open(indexes[-1], "r+b") as f:
        f.truncate(5)
    broker.restart()
    assert watermarks(broker.bootstrap, topic, 0) == (0, 300)
    for start in (0, 1, 57, 123, 199, 250, 299):
        got = read_all(broker.bootstrap, topic, 1, start=start)[0]
        assert [int(m.value().rstrip(b"z")) for m in got] == list(range(start, 300)), f"from {start}"
    from confluent_kafka import TopicPartition
    from clients import consumer
    c = consumer(broker.bootstrap)
    try:
        for target in (0, 7, 123, 299):
            [r] = c.offsets_for_times([TopicPartition(topic, 0, base + target * 10 - 5)], timeout=10)
            assert r.offset == target
    finally:
        c.close()


def test_a_new_data_dir_is_reported_as_new_not_as_recovered(broker):
    # The first start on an empty dir has nothing to recover and says the dir is new.
    log = broker.log_text()
    assert f"log dir {broker.data_dir} is new" in log, log
    assert "not shut down cleanly" not in log and "recovering" not in log, log
    # A clean stop and start: neither line.
    broker.stop()
    broker.restart()
    log = broker.log_text()
    assert "is new" not in log and "not shut down cleanly" not in log, log
    # A kill: the next start recovers (a node alone hosts __consumer_offsets from the start).
    broker.kill()
    broker.restart()
    log = broker.log_text()
    assert "is new" not in log, log
    assert f"log dir {broker.data_dir} was not shut down cleanly: recovering its logs" in log, log
