"""Replication across three real brokerd processes in three racks, driven by an idempotent
acks=all producer writing keyed records: the leader of a partition is killed (kill -9), paused
past the session timeout, or two of three nodes are stopped. Each time every acknowledged
record is read back exactly once, at its offset, in per-key order, and the producer writes
again within seconds."""
import signal
import time

import pytest

import clients
from brokerd_harness import free_port
from cluster_harness import QuorumCluster
from keyed_workload import KeyedWriter, check_read_back
from prometheus_text import scrape, value
from waiting import eventually

RACKS = {1: "zone-a", 2: "zone-b", 3: "zone-c"}
# Quick ISR changes for the tests; the shipped default is 10 s.
OVERRIDES = {"replica.lag.time.max.ms": "2000", "min.insync.replicas": "2", "offsets.topic.replication.factor": "3"}


@pytest.fixture
def cluster(tmp_path):
    c = QuorumCluster(tmp_path, overrides=OVERRIDES,
                      per_node={i: {"broker.rack": r, "metrics.listener": f"127.0.0.1:{free_port()}"}
                                for i, r in RACKS.items()})
    try:
        yield c.start()
    finally:
        c.tear_down()



def create(cluster, name, partitions):
    a = clients.admin(cluster.bootstrap())
    from confluent_kafka.admin import NewTopic
    a.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=3)],
                    operation_timeout=30)[name].result(timeout=30)
    return wait_for_leaders(cluster, name, partitions)


