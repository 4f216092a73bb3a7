"""Consumer groups against a real brokerd with real clients: a confluent_kafka group that
commits after processing survives a member leaving and a broker restart; other groups read
independently; KafkaJS and kafka-python groups read every record once."""
import json
import subprocess
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, TopicPartition

from clients import create_topic, produce_and_confirm, producer
from waiting import wait_until

JS_DIR = Path(__file__).resolve().parent / "js"
PARTITIONS = 6
RECORDS = 3000
GROUP_OVERRIDES = {"group.initial.rebalance.delay.ms": "300", "group.min.session.timeout.ms": "1000"}


def produce(bootstrap, topic, start, count):
    p = producer(bootstrap)
    produce_and_confirm(p, topic, ({"key": str(i).encode(), "value": str(i).encode()} for i in range(start, start + count)))


def group_consumer(bootstrap, group, **conf):
    base = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
            "fetch.wait.max.ms": 100}
    base.update(conf)
    return Consumer(base)


class Member(threading.Thread):
    """Polls batches, 'processes' them (records what it saw), then commits synchronously."""

    def __init__(self, bootstrap, group, topic, seen, lock, name, **conf):
        super().__init__(name=name, daemon=True)
        self.c = group_consumer(bootstrap, group, **conf)
        self.c.subscribe([topic])
        self.seen, self.lock = seen, lock
        self.stop_flag = threading.Event()
        self.failed_commits = 0
        self.uncommitted = 0  # records in batches whose commit failed
        self.commits = 0
        self.error = None

    def run(self):
        try:
            while not self.stop_flag.is_set():
                msgs = self.c.consume(num_messages=50, timeout=0.2)
                batch = [m for m in msgs if not m.error()]
                if not batch:
                    continue
                with self.lock:
                    for m in batch:
                        self.seen.append((m.partition(), m.offset()))
                try:
                    self.c.commit(asynchronous=False)
                    self.commits += 1
                except KafkaException:
                    self.failed_commits += 1
                    self.uncommitted += len(batch)
            self.c.close()  # leaves the group
        except Exception as e:  # surfaced by the test
            self.error = e



