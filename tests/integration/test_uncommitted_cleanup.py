"""Compaction and retention touch only committed records. A follower is paused so that the high
watermark stays behind the leader's log end; records written meanwhile with acks=1 roll
segments past it. Neither the cleaner nor retention may then remove a committed record on
the strength of uncommitted ones (a new leader may never have had them), and the paused
replica rejoins the ISR once it runs again."""
import signal
import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition
from confluent_kafka.admin import NewTopic

import clients
from cluster_harness import QuorumCluster
from waiting import wait_until

# The ISR must not shrink while the follower is paused (the high watermark would then move
# to the leader's end): neither by lag nor by the controller fencing the paused broker.
# Cleaner and retention look often.
OVERRIDES = {"replica.lag.time.max.ms": "60000", "broker.session.timeout.ms": "60000", "log.cleaner.backoff.ms": "200",
             "log.retention.check.interval.ms": "300", "offsets.topic.replication.factor": "3"}


@pytest.fixture
def cluster(tmp_path):
    c = QuorumCluster(tmp_path, overrides=OVERRIDES)
    try:
        yield c.start()
    finally:
        c.tear_down()


def create_on_two(cluster, name, config):
    """A partition led by one node and followed by another, neither the quorum's leader (so
    pausing the follower leaves the metadata quorum alone). Returns (leader, follower)."""
    controller, _ = cluster.wait_for_leader()
    leader, follower = [i for i in sorted(cluster.nodes) if i != controller]
    a = clients.admin(cluster.bootstrap())
    a.create_topics([NewTopic(name, num_partitions=1, replica_assignment=[[leader, follower]], config=config)],
                    operation_timeout=30)[name].result(timeout=30)
    wait_until(lambda: leader_of(cluster, name) == leader, 30, f"{name} led by {leader}")
    return leader, follower


def leader_of(cluster, name):
    md = clients.admin(cluster.bootstrap()).list_topics(topic=name, timeout=5).topics.get(name)
    if md is None or md.error is not None or 0 not in md.partitions:
        return -1
    return md.partitions[0].leader


def isr(cluster, name, via):
    md = clients.admin(cluster.nodes[via].bootstrap).list_topics(topic=name, timeout=5).topics.get(name)
    return sorted(md.partitions[0].isrs) if md and md.error is None else []


def produce(bootstrap, topic, records, acks):
    """Each record in a batch of its own (the segments roll between them), in order."""
    p = clients.producer(bootstrap, acks=str(acks), enable_idempotence=False, linger_ms=0, retries=0)
    return [(m.offset(), m.key()) for r in records for m in clients.produce_and_confirm(p, topic, [r], timeout=20)]


def first_record(bootstrap, topic, timeout=10.0):
    """The first record a consumer reads from the beginning, or None."""
    c = clients.consumer(bootstrap)
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                return m.offset(), m.key(), m.value()
        return None
    finally:
        c.close()


def paused(cluster, node):
    class Paused:
        def __enter__(self):
            cluster.nodes[node].proc.send_signal(signal.SIGSTOP)

        def __exit__(self, *exc):
            cluster.nodes[node].proc.send_signal(signal.SIGCONT)
    return Paused()


def test_the_cleaner_keeps_a_committed_value_whose_newer_value_is_not_committed(cluster):
    topic = "compacted-lagging"
    leader, follower = create_on_two(cluster, topic, {
        "cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01",
        "min.insync.replicas": "1"})
    via = cluster.nodes[leader].bootstrap
    assert produce(via, topic, [{"key": b"K", "value": b"v1"}], "all") == [(0, b"K")]
    with paused(cluster, follower):
        produce(via, topic, [{"key": b"W", "value": b"w"}, {"key": b"K", "value": b"v2"},
                             {"key": b"L", "value": b"x" * 1500}, {"key": b"M", "value": b"m"}], 1)
        _, high = clients.watermarks(via, topic, 0)
        assert high == 1, "the high watermark moved while the follower was paused"
        time.sleep(3)  # several cleaner passes (backoff 200 ms)
        # K=v1 is the only committed record: still readable at offset 0.
        assert first_record(via, topic) == (0, b"K", b"v1")
    wait_until(lambda: isr(cluster, topic, leader) == sorted([leader, follower]), 30, "the follower back in the ISR")


def test_retention_deletes_no_segment_above_the_high_watermark_and_the_follower_rejoins(cluster):
    topic = "retained-lagging"
    leader, follower = create_on_two(cluster, topic, {
        "retention.bytes": "3000", "segment.bytes": "1024", "min.insync.replicas": "1"})
    via = cluster.nodes[leader].bootstrap
    assert produce(via, topic, [{"key": b"K", "value": b"k"}], "all") == [(0, b"K")]
    with paused(cluster, follower):
        produce(via, topic, [{"key": b"W", "value": b"w"}] +
                [{"key": b"big%d" % i, "value": b"x" * 1500} for i in range(6)], 1)
        time.sleep(2)  # several retention checks (every 300 ms)
        low, high = clients.watermarks(via, topic, 0)
        assert (low, high) == (0, 1), f"retention deleted records at or above the high watermark (log start {low}, hw {high})"
        assert first_record(via, topic) == (0, b"K", b"k")
    wait_until(lambda: isr(cluster, topic, leader) == sorted([leader, follower]), 30, "the follower back in the ISR")
    # Once everything is committed, retention applies again.
    wait_until(lambda: clients.watermarks(via, topic, 0)[0] > 0, 30, "retention after the follower caught up")
