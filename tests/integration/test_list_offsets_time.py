"""ListOffsets by timestamp returns the first offset whose timestamp is >= the target,
across many batches and segments."""
import time

from confluent_kafka import TopicPartition

import kafka_wire as kw
from clients import consumer, create_topic, produce_and_confirm, producer

COUNT = 240
STEP_MS = 10


def timestamps(base):
    # Two records share each timestamp every 8th pair, to check the FIRST offset is returned.
    out = []
    ts = base
    for i in range(COUNT):
        out.append(ts)
        if i % 8 != 0:
            ts += STEP_MS
    return out


def expected_offset(ts_list, target):
    for off, ts in enumerate(ts_list):
        if ts >= target:
            return off
    return -1


def test_offsets_for_times_exact(broker_factory):
    broker = broker_factory({"log.segment.bytes": 1024, "log.index.interval.bytes": 100})
    topic = "by-time"
    create_topic(broker.bootstrap, topic, 1)
    base = int(time.time() * 1000) - 3_600_000
    ts_list = timestamps(base)
    p = producer(broker.bootstrap, linger_ms=0)
    for i in range(0, COUNT, 7):  # many small batches
        produce_and_confirm(p, topic, [{"key": f"k{j}", "value": f"value-{j:04d}-" + "x" * 40, "timestamp": ts_list[j]}
                                       for j in range(i, min(i + 7, COUNT))])
    segments = broker.segment_files(topic, 0)
    assert len(segments) >= 5, f"expected several segments, got {[s.name for s in segments]}"

    targets = [base - 100_000, base - 1, base]
    for ts in sorted(set(ts_list))[::3]:
        targets += [ts, ts + STEP_MS // 2, ts - 1]
    targets += [ts_list[-1], ts_list[-1] + 1, ts_list[-1] + 100_000]
    # Segment boundaries: the first record of each segment and the one before it.
    for seg in segments[1:]:
        first = int(seg.name[:-4])
        targets += [ts_list[first], ts_list[first - 1], ts_list[first - 1] + 1]

    c = consumer(broker.bootstrap)
    try:
        wrong = []
        for target in targets:
            [res] = c.offsets_for_times([TopicPartition(topic, 0, target)], timeout=10)
            assert res.error is None, res.error
            want = expected_offset(ts_list, target)
            if res.offset != want:
                wrong.append((target - base, res.offset, want))
        assert not wrong, f"(target-base, got, want): {wrong[:10]} ({len(wrong)} of {len(targets)} wrong)"
    finally:
        c.close()

    # Raw ListOffsets v1 also reports the timestamp of the record found.
    with kw.Connection(broker.port) as conn:
        r = kw.list_offsets(conn, topic, 0, ts_list[100] - 1)
        assert (r["error"], r["offset"], r["timestamp"]) == (0, expected_offset(ts_list, ts_list[100] - 1),
                                                             ts_list[expected_offset(ts_list, ts_list[100] - 1)])
        r = kw.list_offsets(conn, topic, 0, ts_list[-1] + 1)
        assert (r["error"], r["offset"], r["timestamp"]) == (0, -1, -1)
        assert kw.list_offsets(conn, topic, 0, kw.EARLIEST)["offset"] == 0
        assert kw.list_offsets(conn, topic, 0, kw.LATEST)["offset"] == COUNT


def test_offsets_for_times_survive_restart(broker_factory):
    """Time indexes are rebuilt or reloaded: the same answers after a clean restart and after a crash."""
    broker = broker_factory({"log.segment.bytes": 2048})
    topic = "by-time-restart"
    create_topic(broker.bootstrap, topic, 1)
    base = int(time.time() * 1000) - 600_000
    ts_list = [base + 5 * i for i in range(150)]
    p = producer(broker.bootstrap, linger_ms=0)
    for i in range(0, 150, 10):
        produce_and_confirm(p, topic, [{"value": "y" * 50, "timestamp": ts_list[j]} for j in range(i, i + 10)])
    del p

    def check():
        c = consumer(broker.bootstrap)
        try:
            for target in [base - 1, base + 3, base + 5 * 77, base + 5 * 77 + 1, base + 5 * 149, base + 5 * 150]:
                [res] = c.offsets_for_times([TopicPartition(topic, 0, target)], timeout=10)
                assert res.offset == expected_offset(ts_list, target), (target - base, res.offset)
        finally:
            c.close()

    check()
    broker.stop()
    broker.restart()
    check()
    broker.kill()
    broker.restart()
    check()