def wait_for_leaders(cluster, name, partitions, timeout=30.0, excluding=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            md = clients.admin(cluster.bootstrap()).list_topics(topic=name, timeout=5).topics.get(name)
        except Exception:
            md = None
        if md and md.error is None and len(md.partitions) == partitions and all(
                p.leader >= 0 and p.leader not in excluding for p in md.partitions.values()):
            return {p.id: (p.leader, sorted(p.isrs)) for p in md.partitions.values()}
        time.sleep(0.1)
    raise TimeoutError(f"{name}: no leaders")


def isr_of(cluster, name, partition, excluding=()):
    """The ISR as the nodes not in `excluding` see it (a node that was paused answers from its
    old metadata until it has caught up)."""
    via = ",".join(n.bootstrap for i, n in cluster.nodes.items() if n.running() and i not in excluding)
    md = clients.admin(via).list_topics(topic=name, timeout=5)
    return sorted(md.topics[name].partitions[partition].isrs)



def run_and_check(cluster, writer, partitions, report, require_delivery=True):
    writer.stop(require_delivery=require_delivery)
    acked, read, lost, dups, reorders = check_read_back(cluster.bootstrap(), writer, partitions)
    print(f"{report}: acknowledged {acked}, read back {read}, lost {len(lost)}, duplicates {dups}, "
          f"reordered {reorders}, failed (not acknowledged) {len(writer.failed)}")
    assert not lost, f"{len(lost)} acknowledged records lost: {lost[:5]}"
    assert dups == 0 and reorders == 0
    return acked


def test_kill9_of_a_leader_loses_no_acknowledged_record(cluster):
    view = create(cluster, "killed", 3)
    writer = KeyedWriter(cluster.bootstrap(), "killed").start()
    time.sleep(2)
    victim = view[0][0]
    killed_at = time.monotonic()
    cluster.nodes[victim].kill()
    new_view = wait_for_leaders(cluster, "killed", 3, excluding=(victim,))
    assert new_view[0][0] != victim
    time.sleep(4)
    resumed = writer.acked_after(killed_at + 0.1, 0)  # acks already on the wire arrive at once
    cluster.nodes[victim].start(timeout=60)
    # It says it did not stop cleanly (it may have lost unflushed data), so the controller
    # no longer counts it eligible until it has caught up again.
    assert any(f"registered broker {victim} " in n.all_logs() and "after an unclean stop" in n.all_logs()
               for n in cluster.nodes.values())
    # The returning node catches up and rejoins every ISR.
    assert eventually(lambda: all(isr_of(cluster, "killed", p) == [1, 2, 3] for p in range(3)), 30)
    time.sleep(1)
    acked = run_and_check(cluster, writer, 3, f"kill -9 of leader {victim}")
    assert acked > 100
    assert resumed is not None and resumed < 10, f"writes resumed after {resumed}s"
    print(f"first acknowledgement of the partition {resumed + 0.1:.2f}s after the kill")


def test_a_paused_leader_is_replaced_and_rejoins_as_a_follower(cluster):
    view = create(cluster, "paused", 2)
    writer = KeyedWriter(cluster.bootstrap(), "paused").start()
    time.sleep(2)
    victim = view[0][0]
    cluster.nodes[victim].proc.send_signal(signal.SIGSTOP)
    try:
        wait_for_leaders(cluster, "paused", 2, excluding=(victim,), timeout=20)
        time.sleep(2)
    finally:
        cluster.nodes[victim].proc.send_signal(signal.SIGCONT)
    # The old leader learns it was replaced, truncates what it alone had, and catches up.
    assert eventually(lambda: all(isr_of(cluster, "paused", p, excluding=(victim,)) == [1, 2, 3] for p in range(2)),
                      40)
    # Every record is answered: the resumed node does not name itself leader from its stale
    # image (librdkafka 2.0 would otherwise move the partition back to it and keep retrying
    # there until its records time out).
    run_and_check(cluster, writer, 2, f"SIGSTOP of leader {victim}")


def test_a_lagging_follower_leaves_the_isr_and_writes_go_on(cluster):
    view = create(cluster, "lagging", 1)
    leader = view[0][0]
    follower = next(i for i in (1, 2, 3) if i != leader)
    writer = KeyedWriter(cluster.bootstrap(), "lagging").start()
    time.sleep(1)
    # Stopped but not killed: its heartbeats stop too, so the controller fences it after the
    # session timeout and the leader's lag check agrees; either way it leaves the ISR.
    cluster.nodes[follower].proc.send_signal(signal.SIGSTOP)
    try:
        # Asked of the others: the paused node cannot answer.
        assert eventually(lambda: follower not in isr_of(cluster, "lagging", 0, excluding=(follower,)), 15)
        before = len(writer.acked)
        time.sleep(2)
        assert len(writer.acked) > before, "acks=all goes on with two in-sync replicas of three"
        # The leader's metrics say so.
        led = metrics(cluster, leader)
        assert value(led, "brokerd_under_replicated_partitions") >= 1
        assert value(led, "brokerd_under_min_isr_partitions") == 0
    finally:
        cluster.nodes[follower].proc.send_signal(signal.SIGCONT)
    assert eventually(lambda: isr_of(cluster, "lagging", 0, excluding=(follower,)) == [1, 2, 3], 30)
    assert eventually(lambda: value(metrics(cluster, leader), "brokerd_under_replicated_partitions") == 0, 10)
    assert value(metrics(cluster, leader), "brokerd_isr_expands_total") >= 1
    assert value(metrics(cluster, follower), "brokerd_replication_bytes_in_total") > 0
    run_and_check(cluster, writer, 1, f"SIGSTOP of follower {follower}")


def metrics(cluster, node):
    port = int(cluster.nodes[node].overrides["metrics.listener"].rsplit(":", 1)[1])
    return scrape(port)[0]


def test_followers_fetch_through_incremental_sessions(cluster):
    """Each follower keeps one fetch session (KIP-227) with each leader, holding every
    partition it follows from there: a leader's sessions hold each partition it leads twice."""
    create(cluster, "sessions", 12)
    writer = KeyedWriter(cluster.bootstrap(), "sessions").start()
    time.sleep(2)

    def in_step():
        for node in (1, 2, 3):
            m = metrics(cluster, node)
            led = value(m, "brokerd_leader_partitions")
            if led == 0 or value(m, "brokerd_fetch_session_partitions") != 2 * led:
                return False
            if value(m, "brokerd_fetch_sessions") != 2:
                return False
        return True

    assert eventually(in_step, 20), [(n, value(metrics(cluster, n), "brokerd_leader_partitions"),
                                      value(metrics(cluster, n), "brokerd_fetch_session_partitions"))
                                     for n in (1, 2, 3)]
    run_and_check(cluster, writer, 12, "through fetch sessions")


def test_with_two_of_three_nodes_down_writes_are_refused_then_resume(cluster):
    view = create(cluster, "quorumless", 1)
    leader = view[0][0]
    # The follower paused is the controller when the controller is a follower: on resuming,
    # it must not fence the brokers whose heartbeats it could not read while stopped.
    controller, _ = cluster.wait_for_leader()
    others = sorted((i for i in (1, 2, 3) if i != leader), key=lambda i: i == controller)
    writer = KeyedWriter(cluster.bootstrap(), "quorumless", **{"message.timeout.ms": 120000}).start()
    time.sleep(1)
    # One follower down: still two in sync, writes go on.
    cluster.nodes[others[0]].kill()
    assert eventually(lambda: others[0] not in isr_of(cluster, "quorumless", 0), 15)
    # The second follower paused: the ISR cannot shrink below the leader (the controller
    # refuses nothing, but min.insync.replicas=2 is no longer met): nothing is acknowledged.
    cluster.nodes[others[1]].proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(4)
        count = len(writer.acked)
        time.sleep(3)
        assert len(writer.acked) == count, "no write is acknowledged with one replica in sync"
    finally:
        cluster.nodes[others[1]].proc.send_signal(signal.SIGCONT)
    cluster.nodes[others[0]].start(timeout=60)
    assert eventually(lambda: len(writer.acked) > count, 30), "writes resume"
    run_and_check(cluster, writer, 1, "two of three nodes down")
    if controller != leader:
        assert not any(f"broker {leader} sent no heartbeat" in n.all_logs() for n in cluster.nodes.values()), \
            "the resumed controller fenced the partition leader for heartbeats it could not read"


def offsets_leader(cluster, group):
    """The coordinator of `group`: the leader of its __consumer_offsets partition (Kafka's
    choice, abs(Java hashCode of the id) mod the partition count)."""
    h = 0
    for ch in group:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    md = clients.admin(cluster.bootstrap()).list_topics(topic="__consumer_offsets", timeout=10)
    partitions = md.topics["__consumer_offsets"].partitions
    return partitions[abs(h) % len(partitions)].leader


def test_an_offset_commit_is_answered_only_once_the_isr_has_it(cluster):
    """The coordinator's own writes are acks=all: with both other replicas of its offsets
    partition paused, a commit is not acknowledged; once they are back it is, and a consumer
    of the group starts from it after the coordinator moves."""
    import threading
    from confluent_kafka import Consumer, TopicPartition
    create(cluster, "committed", 1)
    group = "isr-commits"

    def consumer():
        return Consumer({"bootstrap.servers": cluster.bootstrap(), "group.id": group, "enable.auto.commit": False})

    c = consumer()
    c.commit(offsets=[TopicPartition("committed", 0, 5)], asynchronous=False)  # the group exists
    coordinator = offsets_leader(cluster, group)
    others = [i for i in cluster.nodes if i != coordinator]
    for i in others:
        cluster.nodes[i].proc.send_signal(signal.SIGSTOP)
    outcome = {}

    def commit():
        try:
            c.commit(offsets=[TopicPartition("committed", 0, 42)], asynchronous=False)
            outcome["t"] = time.monotonic()
        except Exception as e:
            outcome["error"] = e

    try:
        t = threading.Thread(target=commit, daemon=True)
        t.start()
        t.join(timeout=6)
        assert "t" not in outcome, "the commit was acknowledged while only the coordinator had it"
    finally:
        for i in others:
            cluster.nodes[i].proc.send_signal(signal.SIGCONT)
    t.join(timeout=60)
    if "error" in outcome:  # refused meanwhile (COORDINATOR_NOT_AVAILABLE): commit again
        c.commit(offsets=[TopicPartition("committed", 0, 42)], asynchronous=False)
    c.close()
    # The coordinator dies; its successor has the commit.
    cluster.nodes[coordinator].kill()
    deadline = time.monotonic() + 60
    got = None
    while time.monotonic() < deadline:
        try:
            probe = consumer()
            got = probe.committed([TopicPartition("committed", 0)], timeout=10)[0].offset
            probe.close()
            if got >= 0:
                break
        except Exception:
            pass
        time.sleep(0.5)
    assert got == 42, f"the group's committed offset after the coordinator died: {got}"


def test_deleting_a_topic_does_not_fail_the_fetches_of_other_partitions(cluster):
    """A follower may still fetch a partition its leader has just deleted (each node applies
    the deletion when it replays it): the leader answers UNKNOWN_TOPIC_OR_PARTITION for that
    partition alone, which must not fail the round, and back off, every other partition
    fetched from that leader."""
    create(cluster, "kept", 6)
    doomed = [f"doomed-{i}" for i in range(4)]
    for name in doomed:
        create(cluster, name, 6)
    writer = KeyedWriter(cluster.bootstrap(), "kept").start()
    time.sleep(2)
    logs_before = {i: len(n.log_text()) for i, n in cluster.nodes.items()}
    a = clients.admin(cluster.bootstrap())
    for name in doomed:
        # One deletion at a time: each is a chance for a follower's fetch to name a
        # partition its leader has just dropped.
        a.delete_topics([name], operation_timeout=30)[name].result(timeout=30)
        time.sleep(1.0)
    time.sleep(1.0)
    failed = {i: [line for line in n.log_text()[logs_before[i]:].splitlines()
                  if "fetching from broker" in line and "failed" in line]
              for i, n in cluster.nodes.items()}
    assert not any(failed.values()), failed
    # Replication of the kept topic went on: every follower is still in sync.
    for p in range(6):
        assert isr_of(cluster, "kept", p) == [1, 2, 3]
    run_and_check(cluster, writer, 6, "while topics were deleted")
