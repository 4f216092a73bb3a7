"""Topics across a three-node, three-rack cluster of real brokerd processes: topics created
through any node (forwarded to the controller) are visible the same way on every node, with
replicas on distinct racks and leaders spread over the brokers; clients are routed to each
partition's leader and a node that does not lead a partition refuses it
(NOT_LEADER_OR_FOLLOWER); consumer groups are coordinated by the leader of their offsets
partition, wherever it is; topics are deleted and reconfigured through any node."""
import time

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import ConfigResource, NewPartitions, NewTopic

import clients
import kafka_wire as kw
from cluster_harness import QuorumCluster
from waiting import eventually

RACKS = {1: "zone-a", 2: "zone-b", 3: "zone-c"}
NOT_LEADER_OR_FOLLOWER = 6


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = QuorumCluster(tmp_path_factory.mktemp("cluster"), per_node={i: {"broker.rack": r} for i, r in RACKS.items()})
    try:
        yield c.start()
    finally:
        c.tear_down()


def bootstrap(cluster, node_id):
    return cluster.nodes[node_id].bootstrap



def create(cluster, via, name, partitions, rf, config=None, timeout=30.0):
    a = clients.admin(bootstrap(cluster, via))
    f = a.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=rf, config=config or {})],
                        operation_timeout=timeout, request_timeout=timeout)
    f[name].result(timeout=timeout)


def describe(cluster, node_id, name, timeout=15.0):
    """The topic as one node's Metadata answer describes it, once every partition has a leader."""
    a = clients.admin(bootstrap(cluster, node_id))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        t = a.list_topics(topic=name, timeout=5).topics.get(name)
        if t is not None and t.error is None and t.partitions and all(p.leader >= 0 for p in t.partitions.values()):
            return {p.id: (p.leader, tuple(p.replicas), tuple(p.isrs)) for p in t.partitions.values()}
        time.sleep(0.1)
    raise TimeoutError(f"node {node_id} does not describe {name}")



def test_every_node_lists_every_broker_with_its_rack(cluster):
    for i in cluster.nodes:
        md = clients.admin(bootstrap(cluster, i)).list_topics(timeout=10)
        assert sorted(md.brokers) == [1, 2, 3]
        ports = {b.id: b.port for b in md.brokers.values()}
        assert ports == {j: n.port for j, n in cluster.nodes.items()}
        # Kafka's KRaft brokers name a live broker (here: the one answering), which forwards.
        assert md.controller_id == i


def test_rf1_topic_created_through_any_node_spreads_leaders_and_serves_everywhere(cluster):
    for via in (1, 2, 3):
        name = f"rf1-via-{via}"
        create(cluster, via, name, partitions=6, rf=1)
        views = [describe(cluster, i, name) for i in cluster.nodes]
        assert views[0] == views[1] == views[2], "every node serves the same metadata"
        leaders = [leader for leader, _, _ in views[0].values()]
        assert sorted(set(leaders)) == [1, 2, 3], f"leaders spread over all brokers: {views[0]}"
        assert all(replicas == (leader,) for leader, replicas, _ in views[0].values())
    # A client bootstrapped through one node reaches every leader.
    name = "rf1-via-2"
    p = clients.producer(bootstrap(cluster, 1))
    items = [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % 6} for i in range(600)]
    reports = clients.produce_and_confirm(p, name, items)
    assert len(reports) == 600
    got = clients.read_all(bootstrap(cluster, 3), name, 6)
    assert sum(len(v) for v in got.values()) == 600
    for part, msgs in got.items():
        assert [m.value() for m in msgs] == [f"v{i}".encode() for i in range(part, 600, 6)]


