"""Tenant limits: how many topics, and partitions in all, a principal or a team (a principal
prefix) may own. Set and listed with `brokerctl tenants`, stored as metadata records, counted
by the owner each topic records, and enforced by the controller: a creation over a limit
fails with POLICY_VIOLATION naming it, on one node and when a broker forwards it."""
import json
import subprocess
import time

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from brokerd_harness import brokerctl_binary, free_port
from cluster_harness import QuorumCluster

USERS = {"team-a-web": "a-web", "team-a-etl": "a-etl", "bob": "bob-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


def ctl(bootstrap, *args, ok=True):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", bootstrap, "--output", "json", *map(str, args)],
                          capture_output=True, text=True, timeout=60)
    if ok:
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc


@pytest.fixture
def teams(broker_factory):
    """PLAINTEXT for the operator, SASL_PLAINTEXT for the teams."""
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    })
    b.start()
    b.sasl_bootstrap = f"127.0.0.1:{sasl_port}"
    return b


def admin(broker, user):
    return AdminClient({"bootstrap.servers": broker.sasl_bootstrap, "security.protocol": "SASL_PLAINTEXT",
                        "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": USERS[user]})


def create(broker, user, name, partitions):
    """None when created, else (error name, message)."""
    a = admin(broker, user)  # must outlive the future
    f = a.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)], request_timeout=20)[name]
    try:
        f.result(timeout=30)
        return None
    except KafkaException as e:
        return e.args[0].name(), e.args[0].str()


def add_partitions(broker, user, name, total):
    a = admin(broker, user)
    f = a.create_partitions([NewPartitions(name, total)], request_timeout=20)[name]
    try:
        f.result(timeout=30)
        return None
    except KafkaException as e:
        return e.args[0].name(), e.args[0].str()


def tenant(bootstrap, principal):
    rows = [r for r in ctl(bootstrap, "tenants", "describe") if r["principal"] == principal]
    assert len(rows) == 1, rows
    return rows[0]


def test_a_team_over_its_limits_is_refused_and_others_are_not(teams):
    b = teams
    ctl(b.bootstrap, "tenants", "alter", "--principal-prefix", "User:team-a-", "--set", "max.topics=2",
        "--set", "max.partitions=5")
    assert create(b, "team-a-web", "a-orders", 2) is None
    assert create(b, "team-a-etl", "a-etl", 2) is None
    refused = create(b, "team-a-web", "a-third", 1)
    assert refused and refused[0] == "POLICY_VIOLATION", refused
    assert "max.topics=2 for User:team-a-*" in refused[1], refused
    # Partitions count across the team: 4 of 5 used.
    refused = add_partitions(b, "team-a-web", "a-orders", 4)
    assert refused and refused[0] == "POLICY_VIOLATION" and "max.partitions=5" in refused[1], refused
    assert add_partitions(b, "team-a-etl", "a-orders", 3) is None
    # Another principal is not limited.
    for i in range(4):
        assert create(b, "bob", f"bob-{i}", 3) is None
    row = tenant(b.bootstrap, "User:team-a-")
    assert row["pattern_type"] == "prefixed" and row["limits"] == {"max.partitions": 5, "max.topics": 2}, row
    assert (row["topics"], row["partitions"]) == (2, 5), row
    # Deleting a topic frees its room.
    ctl(b.bootstrap, "topics", "delete", "a-etl")
    assert create(b, "team-a-web", "a-third", 1) is None
    assert (tenant(b.bootstrap, "User:team-a-")["topics"], tenant(b.bootstrap, "User:team-a-")["partitions"]) == (2, 4)


def test_limits_and_owners_survive_a_restart_and_removal_lifts_a_limit(teams):
    b = teams
    ctl(b.bootstrap, "tenants", "alter", "--principal", "User:bob", "--set", "max.topics=1")
    assert create(b, "bob", "bob-only", 2) is None
    b.stop()
    b.start()
    row = tenant(b.bootstrap, "User:bob")
    assert (row["pattern_type"], row["limits"], row["topics"], row["partitions"]) == ("literal", {"max.topics": 1}, 1, 2)
    refused = create(b, "bob", "bob-second", 1)
    assert refused and refused[0] == "POLICY_VIOLATION" and "User:bob exceeded" in refused[1], refused
    ctl(b.bootstrap, "tenants", "alter", "--principal", "User:bob", "--delete", "max.topics")
    assert ctl(b.bootstrap, "tenants", "describe") == []
    assert create(b, "bob", "bob-second", 1) is None


def test_bad_limits_are_refused_with_a_reason(teams):
    b = teams
    r = ctl(b.bootstrap, "tenants", "alter", "--principal", "User:bob", "--set", "max.bytes=1", ok=False)
    assert r.returncode != 0 and "INVALID_REQUEST" in r.stderr and "not a tenant limit" in r.stderr, r.stderr
    r = ctl(b.bootstrap, "tenants", "alter", "--principal", "bob", "--set", "max.topics=1", ok=False)
    assert r.returncode != 0 and "Type:name" in r.stderr, r.stderr
    r = ctl(b.bootstrap, "tenants", "alter", "--principal", "User:bob", "--set", "max.topics=-2", ok=False)
    assert r.returncode != 0 and "0 or more" in r.stderr, r.stderr
    r = ctl(b.bootstrap, "tenants", "alter", "--principal", "User:bob", "--set", "max.topics=1", "--validate-only")
    assert ctl(b.bootstrap, "tenants", "describe") == []


def test_a_forwarded_creation_is_owned_and_limited_by_its_client(tmp_path):
    """A broker that does not lead the quorum forwards CreateTopics in an envelope naming the
    client's principal: the controller counts the topic for it and refuses past the limit."""
    c = QuorumCluster(tmp_path)
    try:
        c.start()
        leader, _ = c.wait_for_leader()
        other = next(i for i in c.nodes if i != leader)
        via = c.nodes[other].bootstrap
        ctl(via, "tenants", "alter", "--principal", "User:ANONYMOUS", "--set", "max.topics=1")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not ctl(via, "tenants", "describe"):
            time.sleep(0.1)
        ctl(via, "topics", "create", "first", "--partitions", "2", "--replication-factor", "3")
        r = ctl(via, "topics", "create", "second", "--partitions", "1", ok=False)
        assert r.returncode != 0 and "POLICY_VIOLATION" in r.stderr and "max.topics=1 for User:ANONYMOUS" in r.stderr, \
            r.stderr
        row = tenant(c.nodes[leader].bootstrap, "User:ANONYMOUS")
        assert (row["topics"], row["partitions"]) == (1, 2), row
    finally:
        c.tear_down()
