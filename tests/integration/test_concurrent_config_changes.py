"""No lost update of IncrementalAlterConfigs: two clients change different keys of one resource
at the same moment, each through a different node that does not lead the metadata quorum. The
controller applies each request's operations to the configs as they stand, so both changes
stay; a broker that applied them to its own image and sent the controller the whole resulting
set would let the later set erase the other client's key. Checked on a three-node cluster
with the raw encoder (kafka_wire), many rounds, for a topic and for the cluster-wide broker
defaults."""
import threading
import time

import pytest

import kafka_wire as kw
from cluster_harness import QuorumCluster

ROUNDS = 100
TIME_BUDGET_S = 150.0  # per resource; a healthy cluster needs a few seconds
TOPIC, BROKER = 2, 4
SET = 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = QuorumCluster(tmp_path_factory.mktemp("concurrent-configs"))
    try:
        yield c.start()
    finally:
        c.tear_down()


def incremental_set(conn, resource_type, name, key, value):
    """IncrementalAlterConfigs v0, one SET: the resource's (error code, message)."""
    resource = (kw.i8(resource_type) + kw.string(name)
                + kw.array([0], lambda _: kw.string(key) + kw.i8(SET) + kw.string(value)))
    r = conn.request(44, 0, kw.array([resource], lambda x: x) + kw.i8(0))
    r.i32()
    return r.array(lambda x: (x.i16(), x.string(), x.i8(), x.string()))[0][:2]


def described(conn, resource_type, name, keys):
    """DescribeConfigs v1 of the keys of one resource: {key: value}."""
    body = kw.array([0], lambda _: kw.i8(resource_type) + kw.string(name) + kw.array(list(keys), kw.string)) + kw.i8(0)
    r = conn.request(32, 1, body)
    r.i32()
    values = {}
    for _ in range(r.i32()):
        error = r.i16()
        assert error == 0, f"DescribeConfigs refused: {error} {r.string()}"
        r.string(), r.i8(), r.string()
        for _ in range(r.i32()):
            key, value = r.string(), r.string()
            r.i8(), r.i8(), r.i8()
            r.array(lambda s: (s.string(), s.string(), s.i8()))
            values[key] = value
    return values


def create_topic(conn, name):
    """CreateTopics v4, one partition, one replica: the topic's error code."""
    topic = kw.string(name) + kw.i32(1) + kw.i16(1) + kw.i32(0) + kw.array([], None)
    r = conn.request(19, 4, kw.array([topic], lambda t: t) + kw.i32(30000) + kw.i8(0))
    r.i32()
    return r.array(lambda x: (x.string(), x.i16(), x.string()))[0][1]


def lost_updates(cluster, resource_type, name, changes):
    """Rounds of two concurrent SETs, `changes` = [(key, value_of_round), (key, value_of_round)],
    each sent through its own non-controller node; then a DescribeConfigs on the controller.
    Returns the number of keys that did not hold their last value, and the rounds run."""
    leader, _ = cluster.wait_for_leader()
    followers = [n for i, n in sorted(cluster.nodes.items()) if i != leader]
    assert len(followers) == 2, "two nodes that do not lead the quorum"
    conns = [kw.Connection(n.port, timeout=30.0) for n in followers]
    reader = kw.Connection(cluster.nodes[leader].port, timeout=30.0)
    keys = [key for key, _ in changes]
    lost = 0
    deadline = time.monotonic() + TIME_BUDGET_S
    try:
        for i in range(ROUNDS):
            assert time.monotonic() < deadline, f"only {i} of {ROUNDS} rounds within {TIME_BUDGET_S}s"
            start = threading.Barrier(2, timeout=30)
            answers = [None, None]

            def send(k):
                key, value_of = changes[k]
                start.wait()
                answers[k] = incremental_set(conns[k], resource_type, name, key, value_of(i))

            threads = [threading.Thread(target=send, args=(k,)) for k in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
                assert not t.is_alive(), "an IncrementalAlterConfigs got no answer within 60s"
            assert answers == [(0, None), (0, None)], f"round {i}: {answers}"
            now = described(reader, resource_type, name, keys)
            lost += sum(1 for key, value_of in changes if now.get(key) != value_of(i))
        return lost
    finally:
        for c in conns + [reader]:
            c.close()


def test_concurrent_changes_of_a_topics_keys_all_stay(cluster):
    leader, _ = cluster.wait_for_leader()
    with kw.Connection(cluster.nodes[leader].port, timeout=30.0) as conn:
        assert create_topic(conn, "concurrent-configs") == 0
    lost = lost_updates(cluster, TOPIC, "concurrent-configs",
                        [("retention.ms", lambda i: str(3_600_000 + i)),
                         ("segment.bytes", lambda i: str(16_777_216 + i))])
    assert lost == 0, f"{lost} of {2 * ROUNDS} topic config changes were lost"


def test_concurrent_changes_of_the_cluster_defaults_all_stay(cluster):
    lost = lost_updates(cluster, BROKER, "",
                        [("log.retention.ms", lambda i: str(7_200_000 + i)),
                         ("log.retention.bytes", lambda i: str(1_073_741_824 + i))])
    assert lost == 0, f"{lost} of {2 * ROUNDS} cluster default changes were lost"
