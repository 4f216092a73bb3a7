"""Read-your-writes through a node that is not the controller: an admin change sent to such a
node is forwarded to the active controller, and the node answers only once its own metadata
image holds the change. A read sent right after the answer, on the same connection, to the
same node, therefore always sees it; so does a read from the controller itself. Checked on a
three-node cluster with the raw encoder (kafka_wire), many times per API: ACLs, topics, topic
configs, client quotas, SCRAM credentials, tenant limits and mirror links."""
import os
import struct
import time

import pytest

import kafka_wire as kw
from cluster_harness import QuorumCluster

ROUNDS = 200
TIME_BUDGET_S = 120.0  # per API; a healthy node needs a few seconds
UNKNOWN_TOPIC_OR_PARTITION, RESOURCE_NOT_FOUND = 3, 91


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = QuorumCluster(tmp_path_factory.mktemp("ryw"), overrides={
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
    })
    try:
        yield c.start()
    finally:
        c.tear_down()


@pytest.fixture
def follower(cluster):
    """A connection to a node that does not lead the metadata quorum."""
    leader, _ = cluster.wait_for_leader()
    node = next(n for i, n in sorted(cluster.nodes.items()) if i != leader)
    with kw.Connection(node.port, timeout=30.0) as conn:
        yield conn


@pytest.fixture
def controller(cluster):
    """A connection to the node that leads the metadata quorum."""
    leader, _ = cluster.wait_for_leader()
    with kw.Connection(cluster.nodes[leader].port, timeout=30.0) as conn:
        yield conn


def rounds(write_then_read, n=ROUNDS):
    """Runs write_then_read(i) n times (within the time budget); the rounds whose read missed."""
    missed = []
    deadline = time.monotonic() + TIME_BUDGET_S
    for i in range(n):
        assert time.monotonic() < deadline, f"only {i} of {n} rounds within {TIME_BUDGET_S}s"
        if not write_then_read(i):
            missed.append(i)
    return missed


# ------------------------------------------------------------------ the compact encoding

def carray(items, enc):
    return kw.uvarint(len(items) + 1) + b"".join(enc(x) for x in items)








def f64(v):
    return struct.pack(">d", v)


def read_f64(r):
    return struct.unpack(">d", r.take(8))[0]


def skip_tags(r):
    for _ in range(r.uvarint()):
        r.uvarint()
        r.take(r.uvarint())


# ------------------------------------------------------------------ ACLs

def create_acl(conn, principal):
    """CreateAcls v1: READ on topic ryw-acl for `principal`; the result's error code."""
    body = kw.array([0], lambda _: kw.i8(2) + kw.string("ryw-acl") + kw.i8(3) + kw.string(principal)
                    + kw.string("*") + kw.i8(3) + kw.i8(3))
    r = conn.request(30, 1, body)
    r.i32()
    return r.array(lambda x: (x.i16(), x.string()))[0][0]


def acl_principals(conn, principal):
    """DescribeAcls v1 filtered by principal: the principals of the bindings it lists."""
    body = kw.i8(1) + kw.string(None) + kw.i8(1) + kw.string(principal) + kw.string(None) + kw.i8(1) + kw.i8(1)
    r = conn.request(29, 1, body)
    r.i32()
    assert r.i16() == 0, "DescribeAcls refused"
    r.string()
    found = []
    for _ in range(r.i32()):
        r.i8(), r.string(), r.i8()
        for _ in range(r.i32()):
            found.append(r.string())
            r.string(), r.i8(), r.i8()
    return found


def test_created_acls_are_described_at_once(follower):
    def round_(i):
        principal = f"User:ryw-{i}"
        assert create_acl(follower, principal) == 0
        return principal in acl_principals(follower, principal)
    missed = rounds(round_)
    assert not missed, f"{len(missed)} of {ROUNDS} DescribeAcls answers missed the binding just created"


def test_the_controller_answers_its_own_changes_once_its_image_holds_them(controller):
    def round_(i):
        principal = f"User:ryw-controller-{i}"
        assert create_acl(controller, principal) == 0
        return principal in acl_principals(controller, principal)
    missed = rounds(round_)
    assert not missed, f"{len(missed)} of {ROUNDS} DescribeAcls answers of the controller missed the binding"


# ------------------------------------------------------------------ topics

def create_topic(conn, name, configs=()):
    """CreateTopics v4, one partition, one replica: the topic's error code."""
    topic = (kw.string(name) + kw.i32(1) + kw.i16(1) + kw.i32(0)
             + kw.array(list(configs), lambda kv: kw.string(kv[0]) + kw.string(kv[1])))
    r = conn.request(19, 4, kw.array([topic], lambda t: t) + kw.i32(30000) + kw.i8(0))
    r.i32()
    return r.array(lambda x: (x.string(), x.i16(), x.string()))[0][1]


def delete_topic(conn, name):
    """DeleteTopics v3: the topic's error code."""
    r = conn.request(20, 3, kw.array([name], kw.string) + kw.i32(30000))
    r.i32()
    return r.array(lambda x: (x.string(), x.i16()))[0][1]


