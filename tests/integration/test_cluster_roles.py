"""Three dedicated controllers and two broker-only nodes, each a real brokerd process: the
controllers hold the metadata quorum and never appear as brokers; the brokers register,
serve topics placed on both of them and forward admin requests to the active controller;
killing the active controller elects another and admin requests work again; a killed
broker is fenced and drops out of Metadata, and rejoins when restarted."""
import json
import subprocess
import time

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import NewTopic

import clients
from brokerd_harness import brokerctl_binary
from cluster_harness import SplitCluster
from waiting import wait_until


@pytest.fixture
def cluster(tmp_path):
    # Two brokers: __consumer_offsets cannot have Kafka's default of three replicas.
    c = SplitCluster(tmp_path, controllers=3, brokers=2, overrides={"offsets.topic.replication.factor": "2"})
    try:
        yield c.start()
    finally:
        c.tear_down()


def brokers_seen(node):
    md = clients.admin(node.bootstrap).list_topics(timeout=10)
    return sorted(md.brokers), md.controller_id


def create(bootstrap, name, partitions, rf, timeout=30.0):
    a = clients.admin(bootstrap)
    f = a.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=rf)],
                        operation_timeout=timeout, request_timeout=timeout)
    f[name].result(timeout=timeout)


def test_controllers_are_not_brokers_and_brokers_serve_topics(cluster):
    b4, b5 = cluster.nodes[4], cluster.nodes[5]
    for b in (b4, b5):
        ids, controller = brokers_seen(b)
        assert ids == [4, 5]
        # Clients send admin requests to the controller Metadata names: a broker (which
        # forwards them), never a dedicated controller they cannot reach.
        assert controller in (4, 5)
    create(b5.bootstrap, "split", partitions=4, rf=2)
    clients.wait_for_topic(b4.bootstrap, "split", 4)
    md = clients.admin(b4.bootstrap).list_topics(topic="split", timeout=10).topics["split"]
    assert all(sorted(p.replicas) == [4, 5] for p in md.partitions.values())
    assert {p.leader for p in md.partitions.values()} == {4, 5}
    p = clients.producer(f"{b4.bootstrap},{b5.bootstrap}", acks="1")
    clients.produce_and_confirm(p, "split", [{"value": f"{i}".encode(), "partition": i % 4} for i in range(80)])
    c = Consumer({"bootstrap.servers": b4.bootstrap, "group.id": "split-group", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    try:
        c.subscribe(["split"])
        got = 0
        deadline = time.monotonic() + 30
        while got < 80 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got += 1
        assert got == 80
        c.commit(asynchronous=False)
        committed = c.committed([TopicPartition("split", i) for i in range(4)], timeout=10)
        assert sum(tp.offset for tp in committed) == 80
    finally:
        c.close()


def test_brokers_answer_describe_quorum_for_the_controllers(cluster):
    # A tool may ask any broker: it forwards DescribeQuorum to the quorum's leader.
    leader, epoch = cluster.wait_for_leader()
    for b in (cluster.nodes[4], cluster.nodes[5]):
        proc = subprocess.run([brokerctl_binary(), "cluster", "quorum", "--bootstrap-controller", b.bootstrap,
                               "--output", "json"], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        q = json.loads(proc.stdout)
        assert q["leader"] == leader and q["epoch"] == epoch
        assert sorted(v["id"] for v in q["voters"]) == [1, 2, 3]
        assert sorted(o["id"] for o in q["observers"]) == [4, 5]


def test_killing_the_active_controller_keeps_admin_requests_working(cluster):
    b4 = cluster.nodes[4]
    create(b4.bootstrap, "before", partitions=2, rf=2)
    leader, _ = cluster.wait_for_leader()
    cluster.nodes[leader].kill()
    t0 = time.monotonic()
    create(b4.bootstrap, "after", partitions=2, rf=2, timeout=30)
    took = time.monotonic() - t0
    new_leader, _ = cluster.wait_for_leader(excluding=(leader,))
    assert new_leader != leader
    assert took < 15, f"a topic creation took {took:.1f}s across a controller failover"
    for b in (cluster.nodes[4], cluster.nodes[5]):
        # The other broker follows the new leader within its fetch timeout.
        wait_until(lambda: {"before", "after"} <= set(clients.admin(b.bootstrap).list_topics(timeout=10).topics), 15,
                 "both topics on every broker")
    cluster.restart(leader)
    q = cluster.quorum(new_leader)
    assert sorted(v["id"] for v in q["voters"]) == [1, 2, 3]


def test_a_killed_broker_is_fenced_and_rejoins(cluster):
    b4, b5 = cluster.nodes[4], cluster.nodes[5]
    b5.kill()
    t0 = time.monotonic()
    wait_until(lambda: brokers_seen(b4)[0] == [4], 15, "broker 5 fenced")
    fenced_after = time.monotonic() - t0
    assert fenced_after < 10, fenced_after
    # Only broker 4 is left: a topic of RF 2 cannot be placed, one of RF 1 can.
    with pytest.raises(Exception, match="INVALID_REPLICATION_FACTOR|larger than available brokers"):
        create(b4.bootstrap, "two-replicas", partitions=1, rf=2)
    create(b4.bootstrap, "one-replica", partitions=2, rf=1)
    b5.start(timeout=60)
    wait_until(lambda: brokers_seen(b4)[0] == [4, 5], 30, "broker 5 back")