def test_group_failover_restart_and_independent_groups(broker_factory):
    broker = broker_factory(GROUP_OVERRIDES)
    topic = "orders"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce(broker.bootstrap, topic, 0, RECORDS // 2)

    seen, lock = [], threading.Lock()
    members = [Member(broker.bootstrap, "g1", topic, seen, lock, f"m{i}") for i in range(3)]
    for m in members:
        m.start()
    wait_until(lambda: len(seen) >= RECORDS // 4, 60, "a quarter of the records")
    # One member leaves cleanly in the middle; the others take its partitions over.
    members[2].stop_flag.set()
    members[2].join(30)
    assert not members[2].is_alive()
    produce(broker.bootstrap, topic, RECORDS // 2, RECORDS // 2)
    wait_until(lambda: len({s for s in seen}) >= RECORDS, 90, "every record")
    for m in members[:2]:
        m.stop_flag.set()
    for m in members:
        m.join(30)
        assert m.error is None, m.error
    distinct = set(seen)
    duplicates = len(seen) - len(distinct)
    failed = sum(m.failed_commits for m in members)
    uncommitted = sum(m.uncommitted for m in members)
    print(f"\ngroup g1: {len(seen)} deliveries, {len(distinct)} distinct, {duplicates} duplicates, "
          f"{failed} failed commits covering {uncommitted} records, {sum(m.commits for m in members)} commits")
    assert len(distinct) == RECORDS  # nothing lost
    assert duplicates <= uncommitted  # duplicates only where a commit failed

    # A second group reads the same topic independently and sees every record.
    other, other_lock = [], threading.Lock()
    m2 = Member(broker.bootstrap, "g2", topic, other, other_lock, "other")
    m2.start()
    wait_until(lambda: len(set(other)) >= RECORDS, 60, "group g2 to read everything")
    m2.stop_flag.set()
    m2.join(30)
    assert len(set(other)) == RECORDS

    # After a restart, a new member of g1 resumes from the committed positions.
    c = group_consumer(broker.bootstrap, "g1")
    committed = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    c.close()
    assert sum(tp.offset for tp in committed) == RECORDS
    broker.stop()
    broker.start()
    produce(broker.bootstrap, topic, RECORDS, 60)
    c = group_consumer(broker.bootstrap, "g1")
    c.subscribe([topic])
    fresh = []
    deadline = time.monotonic() + 60
    while len(fresh) < 60 and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            fresh.append(int(m.value()))
    c.close()
    assert sorted(fresh) == list(range(RECORDS, RECORDS + 60))


def test_cooperative_sticky_member_joining_later_takes_partitions_incrementally(broker_factory):
    broker = broker_factory(GROUP_OVERRIDES)
    topic = "coop"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce(broker.bootstrap, topic, 0, RECORDS // 2)
    seen, lock = [], threading.Lock()
    conf = {"partition.assignment.strategy": "cooperative-sticky"}
    first = Member(broker.bootstrap, "coop-g", topic, seen, lock, "first", **conf)
    first.start()
    wait_until(lambda: len(first.c.assignment()) == PARTITIONS and len(seen) >= RECORDS // 8, 60,
               "the first member to own every partition")
    second = Member(broker.bootstrap, "coop-g", topic, seen, lock, "second", **conf)
    second.start()
    produce(broker.bootstrap, topic, RECORDS // 2, RECORDS // 2)
    # The second member gets half of the partitions; the first keeps the other half (it only
    # gives up what moves, it is never left with nothing in between).
    wait_until(lambda: len(second.c.assignment()) == PARTITIONS // 2 and len(first.c.assignment()) == PARTITIONS // 2,
               60, "an even split")
    wait_until(lambda: len(set(seen)) >= RECORDS, 90, "every record")
    for m in (first, second):
        m.stop_flag.set()
    for m in (first, second):
        m.join(30)
        assert not m.is_alive()
        assert m.error is None, m.error
    distinct = set(seen)
    uncommitted = first.uncommitted + second.uncommitted
    print(f"\ncooperative group: {len(seen)} deliveries, {len(distinct)} distinct, "
          f"{first.failed_commits + second.failed_commits} failed commits covering {uncommitted} records")
    assert len(distinct) == RECORDS
    assert len(seen) - len(distinct) <= uncommitted
    c = group_consumer(broker.bootstrap, "coop-g")
    committed = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    c.close()
    assert sum(tp.offset for tp in committed) == RECORDS


def test_silent_member_is_removed_after_session_timeout(broker_factory, tmp_path):
    broker = broker_factory(GROUP_OVERRIDES)
    topic = "silent"
    create_topic(broker.bootstrap, topic, 4)
    script = tmp_path / "member.py"
    script.write_text(
        "import sys, time\nfrom confluent_kafka import Consumer\n"
        "c = Consumer({'bootstrap.servers': sys.argv[1], 'group.id': 'gs', 'session.timeout.ms': 2000,"
        " 'heartbeat.interval.ms': 300, 'auto.offset.reset': 'earliest'})\n"
        "c.subscribe([sys.argv[2]])\n"
        "while True:\n"
        "    c.poll(0.1)\n"
        "    a = c.assignment()\n"
        "    if a:\n"
        "        print('assigned', len(a), flush=True)\n")
    proc = subprocess.Popen(["/usr/bin/python3", str(script), broker.bootstrap, topic], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline()  # blocks until the member has an assignment
        assert line.startswith(b"assigned")
        c = group_consumer(broker.bootstrap, "gs", **{"session.timeout.ms": 2000, "heartbeat.interval.ms": 300})
        c.subscribe([topic])
        wait_until(lambda: (c.poll(0.1), len(c.assignment()))[1] == 2, 30, "a split of the partitions")
        proc.send_signal(19)  # SIGSTOP: no more heartbeats
        stopped = time.monotonic()
        wait_until(lambda: (c.poll(0.1), len(c.assignment()))[1] == 4, 30, "the silent member's partitions")
        took = time.monotonic() - stopped
        print(f"\npartitions moved {took:.2f}s after the member went silent (session 2 s)")
        assert took >= 1.5
        c.close()
    finally:
        proc.kill()
        proc.wait(10)


def test_kafka_python_group_reads_every_record_once(broker_factory):
    from kafka import KafkaConsumer
    broker = broker_factory(GROUP_OVERRIDES)
    topic = "kp"
    create_topic(broker.bootstrap, topic, 3)
    produce(broker.bootstrap, topic, 0, 500)
    got, lock, stop = [], threading.Lock(), threading.Event()
    errors = []

    def member():
        # Each member polls in its own thread: a rebalance waits for every member to rejoin.
        try:
            c = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id="kp-group",
                              auto_offset_reset="earliest", enable_auto_commit=False,
                              session_timeout_ms=6000, heartbeat_interval_ms=500, max_poll_interval_ms=10000)
            while not stop.is_set():
                batch = c.poll(timeout_ms=200)
                with lock:
                    for recs in batch.values():
                        got.extend((r.partition, r.offset) for r in recs)
                if batch:
                    c.commit()
            c.close()
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=member, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    wait_until(lambda: len(got) >= 500, 60, "kafka-python to read every record")
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert len(got) == 500 and len(set(got)) == 500



def test_kafkajs_group_reads_every_record_once(broker_factory, node):
    broker = broker_factory(GROUP_OVERRIDES)
    topic = "js-group"
    create_topic(broker.bootstrap, topic, 4)
    produce(broker.bootstrap, topic, 0, 400)
    proc = subprocess.run([node, str(JS_DIR / "groups_consumer.js"), broker.bootstrap, topic, "js-group", "400", "2"],
                          cwd=JS_DIR, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert out["count"] == 400 and out["distinct"] == 400, out
    # The commits landed: the group's committed offsets cover the topic.
    c = group_consumer(broker.bootstrap, "js-group")
    committed = c.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)
    c.close()
    assert sum(tp.offset for tp in committed) == 400