def topic_error(conn, name):
    """The error code a Metadata v4 answer (no auto-creation) gives the topic: 0 when it exists."""
    r = conn.request(3, 4, kw.array([name], kw.string) + kw.i8(0))
    r.i32()
    r.array(lambda x: (x.i32(), x.string(), x.i32(), x.string()))
    r.string(), r.i32()
    topics = r.array(lambda x: (x.i16(), x.string(), x.i8(),
                                x.array(lambda p: (p.i16(), p.i32(), p.i32(), p.array(lambda q: q.i32()),
                                                   p.array(lambda q: q.i32())))))
    return {t[1]: t[0] for t in topics}[name]


def test_created_and_deleted_topics_are_seen_at_once(follower):
    def round_(i):
        name = f"ryw-topic-{i}"
        assert create_topic(follower, name) == 0
        if topic_error(follower, name) != 0:
            return False
        assert delete_topic(follower, name) == 0
        return topic_error(follower, name) == UNKNOWN_TOPIC_OR_PARTITION
    missed = rounds(round_, ROUNDS // 2)
    assert not missed, f"{len(missed)} of {ROUNDS // 2} topics were not seen as created or deleted"


# ------------------------------------------------------------------ configs

def set_topic_config(conn, topic, key, value):
    """IncrementalAlterConfigs v0 (SET): the resource's error code."""
    resource = kw.i8(2) + kw.string(topic) + kw.array([0], lambda _: kw.string(key) + kw.i8(0) + kw.string(value))
    r = conn.request(44, 0, kw.array([resource], lambda x: x) + kw.i8(0))
    r.i32()
    return r.array(lambda x: (x.i16(), x.string(), x.i8(), x.string()))[0][0]


def topic_config(conn, topic, key):
    """DescribeConfigs v1 of one topic config: its value."""
    body = kw.array([0], lambda _: kw.i8(2) + kw.string(topic) + kw.array([key], kw.string)) + kw.i8(0)
    r = conn.request(32, 1, body)
    r.i32()
    values = {}
    for _ in range(r.i32()):
        assert r.i16() == 0, "DescribeConfigs refused"
        r.string(), r.i8(), r.string()
        for _ in range(r.i32()):
            name, value = r.string(), r.string()
            r.i8(), r.i8(), r.i8()
            r.array(lambda s: (s.string(), s.string(), s.i8()))
            values[name] = value
    return values.get(key)


def test_altered_topic_configs_are_described_at_once(follower):
    assert create_topic(follower, "ryw-configs") == 0

    def round_(i):
        value = str(3_600_000 + i)
        assert set_topic_config(follower, "ryw-configs", "retention.ms", value) == 0
        return topic_config(follower, "ryw-configs", "retention.ms") == value
    missed = rounds(round_)
    assert not missed, f"{len(missed)} of {ROUNDS} DescribeConfigs answers missed the value just set"


# ------------------------------------------------------------------ client quotas

def set_quota(conn, user, rate):
    """AlterClientQuotas v0: producer_byte_rate of a user; the entry's error code."""
    entry = (kw.array([0], lambda _: kw.string("user") + kw.string(user))
             + kw.array([0], lambda _: kw.string("producer_byte_rate") + f64(rate) + kw.i8(0)))
    r = conn.request(49, 0, kw.array([entry], lambda x: x) + kw.i8(0))
    r.i32()
    return r.array(lambda x: (x.i16(), x.string(), x.array(lambda e: (e.string(), e.string()))))[0][0]


def quota_of(conn, user):
    """DescribeClientQuotas v0 of exactly that user: its producer_byte_rate, or None."""
    r = conn.request(48, 0, kw.array([0], lambda _: kw.string("user") + kw.i8(0) + kw.string(user)) + kw.i8(1))
    r.i32()
    assert r.i16() == 0, "DescribeClientQuotas refused"
    r.string()
    entries = r.array(lambda x: (x.array(lambda e: (e.string(), e.string())),
                                 x.array(lambda v: (v.string(), read_f64(v)))))
    for _, values in entries or []:
        for key, value in values:
            if key == "producer_byte_rate":
                return value
    return None


def test_altered_client_quotas_are_described_at_once(follower):
    def round_(i):
        rate = 1_000_000.0 + i
        assert set_quota(follower, f"ryw-quota-{i}", rate) == 0
        return quota_of(follower, f"ryw-quota-{i}") == rate
    missed = rounds(round_)
    assert not missed, f"{len(missed)} of {ROUNDS} DescribeClientQuotas answers missed the quota just set"


# ------------------------------------------------------------------ SCRAM credentials

def upsert_scram(conn, user):
    """AlterUserScramCredentials v0: a SCRAM-SHA-256 credential for `user`; its error code."""
    upsertion = (kw.compact_string(user) + kw.i8(1) + kw.i32(4096) + kw.uvarint(17) + os.urandom(16)
                 + kw.uvarint(33) + os.urandom(32) + b"\x00")
    r = kw.flexible_request(conn, 51, 0, carray([], None) + carray([upsertion], lambda u: u) + b"\x00")
    r.i32()
    results = r.compact_array(lambda x: (x.compact_string(), x.i16(), x.compact_string(), skip_tags(x)))
    return results[0][1]


def scram_mechanisms(conn, user):
    """DescribeUserScramCredentials v0 of one user: its mechanisms (none when it has none)."""
    r = kw.flexible_request(conn, 50, 0, carray([user], lambda u: kw.compact_string(u) + b"\x00") + b"\x00")
    r.i32()
    r.i16(), r.compact_string()

    def result(x):
        name, error, _ = x.compact_string(), x.i16(), x.compact_string()
        infos = x.compact_array(lambda c: (c.i8(), c.i32(), skip_tags(c)))
        skip_tags(x)
        return name, error, [m for m, _, _ in infos or []]
    return [m for name, error, ms in r.compact_array(result) or [] if name == user and error == 0 for m in ms]


def test_upserted_scram_credentials_are_described_at_once(follower):
    def round_(i):
        assert upsert_scram(follower, f"ryw-user-{i}") == 0
        return scram_mechanisms(follower, f"ryw-user-{i}") == [1]
    missed = rounds(round_)
    assert not missed, f"{len(missed)} of {ROUNDS} DescribeUserScramCredentials answers missed the credential"


# ------------------------------------------------------------------ tenant limits

def set_tenant_limit(conn, principal, topics):
    """AlterTenantLimits: max.topics of a literal principal; the entry's error code."""
    entry = (kw.compact_string(principal) + kw.i8(3)
             + carray([0], lambda _: kw.compact_string("max.topics") + kw.i64(topics) + kw.i8(0) + b"\x00") + b"\x00")
    r = kw.flexible_request(conn, 30004, 0, carray([entry], lambda e: e) + kw.i8(0) + b"\x00")
    r.i32()
    return r.compact_array(lambda x: (x.compact_string(), x.i8(), x.i16(), x.compact_string(), skip_tags(x)))[0][2]


def tenant_limit(conn, principal):
    """DescribeTenantLimits of one principal: its max.topics, or None."""
    r = kw.flexible_request(conn, 30005, 0, kw.compact_string(principal) + b"\x00")
    r.i32()
    assert r.i16() == 0, "DescribeTenantLimits refused"
    r.compact_string()

    def limit(x):
        name, _ = x.compact_string(), x.i8()
        values = x.compact_array(lambda v: (v.compact_string(), v.i64(), skip_tags(v)))
        x.i32(), x.i32()
        skip_tags(x)
        return name, {k: v for k, v, _ in values or []}
    for name, values in r.compact_array(limit) or []:
        if name == principal:
            return values.get("max.topics")
    return None


def test_altered_tenant_limits_are_described_at_once(follower):
    def round_(i):
        assert set_tenant_limit(follower, f"User:ryw-tenant-{i}", 10 + i) == 0
        return tenant_limit(follower, f"User:ryw-tenant-{i}") == 10 + i
    missed = rounds(round_)
    assert not missed, f"{len(missed)} of {ROUNDS} DescribeTenantLimits answers missed the limit just set"


# ------------------------------------------------------------------ mirror links

def create_link(conn, name):
    """CreateMirrorLinks of a link mirroring one topic of an unreachable source; its error code."""
    link = (kw.compact_string(name) + kw.compact_string("127.0.0.1:1") + carray([], None)
            + carray(["ryw-absent"], kw.compact_string) + carray([], None) + carray([], None)
            + carray([], None) + carray([], None) + kw.i8(0) + kw.i8(0) + b"\x00")
    r = kw.flexible_request(conn, 30000, 0, carray([link], lambda x: x) + kw.i8(0) + b"\x00")
    r.i32()
    return r.compact_array(lambda x: (x.compact_string(), x.i16(), x.compact_string(), skip_tags(x)))[0][1]


def remove_link(conn, name):
    """AlterMirrorLinks, REMOVE; the link's error code."""
    r = kw.flexible_request(conn, 30001, 0, carray([name], lambda n: kw.compact_string(n) + kw.i8(2) + b"\x00") + b"\x00")
    r.i32()
    return r.compact_array(lambda x: (x.compact_string(), x.i16(), x.compact_string(), skip_tags(x)))[0][1]


def link_error(conn, name):
    """DescribeMirrorLinks of one link: its error code (0 when it exists)."""
    r = kw.flexible_request(conn, 30002, 0, carray([name], kw.compact_string) + kw.i8(0) + b"\x00")
    r.i32()
    assert r.i16() == 0, "DescribeMirrorLinks refused"
    r.i32()
    assert r.uvarint() == 2, "one link asked, one described"
    assert r.compact_string() == name
    return r.i16()


def test_created_and_removed_mirror_links_are_seen_at_once(follower):
    def round_(i):
        name = f"ryw-link-{i}"
        assert create_link(follower, name) == 0
        if link_error(follower, name) != 0:
            return False
        assert remove_link(follower, name) == 0
        return link_error(follower, name) == RESOURCE_NOT_FOUND
    missed = rounds(round_, ROUNDS // 2)
    assert not missed, f"{len(missed)} of {ROUNDS // 2} mirror links were not seen as created or removed"
