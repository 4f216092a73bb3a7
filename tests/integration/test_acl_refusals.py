"""Every API a client sends about a topic, a group or the cluster, asked by a principal with no
ACL, is refused with TOPIC_, GROUP_ or CLUSTER_AUTHORIZATION_FAILED, request by request, over
SASL/PLAIN with kafka-python's protocol classes (one connection, the versions named below).

Every advertised API, at its newest version, is checked the same way by brokerd-api-refusals
(api_refusals.cc, the project's own codecs): an API served without a refusal case there fails
it, unless it is exempt for a stated reason (ApiVersions, SASL, ListGroups' filtering,
DescribeCluster)."""
import os
import subprocess
import time

import pytest
from kafka.conn import BrokerConnection
from kafka.protocol.admin import (AlterConfigsRequest_v0, CreateAclsRequest_v1, CreatePartitionsRequest_v0,
                                  CreateTopicsRequest_v2, DeleteAclsRequest_v1, DeleteGroupsRequest_v0,
                                  DeleteTopicsRequest_v1, DescribeAclsRequest_v1, DescribeConfigsRequest_v1,
                                  DescribeGroupsRequest_v0)
from kafka.protocol.commit import GroupCoordinatorRequest_v0, OffsetCommitRequest_v2, OffsetFetchRequest_v1
from kafka.protocol.fetch import FetchRequest_v4
from kafka.protocol.group import HeartbeatRequest_v0, JoinGroupRequest_v2, LeaveGroupRequest_v0, SyncGroupRequest_v0
from kafka.protocol.metadata import MetadataRequest_v1
from kafka.protocol.offset import OffsetRequest_v1
from kafka.protocol.produce import ProduceRequest_v3
from kafka.protocol.types import Array, Schema

from brokerd_harness import free_port
from clients import create_topic
from kafka_wire import record_batch

TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED = 29, 30, 31
TOPIC, GROUP = "secret", "secret-group"
ANY, LITERAL, READ, ALLOW = 1, 3, 3, 3

# API name, request, the refusal expected among the answer's error codes.
REQUESTS = [
    ("Produce v3", ProduceRequest_v3(None, -1, 5000, [(TOPIC, [(0, record_batch([(b"k", b"v")]))])]), TOPIC_DENIED),
    ("Fetch v4", FetchRequest_v4(-1, 0, 0, 1 << 20, 0, [(TOPIC, [(0, 0, 1 << 20)])]), TOPIC_DENIED),
    ("ListOffsets v1", OffsetRequest_v1(-1, [(TOPIC, [(0, -1)])]), TOPIC_DENIED),
    ("Metadata v1", MetadataRequest_v1([TOPIC]), TOPIC_DENIED),
    ("OffsetCommit v2", OffsetCommitRequest_v2(GROUP, -1, "", -1, [(TOPIC, [(0, 1, "")])]), GROUP_DENIED),
    ("OffsetFetch v1", OffsetFetchRequest_v1(GROUP, [(TOPIC, [0])]), GROUP_DENIED),
    # v0: kafka-python 2.0.2 decodes the v1 answer without its throttle_time_ms.
    ("FindCoordinator v0", GroupCoordinatorRequest_v0(GROUP), GROUP_DENIED),
    ("JoinGroup v2", JoinGroupRequest_v2(GROUP, 10000, 10000, "", "consumer", [("range", b"")]), GROUP_DENIED),
    ("SyncGroup v0", SyncGroupRequest_v0(GROUP, 1, "m", []), GROUP_DENIED),
    ("Heartbeat v0", HeartbeatRequest_v0(GROUP, 1, "m"), GROUP_DENIED),
    ("LeaveGroup v0", LeaveGroupRequest_v0(GROUP, "m"), GROUP_DENIED),
    ("DescribeGroups v0", DescribeGroupsRequest_v0([GROUP]), GROUP_DENIED),
    ("DeleteGroups v0", DeleteGroupsRequest_v0([GROUP]), GROUP_DENIED),
    ("CreateTopics v2", CreateTopicsRequest_v2([("new-topic", 1, 1, [], [])], 5000, False), TOPIC_DENIED),
    ("DeleteTopics v1", DeleteTopicsRequest_v1([TOPIC], 5000), TOPIC_DENIED),
    ("CreatePartitions v0", CreatePartitionsRequest_v0([(TOPIC, (2, None))], 5000, False), TOPIC_DENIED),
    ("DescribeConfigs v1 (topic)", DescribeConfigsRequest_v1([(2, TOPIC, None)], False), TOPIC_DENIED),
    ("DescribeConfigs v1 (broker)", DescribeConfigsRequest_v1([(4, "1", None)], False), CLUSTER_DENIED),
    ("AlterConfigs v0", AlterConfigsRequest_v0([(2, TOPIC, [("retention.ms", "1000")])], False), TOPIC_DENIED),
    ("DescribeAcls v1", DescribeAclsRequest_v1(ANY, None, ANY, None, None, ANY, ANY), CLUSTER_DENIED),
    ("CreateAcls v1", CreateAclsRequest_v1([(2, TOPIC, LITERAL, "User:mallory", "*", READ, ALLOW)]), CLUSTER_DENIED),
    ("DeleteAcls v1", DeleteAclsRequest_v1([(2, TOPIC, LITERAL, None, None, ANY, ANY)]), CLUSTER_DENIED),
]


