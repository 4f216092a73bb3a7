"""Partition reassignment on three real brokerd processes, through brokerctl: a partition's
replicas move from one pair of brokers to another while an idempotent acks=all producer keeps
writing. The new replica copies the log, the old one leaves (and deletes its copy), the
leader hands over when it is the one leaving, and every acknowledged record is read back
once, in order, from the new replicas alone."""
import json
import signal
import subprocess
import time

import pytest

import clients
from brokerd_harness import brokerctl_binary
from cluster_harness import QuorumCluster
from keyed_workload import KeyedWriter, check_read_back
from waiting import eventually

OVERRIDES = {"replica.lag.time.max.ms": "2000", "offsets.topic.replication.factor": "3"}


@pytest.fixture
def cluster(tmp_path):
    c = QuorumCluster(tmp_path, overrides=OVERRIDES,
                      per_node={i: {"broker.rack": f"zone-{i}"} for i in (1, 2, 3)})
    try:
        yield c.start()
    finally:
        c.tear_down()



def partition_view(cluster, topic, partition=0):
    md = clients.admin(cluster.bootstrap()).list_topics(topic=topic, timeout=5).topics[topic]
    p = md.partitions[partition]
    return p.leader, list(p.replicas), sorted(p.isrs)



def brokerctl(cluster, *args, via=None, timeout=120):
    """brokerctl with `via` (default: every running node) as its bootstrap servers."""
    return subprocess.run([brokerctl_binary(), "--bootstrap-server", via or cluster.bootstrap(), *args],
                          capture_output=True, text=True, timeout=timeout)


def test_a_partition_moves_to_another_broker_while_written(cluster, tmp_path):
    from confluent_kafka.admin import NewTopic
    a = clients.admin(cluster.bootstrap())
    a.create_topics([NewTopic("moving", num_partitions=1, replica_assignment=[[1, 2]])],
                    operation_timeout=30)["moving"].result(timeout=30)
    assert eventually(lambda: partition_view(cluster, "moving") == (1, [1, 2], [1, 2]), 30)
    writer = KeyedWriter(cluster.bootstrap(), "moving").start()
    time.sleep(2)

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [3, 2]}]}))
    proc = brokerctl(cluster, "partitions", "reassign", "--plan", str(plan), "--wait-ms", "60000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "accepted" in proc.stdout and "complete" in proc.stdout, proc.stdout

    # Node 1, the leader, left: node 3 (first in the new list and in sync) leads.
    assert eventually(lambda: partition_view(cluster, "moving") == (3, [3, 2], [2, 3]), 30), \
        partition_view(cluster, "moving")
    listed = brokerctl(cluster, "partitions", "reassignments")
    assert listed.returncode == 0 and "No reassignment is in progress" in listed.stdout, listed.stdout
    assert eventually(lambda: not cluster.nodes[1].partition_dir("moving", 0).exists(), 30), \
        "the replica that left deletes its copy"
    assert cluster.nodes[3].partition_dir("moving", 0).exists()
    time.sleep(1)
    writer.stop()
    acked_before = len(writer.acked)

    # Everything acknowledged is on node 3, which alone stays in sync once 2 is gone.
    cluster.nodes[2].kill()
    assert eventually(lambda: partition_view(cluster, "moving")[0] == 3, 30)
    acked, read, lost, dups, reorders = check_read_back(cluster.bootstrap(), writer, 1)
    print(f"reassignment under writes: acknowledged {acked}, read back {read}, lost {len(lost)}, "
          f"duplicates {dups}, reordered {reorders}")
    assert acked == acked_before and acked > 100
    assert not lost and dups == 0 and reorders == 0


def test_bad_plans_are_refused_and_a_cancel_goes_back(cluster, tmp_path):
    from confluent_kafka.admin import NewTopic
    # A broker that is not the controller will be paused (a forwarded request would wait for
    # a paused controller); the partition starts on the other two.
    controller = cluster.wait_for_leader()[0]
    paused = next(i for i in (1, 2, 3) if i != controller)
    other = next(i for i in (1, 2, 3) if i not in (controller, paused))
    a = clients.admin(cluster.bootstrap())
    a.create_topics([NewTopic("planned", num_partitions=2, replica_assignment=[[controller, other], [other, paused]])],
                    operation_timeout=30)["planned"].result(timeout=30)
    plan = tmp_path / "bad.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "planned", "partition": 0, "replicas": [controller, 9]},
        {"topic": "planned", "partition": 1, "replicas": [paused, paused]},
        {"topic": "planned", "partition": 7, "replicas": [1]}]}))
    proc = brokerctl(cluster, "partitions", "reassign", "--plan", str(plan), "--output", "json")
    assert proc.returncode != 0
    errors = {(r["partition"], r["error"]) for r in json.loads(proc.stdout)}
    assert errors == {(0, "INVALID_REPLICA_ASSIGNMENT"), (1, "INVALID_REPLICA_ASSIGNMENT"),
                      (7, "UNKNOWN_TOPIC_OR_PARTITION")}, proc.stdout
    proc = brokerctl(cluster, "partitions", "reassign", "--plan", str(plan), "--cancel", "--output", "json")
    assert proc.returncode != 0
    assert {r["error"] for r in json.loads(proc.stdout)} >= {"NO_REASSIGNMENT_IN_PROGRESS"}, proc.stdout
    assert partition_view(cluster, "planned")[1] == [controller, other]

    # A reassignment to a paused broker cannot complete; cancelling it goes back.
    cluster.nodes[paused].proc.send_signal(signal.SIGSTOP)
    try:
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": "planned", "partition": 0, "replicas": [paused, other]}]}))
        up = ",".join(n.bootstrap for i, n in cluster.nodes.items() if i != paused)
        proc = brokerctl(cluster, "partitions", "reassign", "--plan", str(plan), "--no-wait", via=up)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        listed = brokerctl(cluster, "partitions", "reassignments", "--output", "json", via=up)
        assert json.loads(listed.stdout) == [{"topic": "planned", "partition": 0, "replicas": [paused, other, controller],
                                               "adding": [paused], "removing": [controller]}], listed.stdout
        proc = brokerctl(cluster, "partitions", "reassign", "--plan", str(plan), "--cancel", via=up)
        assert proc.returncode == 0 and "cancelled" in proc.stdout, proc.stdout + proc.stderr
        # The replicas before it (in the order that leaves them, as Kafka's revert does).
        assert eventually(lambda: sorted(partition_view(cluster, "planned")[1]) == sorted([controller, other]), 10)
    finally:
        cluster.nodes[paused].proc.send_signal(signal.SIGCONT)


