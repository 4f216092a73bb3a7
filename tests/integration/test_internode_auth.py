"""Nodes authenticate to each other: a three-node cluster whose controller listener and
inter-broker listener are SASL_PLAINTEXT, with an authorizer and allow.everyone.if.no.acl.found
off. The quorum forms, brokers register and replicate, a leader's death is survived; a stranger
on the controller listener is refused (unauthenticated: closed; authenticated but not allowed
CLUSTER_ACTION: CLUSTER_AUTHORIZATION_FAILED or closed), and a node presenting a wrong password
stays out and says why."""
import json
import subprocess
import time

import pytest
from confluent_kafka.admin import NewTopic

import clients
import kafka_wire as kw
from brokerd_harness import brokerctl_binary, brokerd_binary, free_port, port_answers
from cluster_harness import QuorumCluster
from keyed_workload import KeyedWriter, check_read_back
from waiting import eventually

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" '
        'password="{password}" user_broker="broker-secret" user_alice="alice-secret";')
# The clients' PLAINTEXT listener is trusted here (User:ANONYMOUS is a super user) so that the
# test's producers need no ACLs; what is under test is the nodes' own listeners.
OVERRIDES = {
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
    "sasl.enabled.mechanisms": "PLAIN",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:broker;User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": "false",
    "replica.lag.time.max.ms": "2000",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
}
CLUSTER_AUTHORIZATION_FAILED = 31
SASL_AUTHENTICATION_FAILED = 58


def secured_cluster(tmp_path, passwords=None):
    config = tmp_path / "broker.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.username=broker\nsasl.password=broker-secret\n")
    c = QuorumCluster(tmp_path, overrides=OVERRIDES, brokerctl_args=["--command-config", str(config)])
    for i, n in c.nodes.items():
        jaas = JAAS.format(password=(passwords or {}).get(i, "broker-secret"))
        n.overrides.update({
            "listeners": f"PLAINTEXT://127.0.0.1:{n.port},INTERNAL://127.0.0.1:{free_port()},"
                         f"CONTROLLER://127.0.0.1:{c.controller_ports[i]}",
            "listener.name.internal.plain.sasl.jaas.config": jaas,
            "listener.name.controller.plain.sasl.jaas.config": jaas,
        })
    c.command_config = config
    return c


@pytest.fixture
def cluster(tmp_path):
    c = secured_cluster(tmp_path)
    try:
        yield c.start()
    finally:
        c.tear_down()


def partition_view(cluster, topic):
    md = clients.admin(cluster.bootstrap()).list_topics(topic=topic, timeout=5).topics.get(topic)
    if not md or md.error is not None:
        return None
    return {p.id: (p.leader, sorted(p.isrs)) for p in md.partitions.values()}


def test_nodes_authenticate_replicate_and_survive_a_leader(cluster):
    admin = clients.admin(cluster.bootstrap())
    admin.create_topics([NewTopic("guarded", num_partitions=2, replication_factor=3)],
                        operation_timeout=30)["guarded"].result(timeout=30)
    # Every follower fetches from its leader through the authenticated inter-broker listener:
    # the ISR holds all three replicas.
    assert eventually(lambda: (v := partition_view(cluster, "guarded")) and
                      all(isr == [1, 2, 3] for _, isr in v.values()), timeout=30), partition_view(cluster, "guarded")
    view = partition_view(cluster, "guarded")
    writer = KeyedWriter(cluster.bootstrap(), "guarded").start()
    time.sleep(2)
    victim = view[0][0]
    cluster.nodes[victim].kill()
    # The controller (authenticated heartbeats) fences the dead node and moves its leaderships.
    assert eventually(lambda: (v := partition_view(cluster, "guarded")) and
                      all(leader not in (-1, victim) for leader, _ in v.values()), timeout=30)
    time.sleep(2)
    writer.stop()
    acked, read, lost, dups, reorders = check_read_back(cluster.bootstrap(), writer, 2)
    print(f"SASL between nodes, leader {victim} killed: acknowledged {acked}, read back {read}, lost {len(lost)}")
    assert acked > 0 and not lost and dups == 0 and reorders == 0
    for i, n in cluster.nodes.items():
        assert "authentication to node" not in n.log_text(), f"node {i} failed to authenticate"


def broker_registration_v0(conn, broker_id):
    body = (kw.i32(broker_id) + kw.compact_string("not-this-cluster") + b"\x11" * 16 + kw.uvarint(1)
            + kw.uvarint(1) + kw.compact_string(None) + b"\x00")
    r = kw.flexible_request(conn, 62, 0, body)
    r.i32()  # throttle
    return r.i16()