def test_rf3_topic_puts_replicas_on_three_racks_and_leaders_on_three_brokers(cluster):
    create(cluster, 3, "rf3", partitions=6, rf=3)
    view = describe(cluster, 1, "rf3")
    assert describe(cluster, 2, "rf3") == view
    for leader, replicas, isr in view.values():
        assert sorted(replicas) == [1, 2, 3]
        assert leader == replicas[0]
        assert sorted(isr) == [1, 2, 3], "every replica of a new partition is in sync"
    assert sorted({leader for leader, _, _ in view.values()}) == [1, 2, 3]
    # Routed to the leaders; acks=all answers once every in-sync replica has the batch.
    p = clients.producer(cluster.bootstrap(), acks="all")
    clients.produce_and_confirm(p, "rf3", [{"value": b"x" * 100, "partition": i % 6} for i in range(60)])
    got = clients.read_all(bootstrap(cluster, 2), "rf3", 6)
    assert sum(len(v) for v in got.values()) == 60
    # The followers hold the leader's bytes: every node's copy of every partition is the same.
    def copies(part):
        return {i: b"".join(f.read_bytes() for f in n.segment_files("rf3", part)) for i, n in cluster.nodes.items()}
    for part in range(6):
        assert eventually(lambda: len(set(copies(part).values())) == 1), f"partition {part} differs between nodes"
        assert len(copies(part)[1]) > 0
    assert describe(cluster, 3, "rf3") == view, "the ISR stays whole while the followers keep up"


def test_a_node_that_does_not_lead_a_partition_refuses_it(cluster):
    create(cluster, 1, "routing", partitions=3, rf=1)
    view = describe(cluster, 1, "routing")
    for i in cluster.nodes:
        assert describe(cluster, i, "routing") == view  # every node knows the topic by now
    batch = kw.record_batch([(b"k", b"v")])
    for part, (leader, _, _) in view.items():
        other = next(i for i in cluster.nodes if i != leader)
        with kw.Connection(cluster.nodes[other].port) as conn:
            r = kw.produce(conn, "routing", part, batch, acks=1)
            assert r["error"] == NOT_LEADER_OR_FOLLOWER, r
            # acks=all too, at once: a refused partition has nothing to wait for.
            started = time.monotonic()
            r = kw.produce(conn, "routing", part, batch, acks=-1, timeout_ms=30000)
            assert r["error"] == NOT_LEADER_OR_FOLLOWER, r
            assert time.monotonic() - started < 10, "the refusal waited for the request's timeout"
            f = kw.fetch(conn, "routing", part, 0, max_wait_ms=10)
            assert f["error"] == NOT_LEADER_OR_FOLLOWER, f
        with kw.Connection(cluster.nodes[leader].port) as conn:
            assert kw.produce(conn, "routing", part, batch, acks=1)["error"] == 0


