"""Transactions with real clients (python3-confluent-kafka / librdkafka): commit and abort
across partitions, read_committed against read_uncommitted, offsets sent to a transaction,
zombie fencing, a producer that dies with its transaction open, and the coordinator killed
(kill -9) on three nodes."""
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "utils"))

from clients import create_topic  # noqa: E402
from waiting import wait_until  # noqa: E402

FAST_ABORT = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}


def txn_producer(bootstrap, txn_id, **conf):
    c = {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
         "transaction.timeout.ms": 10000}
    c.update(conf)
    return Producer(c)


def read_all(bootstrap, topic, partitions, isolation, timeout=20.0, expect=None):
    """Every record of the topic's partitions, as (partition, offset, key, value), read from the
    beginning at the isolation level; stops once `expect` records are in or nothing new arrives
    for 2 s after the end of each partition is reached."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader-" + uuid.uuid4().hex,
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "enable.partition.eof": True})
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        out, eof, quiet_since = [], set(), time.monotonic()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                if len(eof) == partitions and time.monotonic() - quiet_since > 2:
                    break
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise KafkaException(m.error())
            quiet_since = time.monotonic()
            out.append((m.partition(), m.offset(), m.key(), m.value()))
            if expect is not None and len(out) >= expect:
                break
        return out
    finally:
        c.close()


def values(records):
    return sorted(r[3] for r in records)


def die_inside_a_transaction(tmp_path, bootstrap, txn_id, topic, value, timeout_ms):
    """A producer process that writes `value` in a transaction and is killed (-9) before it ends it."""
    script = tmp_path / f"{txn_id}.py"
    script.write_text(
        "import os\n"
        "from confluent_kafka import Producer\n"
        f"p = Producer({{'bootstrap.servers': '{bootstrap}', 'transactional.id': '{txn_id}', "
        f"'transaction.timeout.ms': {timeout_ms}}})\n"
        "p.init_transactions(30)\n"
        "p.begin_transaction()\n"
        f"p.produce('{topic}', value={value!r})\n"
        "p.flush(30)\n"
        "os.kill(os.getpid(), 9)\n")
    assert subprocess.run(["/usr/bin/python3", str(script)], timeout=60).returncode == -9


def test_commit_and_abort_across_partitions(broker):
    create_topic(broker.bootstrap, "tx-a", partitions=3)
    p = txn_producer(broker.bootstrap, "txn-commit-abort")
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(30):
        p.produce("tx-a", key=str(i).encode(), value=f"committed-{i}".encode(), partition=i % 3)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(30):
        p.produce("tx-a", key=str(i).encode(), value=f"aborted-{i}".encode(), partition=i % 3)
    p.flush(30)
    p.abort_transaction(30)
    p.begin_transaction()
    p.produce("tx-a", key=b"last", value=b"committed-last", partition=0)
    p.commit_transaction(30)

    committed = read_all(broker.bootstrap, "tx-a", 3, "read_committed")
    assert values(committed) == sorted([f"committed-{i}".encode() for i in range(30)] + [b"committed-last"])
    # read_uncommitted sees the aborted records too (and never the markers).
    everything = read_all(broker.bootstrap, "tx-a", 3, "read_uncommitted")
    assert len(everything) == 61
    assert sum(1 for r in everything if r[3].startswith(b"aborted-")) == 30


def test_an_open_transaction_holds_read_committed_readers_back(broker):
    create_topic(broker.bootstrap, "tx-open", partitions=1)
    p = txn_producer(broker.bootstrap, "txn-open")
    p.init_transactions(30)
    p.begin_transaction()
    p.produce("tx-open", value=b"pending")
    p.flush(30)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce("tx-open", value=b"plain-after")
    plain.flush(30)
    # The plain record lies beyond the open transaction's first offset: not readable yet.
    assert read_all(broker.bootstrap, "tx-open", 1, "read_committed", timeout=5) == []
    assert len(read_all(broker.bootstrap, "tx-open", 1, "read_uncommitted", timeout=5)) == 2
    p.commit_transaction(30)
    assert values(read_all(broker.bootstrap, "tx-open", 1, "read_committed")) == [b"pending", b"plain-after"]


def test_offsets_sent_to_a_transaction_commit_with_it(broker):
    create_topic(broker.bootstrap, "tx-in", partitions=2)
    create_topic(broker.bootstrap, "tx-out", partitions=2)
    feed = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(20):
        feed.produce("tx-in", value=f"in-{i}".encode(), partition=i % 2)
    feed.flush(30)

    group = "eos-" + uuid.uuid4().hex
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe(["tx-in"])
    p = txn_producer(broker.bootstrap, "txn-eos")
    p.init_transactions(30)

    def transform(n, commit):
        got = []
        deadline = time.monotonic() + 30
        while len(got) < n and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and not m.error():
                got.append(m)
        assert len(got) == n
        p.begin_transaction()
        for m in got:
            p.produce("tx-out", value=m.value().replace(b"in-", b"out-"), partition=m.partition())
        ends = {}
        for m in got:
            ends[m.partition()] = max(ends.get(m.partition(), 0), m.offset() + 1)
        positions = [TopicPartition("tx-in", part, off) for part, off in ends.items()]
        p.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
        return got

    transform(10, commit=True)
    committed_positions = {tp.partition: tp.offset for tp in consumer.committed(
        [TopicPartition("tx-in", 0), TopicPartition("tx-in", 1)], timeout=10)}
    assert sum(max(o, 0) for o in committed_positions.values()) == 10, committed_positions
    transform(10, commit=False)
    # The aborted transaction's offsets were dropped with it.
    after_abort = {tp.partition: tp.offset for tp in consumer.committed(
        [TopicPartition("tx-in", 0), TopicPartition("tx-in", 1)], timeout=10)}
    assert after_abort == committed_positions
    consumer.close()
    assert len(read_all(broker.bootstrap, "tx-out", 2, "read_committed")) == 10


def test_a_new_producer_fences_the_old_one(broker):
    create_topic(broker.bootstrap, "tx-fence", partitions=1)
    old = txn_producer(broker.bootstrap, "txn-zombie")
    old.init_transactions(30)
    old.begin_transaction()
    old.produce("tx-fence", value=b"zombie")
    old.flush(30)
    new = txn_producer(broker.bootstrap, "txn-zombie")
    new.init_transactions(30)  # aborts the old producer's open transaction
    with pytest.raises(KafkaException) as fenced:
        old.commit_transaction(10)
    assert fenced.value.args[0].code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                           KafkaError.INVALID_PRODUCER_EPOCH), fenced.value
    new.begin_transaction()
    new.produce("tx-fence", value=b"new")
    new.commit_transaction(30)
    assert values(read_all(broker.bootstrap, "tx-fence", 1, "read_committed")) == [b"new"]


def test_a_dead_producers_transaction_is_aborted_after_its_timeout(broker_factory, tmp_path):
    b = broker_factory(overrides=FAST_ABORT)
    create_topic(b.bootstrap, "tx-dead", partitions=1)
    die_inside_a_transaction(tmp_path, b.bootstrap, "txn-dies", "tx-dead", b"orphan", 3000)
    plain = Producer({"bootstrap.servers": b.bootstrap})
    plain.produce("tx-dead", value=b"after")
    plain.flush(30)
    started = time.monotonic()
    # Held back by the orphan until the coordinator aborts it (3 s timeout, checked every 0.5 s).
    wait_until(lambda: values(read_all(b.bootstrap, "tx-dead", 1, "read_committed", timeout=3)) == [b"after"], 30,
               "the orphaned transaction to be aborted")
    print(f"read_committed readers got past the orphaned transaction {time.monotonic() - started:.1f}s later")
    assert "aborting the transaction of txn-dies" in b.all_logs()


def java_hash(s):
    h = 0
    for ch in s.encode("utf-16-be").decode("utf-16-be"):
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def coordinator_of(bootstrap, txn_id, partitions=50):
    from confluent_kafka.admin import AdminClient
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic="__transaction_state", timeout=10)
    h = java_hash(txn_id)
    p = (abs(h) if h != -(1 << 31) else 0) % partitions
    return md.topics["__transaction_state"].partitions[p].leader


def run_transactions(bootstrap, txn_id, topic, partitions, seconds, on_tick=None):
    """Transactions of 6 records each, committed (and every fourth aborted) for `seconds`.
    Returns (committed, aborted, unknown): the txn numbers whose commit returned, whose abort
    returned, and whose end the client could not learn (retried until it gave up)."""
    committed, aborted, unknown = [], [], []
    p = txn_producer(bootstrap, txn_id, **{"transaction.timeout.ms": 15000})
    p.init_transactions(60)
    n, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        n += 1
        if on_tick:
            on_tick(n)
        abort = n % 4 == 0
        try:
            p.begin_transaction()
            for k in range(6):
                p.produce(topic, value=f"{n}-{k}".encode(), partition=k % partitions)
            if abort:
                p.abort_transaction(60)
                aborted.append(n)
                continue
            for attempt in range(20):
                try:
                    p.commit_transaction(60)
                    committed.append(n)
                    break
                except KafkaException as e:
                    err = e.args[0]
                    if err.retriable() and attempt < 19:
                        time.sleep(0.5)
                        continue
                    raise
        except KafkaException as e:
            err = e.args[0]
            if err.txn_requires_abort():
                try:
                    p.abort_transaction(60)
                    aborted.append(n)
                except KafkaException:
                    unknown.append(n)
            elif err.fatal():
                unknown.append(n)
                print(f"transaction {n}: fatal {err}")
                p = txn_producer(bootstrap, txn_id, **{"transaction.timeout.ms": 15000})
                p.init_transactions(60)
            else:
                unknown.append(n)
                print(f"transaction {n}: {err}")
    return committed, aborted, unknown


def test_coordinator_killed_mid_stream_loses_no_committed_transaction(tmp_path):
    from cluster_harness import QuorumCluster
    from confluent_kafka.admin import AdminClient, NewTopic
    c = QuorumCluster(tmp_path, overrides=FAST_ABORT)
    try:
        c.start()
        a = AdminClient({"bootstrap.servers": c.bootstrap()})
        a.create_topics([NewTopic("tx-failover", num_partitions=3, replication_factor=3)])["tx-failover"].result(30)
        killed = {}

        def tick(n):
            if n == 15 and not killed:
                victim = coordinator_of(c.bootstrap(), "txn-failover")
                killed["node"] = victim
                killed["at"] = time.monotonic()
                c.nodes[victim].kill()

        # The first transaction creates __transaction_state (RF 3 on three nodes).
        committed, aborted, unknown = run_transactions(c.bootstrap(), "txn-failover", "tx-failover", 3, 15, tick)
        assert killed, "the coordinator was never killed"
        c.nodes[killed["node"]].start(timeout=60)
        assert len(committed) > 20, (committed, aborted, unknown)
        seen = read_all(c.bootstrap(), "tx-failover", 3, "read_committed", timeout=60)
        by_txn = {}
        for r in seen:
            n, k = r[3].decode().split("-")
            by_txn.setdefault(int(n), set()).add(int(k))
        lost = [n for n in committed if by_txn.get(n) != set(range(6))]
        visible_aborts = [n for n in aborted if n in by_txn]
        torn = [n for n, ks in by_txn.items() if ks != set(range(6))]
        assert not lost, f"committed transactions missing records: {lost}"
        assert not visible_aborts, f"aborted transactions visible to read_committed: {visible_aborts}"
        assert not torn, f"transactions partly visible: {torn}"
        new_coordinator = coordinator_of(c.bootstrap(), "txn-failover")
        print(f"coordinator {killed['node']} killed; {len(committed)} committed, {len(aborted)} aborted, "
              f"{len(unknown)} unknown; coordinator now {new_coordinator}")
    finally:
        c.tear_down()


def test_kafkajs_consume_transform_produce(broker, node):
    create_topic(broker.bootstrap, "js-txn-in", partitions=2)
    create_topic(broker.bootstrap, "js-txn-out", partitions=2)
    feed = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(40):
        feed.produce("js-txn-in", key=str(i).encode(), value=f"in-{i}".encode(), partition=i % 2)
    feed.flush(30)
    js = Path(__file__).resolve().parent / "js"
    proc = subprocess.run([node, str(js / "transactions.js"), broker.bootstrap, "js-txn-in", "js-txn-out", "js-eos"],
                          cwd=js, capture_output=True, timeout=150)
    assert proc.returncode == 0, f"kafkajs failed:\n{proc.stderr.decode()}"
    import json
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert out["aborted"] > 0 and out["copied"] == 40, out
    # Every input copied exactly once: the aborted copy is invisible, its batch was copied again.
    assert sorted(out["values"]) == sorted(f"out-{i}" for i in range(40)), out["values"]
    committed = {p["partition"]: int(p["offset"]) for t in out["committed"] for p in t["partitions"]}
    assert committed == {0: 20, 1: 20}, committed


def brokerctl(b, *args):
    from brokerd_harness import brokerctl_binary
    import json
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", b.bootstrap, "--output", "json", *args],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout.decode())


def test_brokerctl_lists_describes_and_aborts_a_transaction(broker, tmp_path):
    create_topic(broker.bootstrap, "tx-ctl", partitions=1)
    die_inside_a_transaction(tmp_path, broker.bootstrap, "txn-ctl", "tx-ctl", b"left-open", 600000)
    listed = brokerctl(broker, "transactions", "list", "--state", "Ongoing")
    assert [t["transactional_id"] for t in listed] == ["txn-ctl"], listed
    described = brokerctl(broker, "transactions", "describe", "txn-ctl")
    assert described["state"] == "Ongoing" and described["partitions"] == [{"topic": "tx-ctl", "partition": 0}]
    producers = brokerctl(broker, "transactions", "describe-producers", "--topic", "tx-ctl", "--partition", "0")
    assert [p["current_transaction_start_offset"] for p in producers] == [0], producers
    assert read_all(broker.bootstrap, "tx-ctl", 1, "read_committed", timeout=3) == []
    out = brokerctl(broker, "transactions", "abort", "--topic", "tx-ctl", "--partition", "0", "--start-offset", "0")
    assert out["aborted"] is True
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce("tx-ctl", value=b"after")
    plain.flush(30)
    # The aborted record stays invisible; what follows is readable at once.
    assert values(read_all(broker.bootstrap, "tx-ctl", 1, "read_committed")) == [b"after"]
    assert brokerctl(broker, "transactions", "find-hanging") == []


def test_transaction_metrics(broker_factory):
    from brokerd_harness import free_port
    from prometheus_text import scrape, value
    port = free_port()
    b = broker_factory({"metrics.listener": f"127.0.0.1:{port}"})
    create_topic(b.bootstrap, "tx-metered", partitions=1)
    p = txn_producer(b.bootstrap, "txn-metered")
    p.init_transactions(30)
    for commit in (True, True, False):
        p.begin_transaction()
        p.produce("tx-metered", value=b"v")
        p.flush(30)
        p.commit_transaction(30) if commit else p.abort_transaction(30)
    p.begin_transaction()
    p.produce("tx-metered", value=b"open")
    p.flush(30)

    def scraped():
        return scrape(port)[0]

    wait_until(lambda: value(scraped(), "brokerd_transactions_aborted_total") == 1, 10, "the abort to complete")
    m = scraped()
    assert value(m, "brokerd_transactions_committed_total") == 2
    assert value(m, "brokerd_transactions_ongoing") == 1
    assert value(m, "brokerd_last_stable_offset_lag", topic="tx-metered", partition="0") == 1
    assert value(m, "brokerd_txn_marker_requests_total") >= 3
    p.commit_transaction(30)
    wait_until(lambda: value(scraped(), "brokerd_transactions_ongoing") == 0, 10, "the last commit")
    assert value(scraped(), "brokerd_last_stable_offset_lag", topic="tx-metered", partition="0") == 0


def test_offsets_of_each_transaction_survive_a_restart(broker):
    """The group coordinator writes each transaction's offsets to the log (not only to memory):
    after a kill -9 and restart, the group resumes from the last committed transaction."""
    create_topic(broker.bootstrap, "tx-restart", partitions=2)
    group = "restart-" + uuid.uuid4().hex
    p = txn_producer(broker.bootstrap, "txn-restart")
    p.init_transactions(30)
    meta = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group}).consumer_group_metadata()
    # The same partitions every time (a retry would look the same), then more of them.
    for offsets in ({0: 5, 1: 5}, {0: 9, 1: 7}, {0: 12}, {0: 20, 1: 30}):
        p.begin_transaction()
        p.produce("tx-restart", value=b"x", partition=0)
        p.send_offsets_to_transaction([TopicPartition("tx-restart", k, v) for k, v in offsets.items()], meta, 30)
        p.commit_transaction(30)
    broker.kill()
    broker.restart()
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    committed = {tp.partition: tp.offset
                 for tp in c.committed([TopicPartition("tx-restart", 0), TopicPartition("tx-restart", 1)], timeout=30)}
    c.close()
    assert committed == {0: 20, 1: 30}
