"""The /v1 HTTP API with http.authentication=basic on a node with the StandardAuthorizer:
HTTP Basic against the SCRAM users of brokerctl (401 without valid credentials, never the
anonymous principal), the ACLs of the user (403), its client quota (429 with Retry-After)
and its tenant limits (403 policy_violation), exactly as a Kafka client of that user gets."""
import base64
import http.client
import json
import subprocess
import time

import pytest

from brokerd_harness import brokerctl_binary, free_port
from waiting import eventually

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


@pytest.fixture
def node(broker_factory):
    port = free_port()
    b = broker_factory({
        "http.listeners": f"http://127.0.0.1:{port}", "http.authentication": "basic",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS", "quota.window.num": 2, "quota.window.size.seconds": 1})
    b.http_port = port
    for user, password in USERS.items():
        proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", b.bootstrap, "users", "create", user,
                               "--mechanism", "SCRAM-SHA-256", "--password-stdin", "--iterations", "4096"],
                              input=password + "\n", capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    return b


def ctl(b, *args):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", b.bootstrap, *map(str, args)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def call(b, method, path, body=None, user=None, password=None, auth=None):
    conn = http.client.HTTPConnection("127.0.0.1", b.http_port, timeout=30)
    try:
        headers = {"Content-Type": "application/json"}
        if user is not None:
            token = base64.b64encode(f"{user}:{password if password is not None else USERS[user]}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        if auth is not None:
            headers["Authorization"] = auth
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
        resp = conn.getresponse()
        text = resp.read()
        return resp.status, (json.loads(text) if text else None), dict(resp.getheaders())
    finally:
        conn.close()


def test_requests_without_valid_credentials_get_401(node):
    ctl(node, "topics", "create", "sec-a", "--partitions", "1")
    for kwargs in ({}, {"user": "alice", "password": "wrong"}, {"user": "mallory", "password": "x"},
                   {"auth": "Basic !!!"}, {"auth": "Bearer abc"}, {"auth": "Basic " + base64.b64encode(b"nocolon").decode()}):
        status, body, headers = call(node, "GET", "/v1/topics/sec-a/metadata", **kwargs)
        assert status == 401, (kwargs, body)
        assert body["error"] == "sasl_authentication_failed"
        assert headers.get("WWW-Authenticate", "").startswith("Basic")
    status, body, _ = call(node, "GET", "/v1/topics/sec-a/metadata", user="alice")
    assert status == 403 and body["error"] == "topic_authorization_failed", body


def test_acls_of_the_user_apply(node):
    ctl(node, "topics", "create", "sec-b", "--partitions", "1")
    record = {"records": [{"key": "k", "value": "v"}]}
    status, body, _ = call(node, "POST", "/v1/topics/sec-b/records", record, user="alice")
    assert status == 403, body
    ctl(node, "acls", "create", "--principal", "User:alice", "--topic", "sec-b", "--operation", "WRITE")
    assert eventually(lambda: call(node, "POST", "/v1/topics/sec-b/records", record, user="alice")[0] == 200)
    # Writing is not reading.
    status, body, _ = call(node, "GET", "/v1/topics/sec-b/partitions/0/records", user="alice")
    assert status == 403 and body["error"] == "topic_authorization_failed", body
    ctl(node, "acls", "create", "--principal", "User:alice", "--topic", "sec-b", "--operation", "READ")
    assert eventually(lambda: call(node, "GET", "/v1/topics/sec-b/partitions/0/records", user="alice")[0] == 200)
    status, body, _ = call(node, "GET", "/v1/topics/sec-b/partitions/0/records", user="alice")
    assert [r["value"] for r in body["records"]] == ["v"]
    # bob has nothing; a group needs its own ACL.
    status, body, _ = call(node, "GET", "/v1/topics/sec-b/partitions/0/records", user="bob")
    assert status == 403, body
    status, body, _ = call(node, "POST", "/v1/groups/sec-g/positions",
                           {"positions": [{"topic": "sec-b", "partition": 0, "offset": 1}]}, user="alice")
    assert status == 403 and body["error"] == "group_authorization_failed", body
    ctl(node, "acls", "create", "--principal", "User:alice", "--group", "sec-g", "--operation", "READ")
    assert eventually(lambda: call(node, "POST", "/v1/groups/sec-g/positions",
                                   {"positions": [{"topic": "sec-b", "partition": 0, "offset": 1}]}, user="alice")[0] == 200)
    status, body, _ = call(node, "GET", "/v1/groups/sec-g/positions", user="alice")
    assert status == 200 and body["positions"][0]["offset"] == 1, body
    # Creating topics needs CREATE.
    status, body, _ = call(node, "POST", "/v1/topics", {"name": "sec-new", "partitions": 1, "copies": 1}, user="bob")
    assert status == 403, body


def test_a_user_over_its_quota_gets_429_with_retry_after(node):
    ctl(node, "topics", "create", "sec-q", "--partitions", "1")
    ctl(node, "acls", "create", "--principal", "User:alice", "--topic", "sec-q", "--operation", "WRITE")
    ctl(node, "quotas", "alter", "--user", "alice", "--set", "producer_byte_rate=2000")
    big = {"records": [{"value": "x" * 1000} for _ in range(50)]}
    deadline = time.monotonic() + 30
    statuses = []
    while time.monotonic() < deadline:
        status, body, headers = call(node, "POST", "/v1/topics/sec-q/records", big, user="alice")
        statuses.append(status)
        if status == 429:
            assert body["error"] == "throttling_quota_exceeded", body
            assert int(headers["Retry-After"]) >= 1
            break
        assert status == 200, body
    assert statuses[-1] == 429, statuses
    # bob, without a quota, is not slowed by alice's.
    ctl(node, "acls", "create", "--principal", "User:bob", "--topic", "sec-q", "--operation", "WRITE")
    assert eventually(lambda: call(node, "POST", "/v1/topics/sec-q/records", big, user="bob")[0] == 200)


def test_tenant_limits_give_403_policy_violation(node):
    ctl(node, "acls", "create", "--principal", "User:bob", "--cluster", "--operation", "CREATE")
    ctl(node, "--output", "json", "tenants", "alter", "--principal", "User:bob", "--set", "max.topics=1")
    assert eventually(lambda: call(node, "POST", "/v1/topics", {"name": "bob-1", "partitions": 1, "copies": 1},
                                   user="bob")[0] == 201)
    status, body, _ = call(node, "POST", "/v1/topics", {"name": "bob-2", "partitions": 1, "copies": 1}, user="bob")
    assert status == 403 and body["error"] == "policy_violation", body