def test_consumer_groups_are_coordinated_by_their_offsets_partition_leader(cluster):
    create(cluster, 2, "grouped", partitions=3, rf=1)
    p = clients.producer(cluster.bootstrap())
    clients.produce_and_confirm(p, "grouped", [{"value": f"{i}".encode(), "partition": i % 3} for i in range(90)])
    seen = set()
    # Several groups land on offsets partitions led by different nodes.
    for g in range(6):
        group = f"group-{g}"
        c = Consumer({"bootstrap.servers": bootstrap(cluster, 1 + g % 3), "group.id": group,
                      "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000})
        try:
            c.subscribe(["grouped"])
            got = []
            deadline = time.monotonic() + 30
            while len(got) < 60 and time.monotonic() < deadline:
                m = c.poll(0.2)
                if m is not None and not m.error():
                    got.append(m)
            assert len(got) >= 60, f"{group}: read {len(got)}"
            c.commit(asynchronous=False)
            committed = c.committed([TopicPartition("grouped", i) for i in range(3)], timeout=10)
            assert sum(max(tp.offset, 0) for tp in committed) == len(got)
        finally:
            c.close()
        # A new member of the group, through another node, resumes where the group was.
        c = Consumer({"bootstrap.servers": bootstrap(cluster, 1 + (g + 1) % 3), "group.id": group,
                      "auto.offset.reset": "earliest", "enable.auto.commit": False})
        try:
            committed = c.committed([TopicPartition("grouped", i) for i in range(3)], timeout=10)
            assert sum(max(tp.offset, 0) for tp in committed) == len(got)
        finally:
            c.close()
        seen.add(group)
    md = clients.admin(bootstrap(cluster, 1)).list_topics(topic="__consumer_offsets", timeout=10)
    leaders = {p.leader for p in md.topics["__consumer_offsets"].partitions.values()}
    assert leaders == {1, 2, 3}, "offsets partitions are spread over every broker"
    # Kafka's default: committed offsets live on three brokers, one per rack.
    replicas = {tuple(sorted(p.replicas)) for p in md.topics["__consumer_offsets"].partitions.values()}
    assert replicas == {(1, 2, 3)}, "__consumer_offsets has three replicas by default"


def test_partitions_configs_and_deletion_through_non_controllers(cluster):
    controller, _ = cluster.wait_for_leader()
    other = next(i for i in cluster.nodes if i != controller)
    create(cluster, other, "changing", partitions=2, rf=2)
    a = clients.admin(bootstrap(cluster, other))
    a.create_partitions([NewPartitions("changing", 5)])["changing"].result(timeout=30)
    view = describe(cluster, controller, "changing")
    assert len(view) == 5 and all(len(r) == 2 and len(set(r)) == 2 for _, r, _ in view.values())
    res = ConfigResource(ConfigResource.Type.TOPIC, "changing", set_config={"retention.ms": "3600000"})
    a.alter_configs([res])[res].result(timeout=30)
    def retention(i):
        admin = clients.admin(bootstrap(cluster, i))  # must outlive the future
        got = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "changing")])
        return list(got.values())[0].result(timeout=10)["retention.ms"].value

    for i in cluster.nodes:
        assert eventually(lambda: retention(i) == "3600000"), f"node {i}"
    a.delete_topics(["changing"], operation_timeout=30)["changing"].result(timeout=30)
    for i in cluster.nodes:
        assert eventually(lambda: "changing" not in clients.admin(bootstrap(cluster, i)).list_topics(timeout=10).topics)
    # Too few brokers for the replication factor.
    with pytest.raises(Exception, match="INVALID_REPLICATION_FACTOR|larger than available brokers"):
        create(cluster, other, "too-many", partitions=1, rf=4)


def test_a_dead_brokers_partitions_go_offline_and_come_back_with_their_data(cluster):
    # Runs last in this module: it restarts a node.
    create(cluster, 1, "offline", partitions=3, rf=1)
    view = describe(cluster, 1, "offline")
    for i in cluster.nodes:
        describe(cluster, i, "offline")
    victim = next(i for i in (1, 2, 3) if i != cluster.wait_for_leader()[0])
    mine = [p for p, (leader, _, _) in view.items() if leader == victim]
    assert mine, view
    p = clients.producer(cluster.bootstrap())
    clients.produce_and_confirm(p, "offline", [{"value": f"{i}".encode(), "partition": i % 3} for i in range(30)])
    cluster.nodes[victim].kill()
    observer = next(i for i in cluster.nodes if i != victim)

    def leaders():
        t = clients.admin(bootstrap(cluster, observer)).list_topics(topic="offline", timeout=10).topics["offline"]
        return {q.id: q.leader for q in t.partitions.values()}

    # Fenced after the session timeout: its partitions have no leader (their only in-sync
    # replica is gone), the others keep theirs.
    assert eventually(lambda: all(leaders()[q] == -1 for q in mine), timeout=15), leaders()
    assert all(leaders()[q] == view[q][0] for q in view if q not in mine)
    cluster.restart(victim)
    assert eventually(lambda: all(leaders()[q] == victim for q in mine), timeout=30), leaders()
    got = clients.read_all(cluster.bootstrap(), "offline", 3)
    assert sorted(int(m.value()) for msgs in got.values() for m in msgs) == list(range(30))
