"""Load on the group coordinator: a storm of 200k offset commits (raw, pipelined) succeeds
and the last one is what OffsetFetch returns; commit throughput with librdkafka clients;
rebalance time of ten members joining at once and after one leaves. Figures are printed."""
import threading
import time

from confluent_kafka import Consumer, TopicPartition

from clients import create_topic
from kafka_wire import Connection, Reader, array, i32, i64, string

COMMITS = 200_000
WINDOW = 256
OFFSET_COMMIT, OFFSET_FETCH = 8, 9


def commit_body(group, topic, partition, offset):
    part = i32(partition) + i64(offset) + string("")
    return (string(group) + i32(-1) + string("") + i64(-1) +
            array([topic], lambda t: string(t) + array([part], lambda p: p)))


def read_commit_errors(r):
    errors = []
    for _ in range(r.i32()):
        r.string()
        for _ in range(r.i32()):
            r.i32()
            errors.append(r.i16())
    return errors


def offsets_partition_of(group, partitions=50):
    h = 0
    for ch in group:  # Java's String.hashCode (ASCII here)
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % partitions


def test_commit_storm(broker_factory):
    # Small offsets segments and a quick cleaner, so the storm is compacted within the test.
    broker = broker_factory({"offsets.topic.segment.bytes": "1048576", "log.cleaner.backoff.ms": "200"})
    create_topic(broker.bootstrap, "storm", 4)
    with Connection(broker.port, timeout=30) as conn:
        sent = received = 0
        bad = 0
        started = time.monotonic()
        while received < COMMITS:
            while sent < COMMITS and sent - received < WINDOW:
                conn.send(OFFSET_COMMIT, 2, commit_body("storm-group", "storm", sent % 4, sent))
                sent += 1
            rd = Reader(conn.recv_frame())
            rd.i32()
            bad += sum(1 for e in read_commit_errors(rd) if e != 0)
            received += 1
        took = time.monotonic() - started
        print(f"\n{COMMITS} pipelined commits in {took:.2f}s: {COMMITS / took:.0f} commits/s, {bad} errors")
        assert bad == 0
        # OffsetFetch v1 of the four partitions: the last commit of each.
        body = string("storm-group") + array(["storm"], lambda t: string(t) + array(range(4), i32))
        r = conn.request(OFFSET_FETCH, 1, body)
        got = {}
        for _ in range(r.i32()):
            r.string()
            for _ in range(r.i32()):
                p, off = r.i32(), r.i64()
                r.string()
                assert r.i16() == 0
                got[p] = off
        assert got == {p: COMMITS - 4 + p for p in range(4)}
    part_dir = broker.data_dir / f"__consumer_offsets-{offsets_partition_of('storm-group')}"

    def part_bytes():
        return sum(f.stat().st_size for f in part_dir.glob("*.log"))

    # 200k commits take about 24 MB as written; once cleaned, every segment below the
    # active one keeps one record per key (the cleaner may already be at work here).
    print(f"__consumer_offsets partition holds {part_bytes() / 1e6:.2f} MB right after the storm")
    deadline = time.monotonic() + 90
    while part_bytes() > 2_500_000 and time.monotonic() < deadline:
        time.sleep(0.5)
    print(f"after cleaning: {part_bytes() / 1e6:.2f} MB")
    assert part_bytes() <= 2_500_000, "the commit storm was not compacted"
    # The committed state survives a restart (replayed from the log).
    broker.stop()
    t0 = time.monotonic()
    broker.start()
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "storm-group"})
    committed = c.committed([TopicPartition("storm", p) for p in range(4)], timeout=30)
    print(f"restart and first OffsetFetch after {time.monotonic() - t0:.2f}s")
    c.close()
    assert {tp.partition: tp.offset for tp in committed} == {p: COMMITS - 4 + p for p in range(4)}


def sync_commit_rate(bootstrap, group, topic, seconds):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    n, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        c.commit(offsets=[TopicPartition(topic, 0, n + 1)], asynchronous=False)
        n += 1
    c.close()
    return n


def test_commit_throughput_with_librdkafka(broker_factory):
    broker = broker_factory()
    create_topic(broker.bootstrap, "rate", 1)
    n = sync_commit_rate(broker.bootstrap, "rate-1", "rate", 3.0)
    print(f"\none client, synchronous commits: {n / 3.0:.0f} commits/s")
    counts = [0] * 4

    def worker(i):
        counts[i] = sync_commit_rate(broker.bootstrap, f"rate-many-{i}", "rate", 3.0)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    print(f"four clients, synchronous commits: {sum(counts) / 3.0:.0f} commits/s in total")
    assert n > 0 and all(counts)


def test_rebalance_time_of_ten_members(broker_factory):
    broker = broker_factory({"group.initial.rebalance.delay.ms": "0"})
    create_topic(broker.bootstrap, "ten", 20)
    consumers = [Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "ten", "session.timeout.ms": 10000,
                           "heartbeat.interval.ms": 200}) for _ in range(10)]
    t0 = time.monotonic()
    for c in consumers:
        c.subscribe(["ten"])

    def all_assigned(cs, partitions):
        for c in cs:
            c.poll(0.02)
        sizes = [len(c.assignment()) for c in cs]
        return all(sizes) and sum(sizes) == partitions

    deadline = time.monotonic() + 60
    while not all_assigned(consumers, 20):
        assert time.monotonic() < deadline, "ten members did not all get an assignment"
    joined = time.monotonic() - t0
    consumers[0].close()
    t1 = time.monotonic()
    rest = consumers[1:]
    deadline = time.monotonic() + 60
    while not all_assigned(rest, 20):
        assert time.monotonic() < deadline, "nine members did not take over"
    left = time.monotonic() - t1
    print(f"\nten members joining at once: all assigned after {joined:.2f}s; "
          f"after one left: {left:.2f}s (group.initial.rebalance.delay.ms=0, heartbeat 200 ms)")
    for c in rest:
        c.close()