def reassign_and_time(cluster, tmp_path, replicas):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "copied", "partition": 0, "replicas": replicas}]}))
    started = time.monotonic()
    proc = brokerctl(cluster, "partitions", "reassign", "--plan", str(plan), "--wait-ms", "60000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return time.monotonic() - started


def test_a_throttled_copy_goes_at_the_throttled_rate(cluster, tmp_path):
    """1 MB copied to a new replica at 200 KB/s takes about 4 s (after a second's burst); the same
    copy without the topic naming the replicas goes at full speed. The rates are dynamic broker
    configs, set on the running cluster as kafka-reassign-partitions --throttle does: the
    leader's on broker 1 itself, the followers' as the cluster-wide default."""
    from confluent_kafka.admin import ConfigResource, NewTopic
    a = clients.admin(cluster.bootstrap())
    leader_rate = ConfigResource("broker", "1", set_config={"leader.replication.throttled.rate": "200000"})
    a.alter_configs([leader_rate])[leader_rate].result(timeout=30)
    proc = brokerctl(cluster, "configs", "alter", "--entity-type", "brokers", "--entity-default",
                     "--set", "follower.replication.throttled.rate=200000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    a.create_topics([NewTopic("copied", num_partitions=1, replica_assignment=[[1]])],
                    operation_timeout=30)["copied"].result(timeout=30)
    p = clients.producer(cluster.bootstrap(), linger_ms=20)
    clients.produce_and_confirm(p, "copied", [{"value": b"%05d" % i + b"x" * 1000} for i in range(1000)])
    throttle = ConfigResource("topic", "copied", set_config={"leader.replication.throttled.replicas": "0:1",
                                                            "follower.replication.throttled.replicas": "0:2"})
    a.alter_configs([throttle])[throttle].result(timeout=30)
    time.sleep(1)  # every broker has the topic's new settings
    throttled = reassign_and_time(cluster, tmp_path, [1, 2])
    assert partition_view(cluster, "copied")[1:] == ([1, 2], [1, 2])
    plain = ConfigResource("topic", "copied", set_config={})
    a.alter_configs([plain])[plain].result(timeout=30)
    time.sleep(1)
    unthrottled = reassign_and_time(cluster, tmp_path, [2, 3])
    print(f"1 MB copied to a new replica: {throttled:.1f} s throttled at 200 KB/s, {unthrottled:.1f} s without")
    assert throttled >= 3.0, throttled
    assert unthrottled < throttled
    assert eventually(lambda: partition_view(cluster, "copied")[1:] == ([2, 3], [2, 3]), 10)
