"""ACLs with the StandardAuthorizer: principals from SASL/PLAIN, bindings made with brokerctl
(CreateAcls) and checked on produce, fetch, groups, metadata and admin requests; literal,
prefixed and wildcard resources; DENY over ALLOW; bindings kept across a restart."""
import json
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from brokerd_harness import brokerctl_binary, free_port
from clients import create_topic

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


@pytest.fixture
def secured(broker_factory):
    """PLAINTEXT for the operator (User:ANONYMOUS is a super user, as an inter-broker listener
    kept off client networks would be), SASL_PLAINTEXT for the teams."""
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
        "group.initial.rebalance.delay.ms": 0,
    })
    b.start()
    b.sasl_bootstrap = f"127.0.0.1:{sasl_port}"
    return b


def ctl(broker, *args):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", broker.bootstrap, "--output", "json", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def conf(broker, user):
    return {"bootstrap.servers": broker.sasl_bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": USERS[user]}


def produce_one(broker, user, topic, timeout=15):
    """The delivery error of one record (None when delivered)."""
    p = Producer({**conf(broker, user), "acks": "all", "message.timeout.ms": timeout * 1000,
                  "enable.idempotence": False})
    result = []
    p.produce(topic, value=b"v", on_delivery=lambda err, m: result.append(err))
    p.flush(timeout + 5)
    assert result, "no delivery report"
    return result[0]


def fetch_error(broker, user, topic, group="g", timeout=15):
    """The first error a consumer of `group` subscribed to `topic` sees, or None once it reads a record."""
    c = Consumer({**conf(broker, user), "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            return m.error().code() if m.error() else None
        return "timeout"
    finally:
        c.close()


def test_nothing_without_acls_and_prefixed_grants(secured):
    for t in ("team-a.orders", "team-a.payments", "team-b.orders"):
        create_topic(secured.bootstrap, t)
    # No ACL: alice may neither write nor see the topics.
    assert produce_one(secured, "alice", "team-a.orders", timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    md = AdminClient(conf(secured, "alice")).list_topics(timeout=10)
    assert not [t for t in md.topics if not t.startswith("__")]
    # WRITE (and so DESCRIBE) on every topic whose name starts with "team-a.".
    ctl(secured, "acls", "create", "--principal", "User:alice", "--topic", "team-a.", "--pattern-type", "prefixed",
        "--operation", "WRITE")
    assert produce_one(secured, "alice", "team-a.orders") is None
    assert produce_one(secured, "alice", "team-a.payments") is None
    assert produce_one(secured, "alice", "team-b.orders", timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    md = AdminClient(conf(secured, "alice")).list_topics(timeout=10)
    assert sorted(t for t in md.topics if not t.startswith("__")) == ["team-a.orders", "team-a.payments"]
    # bob is untouched by alice's binding.
    assert produce_one(secured, "bob", "team-a.orders", timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_reading_needs_the_topic_and_the_group(secured):
    create_topic(secured.bootstrap, "shared")
    ctl(secured, "acls", "create", "--principal", "User:alice", "--topic", "shared", "--operation", "WRITE")
    assert produce_one(secured, "alice", "shared") is None
    # A consumer with a group id looks its coordinator up first: READ on the group...
    assert fetch_error(secured, "bob", "shared") == KafkaError.GROUP_AUTHORIZATION_FAILED
    ctl(secured, "acls", "create", "--principal", "User:bob", "--group", "g", "--operation", "READ")
    # ...and READ on the topic.
    assert fetch_error(secured, "bob", "shared") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    ctl(secured, "acls", "create", "--principal", "User:bob", "--topic", "shared", "--operation", "READ")
    assert fetch_error(secured, "bob", "shared") is None
    c = Consumer({**conf(secured, "bob"), "group.id": "bobs", "enable.auto.commit": False})
    try:
        # The coordinator lookup is refused (GROUP_AUTHORIZATION_FAILED): the commit cannot go.
        with pytest.raises(Exception) as refused:
            c.commit(offsets=[TopicPartition("shared", 0, 1)], asynchronous=False)
        assert "GROUP_AUTHORIZATION_FAILED" in str(refused.value) or "coordinator" in str(refused.value)
    finally:
        c.close()
    ctl(secured, "acls", "create", "--principal", "User:bob", "--group", "bobs", "--operation", "READ")
    c = Consumer({**conf(secured, "bob"), "group.id": "bobs", "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition("shared", 0, 1)], asynchronous=False)
        assert c.committed([TopicPartition("shared", 0)], timeout=10)[0].offset == 1
    finally:
        c.close()


def test_deny_wins_and_wildcards(secured):
    for t in ("open", "secret"):
        create_topic(secured.bootstrap, t)
        assert produce_one(secured, "bob", t, timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    ctl(secured, "acls", "create", "--principal", "User:*", "--topic", "*", "--operation", "WRITE")
    assert produce_one(secured, "bob", "open") is None
    ctl(secured, "acls", "create", "--principal", "User:bob", "--topic", "secret", "--operation", "WRITE", "--deny")
    assert produce_one(secured, "bob", "secret", timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert produce_one(secured, "alice", "secret") is None
    listed = ctl(secured, "acls", "list", "--topic", "secret", "--pattern-type", "match")
    assert {(a["principal"], a["permission"], a["resource_name"]) for a in listed} == {
        ("User:*", "ALLOW", "*"), ("User:bob", "DENY", "secret")}
    deleted = ctl(secured, "acls", "delete", "--principal", "User:bob", "--topic", "secret")
    assert len(deleted) == 1 and deleted[0]["permission"] == "DENY"
    assert produce_one(secured, "bob", "secret") is None


def test_admin_requests_need_cluster_or_topic_rights(secured):
    a = AdminClient(conf(secured, "alice"))
    futures = a.create_topics([NewTopic("alices", num_partitions=1, replication_factor=1)], operation_timeout=10)
    with pytest.raises(Exception) as refused:
        futures["alices"].result(timeout=15)
    assert "TOPIC_AUTHORIZATION_FAILED" in str(refused.value)
    ctl(secured, "acls", "create", "--principal", "User:alice", "--topic", "alices", "--operation", "CREATE",
        "--operation", "DELETE")
    futures = a.create_topics([NewTopic("alices", num_partitions=1, replication_factor=1)], operation_timeout=10)
    futures["alices"].result(timeout=15)
    futures = a.delete_topics(["alices"], operation_timeout=10)
    futures["alices"].result(timeout=15)
    # ACLs themselves: only with ALTER on the cluster.
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", secured.sasl_bootstrap, "--command-config",
                           _props(secured, "alice"), "acls", "create", "--principal", "User:alice", "--cluster",
                           "--operation", "ALL"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in proc.stderr, proc.stderr


def _props(broker, user):
    path = broker.workdir / f"{user}.properties"
    path.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username={user}\n"
                    f"sasl.password={USERS[user]}\n")
    return str(path)


def test_acls_survive_a_restart_and_count_refusals(secured):
    create_topic(secured.bootstrap, "kept")
    ctl(secured, "acls", "create", "--principal", "User:alice", "--topic", "kept", "--operation", "WRITE")
    assert produce_one(secured, "bob", "kept", timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    secured.stop()
    secured.start()
    assert produce_one(secured, "alice", "kept") is None
    assert produce_one(secured, "bob", "kept", timeout=5).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert len(ctl(secured, "acls", "list")) == 1