def error_codes(schema, value, out):
    """Every field named *error_code in a decoded answer, walked by its schema."""
    if isinstance(schema, Schema):
        values = value if isinstance(value, (tuple, list)) else [getattr(value, n) for n in schema.names]
        for name, field, v in zip(schema.names, schema.fields, values):
            if name.endswith("error_code"):
                out.append(v)
            else:
                error_codes(field, v, out)
    elif isinstance(schema, Array) and value is not None:
        for item in value:
            error_codes(schema.array_of, item, out)
    return out


@pytest.fixture
def mallory(broker_factory):
    """A node with the StandardAuthorizer: PLAINTEXT for the operator (a super user),
    SASL_PLAINTEXT where User:mallory has no ACL at all."""
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_mallory="m-secret";',
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
    })
    b.start()
    b.sasl_port = sasl_port
    create_topic(b.bootstrap, TOPIC)
    conn = BrokerConnection("127.0.0.1", sasl_port, 0, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                            sasl_plain_username="mallory", sasl_plain_password="m-secret", api_version=(2, 0, 0),
                            request_timeout_ms=15000)
    deadline = time.monotonic() + 15
    while not conn.connected():
        assert time.monotonic() < deadline, "no SASL connection"
        conn.connect()
        time.sleep(0.05)
    yield b, conn
    conn.close()


def ask(conn, request):
    future = conn.send(request)
    deadline = time.monotonic() + 15
    while not future.is_done:
        assert time.monotonic() < deadline, f"no answer to {request}"
        for response, done in conn.recv():  # the caller completes the futures
            done.success(response)
        time.sleep(0.001)
    if future.failed():
        raise future.exception
    return future.value


def test_every_served_api_refuses_a_principal_without_acls(mallory):
    b, _ = mallory
    path = os.environ.get("BROKERD_API_REFUSALS_BIN")
    assert path and os.access(path, os.X_OK), "BROKERD_API_REFUSALS_BIN must name the brokerd-api-refusals binary"
    proc = subprocess.run([path, "127.0.0.1", str(b.sasl_port), "mallory", "m-secret", TOPIC, GROUP],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == 0 and out.rstrip().splitlines()[-1].endswith(" 0 failures") or "0 failures" in out, out
    assert b.alive()


@pytest.mark.parametrize("name,request_,refusal", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_a_principal_without_acls_is_refused(mallory, name, request_, refusal):
    b, conn = mallory
    answer = ask(conn, request_)
    codes = error_codes(answer.SCHEMA, answer, [])
    assert refusal in codes, f"{name}: expected error {refusal} among {codes}"
    assert b.alive()


@pytest.mark.parametrize("topic", [TOPIC, "no-such-topic"])
def test_fetch_does_not_tell_a_principal_without_acls_whether_a_topic_exists(mallory, topic):
    # Authorized before the topic is looked up: an existing and a missing topic are answered
    # alike, so the answer reveals nothing about which topics exist.
    b, conn = mallory
    answer = ask(conn, FetchRequest_v4(-1, 0, 0, 1 << 20, 0, [(topic, [(0, 0, 1 << 20)])]))
    codes = error_codes(answer.SCHEMA, answer, [])
    assert codes == [TOPIC_DENIED], f"Fetch of {topic}: {codes}"
    assert b.alive()
