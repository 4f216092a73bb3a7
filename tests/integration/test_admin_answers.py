"""What the admin APIs answer besides their error codes, checked on the wire with the raw
encoder (kafka_wire): the ACL APIs' error_message is null on success and SECURITY_DISABLED
without an authorizer; authorized_operations (Metadata v8, DescribeCluster, DescribeGroups,
DescribeTopicPartitions) are the operations the asking principal may do; CreateTopics v5
describes a new topic's configs only to a principal that may DESCRIBE_CONFIGS it."""
import struct
import subprocess

import pytest

import kafka_wire as kw
from brokerd_harness import brokerctl_binary, free_port
from clients import create_topic

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SECURITY_DISABLED, TOPIC_AUTHORIZATION_FAILED = 54, 29
API_CREATE_TOPICS, API_DESCRIBE_GROUPS, API_DESCRIBE_ACLS, API_CREATE_ACLS, API_DELETE_ACLS = 19, 15, 29, 30, 31
API_DESCRIBE_CLUSTER, API_DESCRIBE_TOPIC_PARTITIONS = 60, 75
TOPIC, GROUP, CLUSTER = 2, 3, 4
ANY, LITERAL = 1, 3
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12
ALLOW = 3
UNSET = -2147483648  # the schemas' default: not asked


def bits(*ops):
    return sum(1 << op for op in ops)


ALL_TOPIC = bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS)
ALL_GROUP = bits(READ, DELETE, DESCRIBE)
ALL_CLUSTER = bits(CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE)


# ------------------------------------------------------------------ the compact encoding







def tags(r):
    out = {}
    for _ in range(r.uvarint()):
        tag = r.uvarint()
        out[tag] = r.take(r.uvarint())
    return out


def i32s(r):
    return r.i32()

# ------------------------------------------------------------------ requests

def create_acls(conn, principal, op, resource_type=TOPIC, name="t"):
    """CreateAcls v1: [(error, message)]."""
    body = kw.array([0], lambda _: kw.i8(resource_type) + kw.string(name) + kw.i8(LITERAL) + kw.string(principal)
                    + kw.string("*") + kw.i8(op) + kw.i8(ALLOW))
    r = conn.request(API_CREATE_ACLS, 1, body)
    r.i32()
    return r.array(lambda x: (x.i16(), x.string()))


def describe_acls(conn):
    """DescribeAcls v1, every binding: (error, message, resources)."""
    body = kw.i8(ANY) + kw.string(None) + kw.i8(ANY) + kw.string(None) + kw.string(None) + kw.i8(ANY) + kw.i8(ANY)
    r = conn.request(API_DESCRIBE_ACLS, 1, body)
    r.i32()
    error, message = r.i16(), r.string()
    resources = r.array(lambda x: (x.i8(), x.string(), x.i8(), x.array(
        lambda y: (y.string(), y.string(), y.i8(), y.i8()))))
    return error, message, resources


def delete_acls(conn, principal):
    """DeleteAcls v1 of the principal's bindings: [(error, message, [(error, message), ...])]."""
    body = kw.array([0], lambda _: kw.i8(ANY) + kw.string(None) + kw.i8(ANY) + kw.string(principal)
                    + kw.string(None) + kw.i8(ANY) + kw.i8(ANY))
    r = conn.request(API_DELETE_ACLS, 1, body)
    r.i32()
    return r.array(lambda x: (x.i16(), x.string(), x.array(lambda y: (
        y.i16(), y.string(), y.i8(), y.string(), y.i8(), y.string(), y.string(), y.i8(), y.i8())[:2])))


def metadata_v8(conn, topics):
    """Metadata v8 asking for both authorized operations: ({topic: (error, ops)}, cluster ops)."""
    body = kw.array(topics, kw.string) + b"\x00\x01\x01"
    r = conn.request(kw.API_METADATA, 8, body)
    r.i32()
    r.array(lambda x: (x.i32(), x.string(), x.i32(), x.string()))
    r.string()
    r.i32()

    def topic_entry(x):
        error, name, _internal = x.i16(), x.string(), x.i8()
        x.array(lambda y: (y.i16(), y.i32(), y.i32(), y.i32(), y.array(i32s), y.array(i32s), y.array(i32s)))
        return name, (error, x.i32())

    topics = dict(r.array(topic_entry))
    return topics, r.i32()


