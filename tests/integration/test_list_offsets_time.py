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


def test_max_timestamp_answers_only_committed_records(tmp_path):
    # A record above the high watermark (written with acks=1 while the follower is stopped)
    # may still be cut by the next leader: ListOffsets must not name it, for MAX_TIMESTAMP (-3)
    # as for any timestamp. Kafka then answers no offset.
    import signal
    from confluent_kafka.admin import NewTopic

    from cluster_harness import QuorumCluster
    from clients import admin
    from waiting import eventually

    cluster = QuorumCluster(tmp_path, voters=2)
    try:
        cluster.start()
        topic = "max-ts"
        a = admin(cluster.bootstrap())  # must outlive its futures
        a.create_topics([NewTopic(topic, num_partitions=1, replication_factor=2, config={"min.insync.replicas": "1"})],
                        operation_timeout=30)[topic].result(timeout=30)

        def isr():
            md = admin(cluster.bootstrap()).list_topics(topic=topic, timeout=5).topics.get(topic)
            p = md.partitions.get(0) if md and md.error is None else None
            return (p.leader, sorted(p.isrs)) if p and p.leader >= 0 else None

        assert eventually(lambda: isr() and isr()[1] == [1, 2], 30), isr()
        leader = isr()[0]
        follower = 3 - leader
        now = int(time.time() * 1000)
        with kw.Connection(cluster.nodes[leader].port) as conn:
            first = kw.produce(conn, topic, 0, kw.record_batch([(b"k", b"committed", now)], base_timestamp=now))
            assert (first["error"], first["base_offset"]) == (0, 0), first
            cluster.nodes[follower].proc.send_signal(signal.SIGSTOP)
            try:
                later = now + 5000
                second = kw.produce(conn, topic, 0, kw.record_batch([(b"k", b"uncommitted", later)],
                                                                     base_timestamp=later), acks=1)
                assert (second["error"], second["base_offset"]) == (0, 1), second
                assert kw.list_offsets(conn, topic, 0, kw.LATEST)["offset"] == 1  # the high watermark
                got = kw.list_offsets(conn, topic, 0, -3)
                assert got["error"] == 0, got
                assert got["offset"] != 1, f"MAX_TIMESTAMP named offset 1, above the high watermark: {got}"
                assert (got["offset"], got["timestamp"]) == (-1, -1), got
            finally:
                cluster.nodes[follower].proc.send_signal(signal.SIGCONT)
            # Once the follower has it, the record is committed and named.
            assert eventually(lambda: kw.list_offsets(conn, topic, 0, -3)["offset"] == 1, 30)
    finally:
        cluster.tear_down()
