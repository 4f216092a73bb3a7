"""Leadership back on the preferred replicas. After a node restarts, the partitions whose first
replica it is are led elsewhere until an operator asks for preferred elections (ElectLeaders:
`brokerctl partitions elect-leaders`, sent to a node that is not the controller, which forwards
it) or the controller's automatic balance gives them back."""
import json
import subprocess
import time

import pytest

import clients
from brokerd_harness import brokerctl_binary
from cluster_harness import QuorumCluster

TOPIC = "elect"
PARTITIONS = 3
BASE = {"min.insync.replicas": "2", "replica.lag.time.max.ms": "2000", "offsets.topic.replication.factor": "3"}


def start_cluster(tmp_path, **overrides):
    c = QuorumCluster(tmp_path, overrides={**BASE, **overrides})
    try:
        c.start()
    except Exception:
        c.tear_down()
        raise
    return c



def partitions(cluster):
    """{partition: (leader, replicas, isr)} as the cluster answers Metadata."""
    md = clients.admin(cluster.bootstrap()).list_topics(topic=TOPIC, timeout=5).topics[TOPIC]
    return {p.id: (p.leader, list(p.replicas), sorted(p.isrs)) for p in md.partitions.values()}


def wait_until(what, check, timeout=30.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as e:  # a node restarting: ask again
            last = e
        time.sleep(0.1)
    raise TimeoutError(f"{what} within {timeout}s (last: {last})")


def create_topic(cluster):
    from confluent_kafka.admin import NewTopic
    a = clients.admin(cluster.bootstrap())  # must outlive the future
    a.create_topics([NewTopic(TOPIC, num_partitions=PARTITIONS, replication_factor=3)],
                    operation_timeout=30)[TOPIC].result(30)
    return wait_until("leaders", lambda: (lambda ps: ps if len(ps) == PARTITIONS and all(
        leader >= 0 and len(isr) == 3 for leader, _, isr in ps.values()) else None)(partitions(cluster)))


def restart_away(cluster, node):
    """Stops `node` (its leaderships move), starts it again and waits until it is back in
    every ISR; returns the partitions it prefers."""
    preferred = [p for p, (_, replicas, _) in partitions(cluster).items() if replicas[0] == node]
    assert preferred, "placement gives every node a partition to lead"
    cluster.nodes[node].stop()
    wait_until(f"node {node}'s partitions led elsewhere",
               lambda: all(partitions(cluster)[p][0] not in (node, -1) for p in preferred))
    # Stopped cleanly, it stays registered, fenced (DescribeCluster v2 lists it so).
    rc, out, err = brokerctl(cluster.bootstrap().split(",")[0], "cluster", "describe")
    assert rc == 0, err
    described = json.loads(out)
    assert {b["id"]: b["fenced"] for b in described["brokers"]}[node] is True
    # Every partition with a replica on the stopped node is under-replicated, none offline.
    assert described["offline_partitions"] == []
    assert described["under_replicated_partitions"] and all(
        node in p["replicas"] and node not in p["isr"] for p in described["under_replicated_partitions"]), described
    cluster.restart(node)
    wait_until(f"node {node} back in every ISR",
               lambda: all(node in isr for _, _, isr in partitions(cluster).values()))
    return preferred


def brokerctl(bootstrap, *args):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", bootstrap, "--output", "json", *args],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def test_elect_leaders_gives_partitions_back_to_their_preferred_replicas(tmp_path):
    cluster = start_cluster(tmp_path, **{"auto.leader.rebalance.enable": "false"})
    try:
        create_topic(cluster)
        controller, _ = cluster.wait_for_leader()
        node = next(i for i in cluster.nodes if i != controller)  # a broker, not the controller
        preferred = restart_away(cluster, node)
        time.sleep(1.0)
        assert all(partitions(cluster)[p][0] != node for p in preferred), "no automatic balance was asked for"

        # Asked of a node that is not the controller: it forwards the request.
        other = next(i for i in cluster.nodes if i not in (controller,))
        rc, out, err = brokerctl(cluster.nodes[other].bootstrap, "partitions", "elect-leaders", "--topic", TOPIC)
        assert rc == 0, err
        results = {r["partition"]: r["error"] for r in json.loads(out)}
        assert results == {p: (None if p in preferred else "ELECTION_NOT_NEEDED") for p in range(PARTITIONS)}
        wait_until("the preferred replicas leading", lambda: all(
            leader == replicas[0] for leader, replicas, _ in partitions(cluster).values()))

        # The new leaders take writes.
        p = clients.producer(cluster.bootstrap(), enable_idempotence=True)
        delivered = []
        for part in preferred:
            p.produce(TOPIC, value=b"after", partition=part, on_delivery=lambda e, m: delivered.append(e))
        p.flush(30)
        assert delivered == [None] * len(preferred)

        # Nothing left to elect; every partition of every topic answers only what changed.
        rc, out, err = brokerctl(cluster.nodes[controller].bootstrap, "partitions", "elect-leaders",
                                 "--all-topic-partitions")
        assert rc == 0, err
        assert json.loads(out) == []
        # A partition that does not exist fails alone, and the command says so.
        rc, out, err = brokerctl(cluster.nodes[controller].bootstrap, "partitions", "elect-leaders", "--topic", TOPIC,
                                 "--partition", "0", "--partition", "9")
        assert rc != 0
        assert {r["partition"]: r["error"] for r in json.loads(out)} == {0: "ELECTION_NOT_NEEDED",
                                                                         9: "UNKNOWN_TOPIC_OR_PARTITION"}
    finally:
        cluster.tear_down()


def test_the_controller_balances_leaders_back_on_its_own(tmp_path):
    cluster = start_cluster(tmp_path, **{"leader.imbalance.check.interval.seconds": "1"})
    try:
        create_topic(cluster)
        controller, _ = cluster.wait_for_leader()
        node = next(i for i in cluster.nodes if i != controller)
        preferred = restart_away(cluster, node)
        wait_until("the restarted node leading its preferred partitions again",
                   lambda: all(partitions(cluster)[p][0] == node for p in preferred), timeout=20.0)
    finally:
        cluster.tear_down()


@pytest.mark.parametrize("args,message", [
    ((), "give --topic"),
    (("--topic", TOPIC, "--all-topic-partitions"), "give --topic"),
    (("--all-topic-partitions", "--type", "dirty"), "--type is preferred or unclean"),
    (("--all-topic-partitions", "--partition", "1"), "--partition needs --topic"),
])
def test_elect_leaders_refuses_unclear_requests_before_connecting(args, message):
    rc, _, err = brokerctl("127.0.0.1:1", "partitions", "elect-leaders", *args)
    assert rc != 0 and message in err, err