def describe_groups_v3(conn, group):
    """DescribeGroups v3 with authorized operations: (error, ops); a group nobody joined may
    be answered with an error (no coordinator yet), its operations all the same."""
    r = conn.request(API_DESCRIBE_GROUPS, 3, kw.array([group], kw.string) + b"\x01")
    r.i32()
    [g] = r.array(lambda x: (x.i16(), x.string(), x.string(), x.string(), x.string(), x.array(lambda y: (
        y.string(), y.string(), y.string(), y.nbytes(), y.nbytes())), x.i32()))
    return g[0], g[6]


def describe_cluster(conn, include=True):
    """DescribeCluster v0: (error, cluster ops)."""
    r = kw.flexible_request(conn, API_DESCRIBE_CLUSTER, 0, (b"\x01" if include else b"\x00") + b"\x00")
    r.i32()
    error = r.i16()
    r.compact_string()
    r.compact_string()
    r.i32()
    r.compact_array(lambda x: (x.i32(), x.compact_string(), x.i32(), x.compact_string(), tags(x)))
    return error, r.i32()


def describe_topic_partitions(conn, topic):
    """DescribeTopicPartitions v0 of one topic: (error, ops)."""
    body = kw.uvarint(2) + kw.compact_string(topic) + b"\x00" + kw.i32(100) + kw.i8(-1) + b"\x00"
    r = kw.flexible_request(conn, API_DESCRIBE_TOPIC_PARTITIONS, 0, body)
    r.i32()

    def topic_entry(x):
        error = x.i16()
        x.compact_string()
        x.take(16)  # topic id
        x.i8()
        x.compact_array(lambda y: (y.i16(), y.i32(), y.i32(), y.i32(), y.compact_array(i32s), y.compact_array(i32s), y.compact_array(i32s),
                             y.compact_array(i32s), y.compact_array(i32s), tags(y)))
        ops = x.i32()
        tags(x)
        return error, ops

    [t] = r.compact_array(topic_entry)
    return t


def create_topic_v5(conn, name):
    """CreateTopics v5 of one topic: (error, num_partitions, configs, topic_config_error_code)."""
    body = (kw.uvarint(2) + kw.compact_string(name) + kw.i32(1) + kw.i16(1) + kw.uvarint(1) + kw.uvarint(1) + b"\x00"
            + kw.i32(15000) + kw.i8(0) + b"\x00")
    r = kw.flexible_request(conn, API_CREATE_TOPICS, 5, body)
    r.i32()

    def result(x):
        x.compact_string()
        error = x.i16()
        x.compact_string()
        partitions = x.i32()
        x.i16()
        configs = x.compact_array(lambda y: (y.compact_string(), y.compact_string(), y.i8(), y.i8(), y.i8(), tags(y)))
        tagged = tags(x)
        config_error = struct.unpack(">h", tagged[0])[0] if 0 in tagged else 0
        return error, partitions, configs, config_error

    [t] = r.compact_array(result)
    return t

# ------------------------------------------------------------------ fixtures

def sasl_connection(port, user, password):
    conn = kw.Connection(port)
    error, _ = kw.sasl_handshake(conn, "PLAIN")
    assert error == 0
    error, message, _, _ = kw.sasl_authenticate(conn, f"\0{user}\0{password}".encode())
    assert error == 0, message
    return conn


def ctl(broker, *args):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", broker.bootstrap, *args],
                          capture_output=True, text=True, timeout=60)
    return proc


@pytest.fixture
def secured(broker_factory):
    """A node with the StandardAuthorizer: PLAINTEXT for the operator (a super user),
    SASL_PLAINTEXT for User:dana, who may DESCRIBE the topic "seen" and the group "g1", READ
    the topic "read", and CREATE the topic "made" (but not describe its configs)."""
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_dana="d-secret";',
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:ANONYMOUS",
    })
    b.start()
    b.sasl_port = sasl_port
    for topic in ("seen", "read"):
        create_topic(b.bootstrap, topic)
    for args in (("--topic", "seen", "--operation", "DESCRIBE"), ("--group", "g1", "--operation", "DESCRIBE"),
                 ("--topic", "read", "--operation", "READ"), ("--topic", "made", "--operation", "CREATE")):
        proc = ctl(b, "acls", "create", "--principal", "User:dana", *args)
        assert proc.returncode == 0, proc.stderr
    return b