def describe_quorum_v0(conn):
    r = kw.flexible_request(conn, 55, 0, kw.uvarint(1) + b"\x00")  # no topics
    return r.i16()


def test_the_controller_listener_refuses_strangers(cluster):
    leader, _ = cluster.wait_for_leader()
    port = cluster.controller_ports[leader]
    # Not authenticated: ApiVersions and SASL only; anything else closes the connection.
    with kw.Connection(port) as c:
        _, versions = kw.api_versions(c)
        assert versions[17] == (1, 1) and versions[36] == (0, 2)
        c.send_frame(c.header(55, 0) + b"\x00" + kw.uvarint(1) + b"\x00")
        assert c.closed_by_peer()
    # A wrong password: SASL_AUTHENTICATION_FAILED, closed.
    with kw.Connection(port) as c:
        assert kw.sasl_handshake(c, "PLAIN")[0] == 0
        assert kw.sasl_authenticate(c, b"\0broker\0guess")[0] == SASL_AUTHENTICATION_FAILED
        assert c.closed_by_peer()
    # Authenticated, but alice may not act as a node: refused, and a forwarded change
    # (CreateAcls) closes the connection unread.
    with kw.Connection(port) as c:
        assert kw.sasl_handshake(c, "PLAIN")[0] == 0
        assert kw.sasl_authenticate(c, b"\0alice\0alice-secret")[0] == 0
        assert describe_quorum_v0(c) == CLUSTER_AUTHORIZATION_FAILED
        assert broker_registration_v0(c, 9) == CLUSTER_AUTHORIZATION_FAILED
        c.send_frame(c.header(30, 2) + b"\x00" + b"\xff" * 8)
        assert c.closed_by_peer()
    assert "refusing User:alice" in cluster.nodes[leader].log_text()
    # The nodes' own principal is served, through brokerctl as well.
    with kw.Connection(port) as c:
        assert kw.sasl_handshake(c, "PLAIN")[0] == 0
        assert kw.sasl_authenticate(c, b"\0broker\0broker-secret")[0] == 0
        assert describe_quorum_v0(c) == 0
    q = cluster.quorum(leader)
    assert q and q["leader"] == leader
    # Without credentials brokerctl is refused with a clear error.
    proc = subprocess.run([brokerctl_binary(), "cluster", "quorum", "--bootstrap-controller", cluster.controller(leader),
                           "--timeout-ms", "3000"], capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert all(n.running() for n in cluster.nodes.values())


def test_a_node_with_a_wrong_password_stays_out_and_says_why(tmp_path):
    c = secured_cluster(tmp_path, passwords={3: "not-the-secret"})
    try:
        for n in c.nodes.values():
            n.start(wait=False)
        for i in (1, 2):
            c.nodes[i].wait_until_serving(c.START_TIMEOUT_S)
        assert eventually(lambda: "authentication to node" in c.nodes[3].log_text(), timeout=30)
        text = c.nodes[3].log_text()
        assert "SASL_AUTHENTICATION_FAILED" in text and "Invalid username or password" in text, text[-2000:]
        # Node 3 never joined: the others list two brokers, and it does not serve.
        with kw.Connection(c.nodes[1].port) as conn:
            assert kw.broker_ids(conn) == [1, 2]
        assert c.nodes[3].running() and not port_answers(c.nodes[3].port)
        assert any("failed for user broker" in c.nodes[i].log_text() for i in (1, 2))
    finally:
        c.tear_down()


@pytest.mark.parametrize("overrides,key", [
    # A SASL controller listener whose JAAS entry says what it accepts but not what this node
    # presents to the others.
    ({"listener.name.controller.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required user_broker="s";'},
     "listener.name.controller.plain.sasl.jaas.config"),
    ({"security.inter.broker.protocol": "SASL_PLAINTEXT"}, "security.inter.broker.protocol"),
])
def test_missing_node_credentials_stop_the_start_with_one_line(tmp_path, overrides, key):
    port, cport = free_port(), free_port()
    settings = {
        "node.id": "1", "log.dirs": str(tmp_path / "data"),
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "controller.quorum.voters": f"1@127.0.0.1:{cport},2@127.0.0.1:{free_port()},3@127.0.0.1:{free_port()}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
        "listener.name.controller.plain.sasl.jaas.config": JAAS.format(password="broker-secret"),
    }
    settings.update(overrides)
    cmd = [brokerd_binary()]
    for k, v in settings.items():
        cmd += ["--override", f"{k}={v}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and key in lines[0], lines
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())