# ------------------------------------------------------------------ the ACL APIs

def test_acl_answers_carry_a_null_error_message_on_success(secured):
    with kw.Connection(secured.port) as conn:
        assert create_acls(conn, "User:erin", WRITE) == [(0, None)]
        error, message, resources = describe_acls(conn)
        assert (error, message) == (0, None) and resources, resources
        [(error, message, matching)] = delete_acls(conn, "User:erin")
        assert (error, message) == (0, None)
        assert matching == [(0, None)]


def test_the_acl_apis_answer_security_disabled_without_an_authorizer(broker):
    with kw.Connection(broker.port) as conn:
        [(error, message)] = create_acls(conn, "User:erin", WRITE)
        assert error == SECURITY_DISABLED and message, message
        error, message, resources = describe_acls(conn)
        assert error == SECURITY_DISABLED and resources == [], (error, message, resources)
        [(error, message, matching)] = delete_acls(conn, "User:erin")
        assert error == SECURITY_DISABLED and matching == [], (error, message, matching)
    proc = ctl(broker, "acls", "create", "--principal", "User:erin", "--topic", "t", "--operation", "WRITE")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SECURITY_DISABLED" in proc.stderr and "authorizer.class.name" in proc.stderr, proc.stderr
    proc = ctl(broker, "acls", "list")
    assert proc.returncode == 1 and "without an authorizer" in proc.stderr, proc.stderr

# ------------------------------------------------------------------ authorized_operations

def test_authorized_operations_are_what_the_principal_may_do(secured):
    conn = sasl_connection(secured.sasl_port, "dana", "d-secret")
    try:
        topics, cluster_ops = metadata_v8(conn, ["seen", "read"])
        assert topics == {"seen": (0, bits(DESCRIBE)), "read": (0, bits(READ, DESCRIBE))}, topics
        assert cluster_ops == 0
        assert describe_cluster(conn) == (0, 0)
        assert describe_groups_v3(conn, "g1")[1] == bits(DESCRIBE)
        assert describe_topic_partitions(conn, "seen") == (0, bits(DESCRIBE))
        assert describe_topic_partitions(conn, "read") == (0, bits(READ, DESCRIBE))
    finally:
        conn.close()
    # The operator is a super user: every operation of each resource.
    with kw.Connection(secured.port) as conn:
        topics, cluster_ops = metadata_v8(conn, ["seen"])
        assert topics == {"seen": (0, ALL_TOPIC)} and cluster_ops == ALL_CLUSTER, (topics, cluster_ops)
        assert describe_cluster(conn) == (0, ALL_CLUSTER)
        assert describe_groups_v3(conn, "g1")[1] == ALL_GROUP


def test_without_an_authorizer_every_operation_is_authorized(broker):
    create_topic(broker.bootstrap, "open")
    with kw.Connection(broker.port) as conn:
        topics, cluster_ops = metadata_v8(conn, ["open"])
        assert topics == {"open": (0, ALL_TOPIC)} and cluster_ops == ALL_CLUSTER, (topics, cluster_ops)
        assert describe_cluster(conn) == (0, ALL_CLUSTER)
        assert describe_cluster(conn, include=False) == (0, UNSET)
        assert describe_groups_v3(conn, "g")[1] == ALL_GROUP
        assert describe_topic_partitions(conn, "open") == (0, ALL_TOPIC)

# ------------------------------------------------------------------ CreateTopics v5

def test_create_topics_describes_configs_only_with_describe_configs(secured):
    conn = sasl_connection(secured.sasl_port, "dana", "d-secret")
    try:
        error, partitions, configs, config_error = create_topic_v5(conn, "made")
    finally:
        conn.close()
    assert error == 0
    assert config_error == TOPIC_AUTHORIZATION_FAILED and not configs and partitions == -1, (partitions, configs)
    with kw.Connection(secured.port) as conn:
        error, partitions, configs, config_error = create_topic_v5(conn, "operators")
    assert (error, partitions, config_error) == (0, 1, 0)
    assert any(c[0] == "retention.ms" for c in configs), configs
