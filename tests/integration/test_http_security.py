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


RULES = "RULE:^CN=([^,]+),OU=eng,O=brokerd-tests$/$1/L,DEFAULT"


@pytest.fixture
def tls_node(broker_factory, tmp_path):
    from pki import Authority
    ca = Authority(tmp_path / "pki")
    other = Authority(tmp_path / "pki-other", name="other-ca")
    pki = {"ca": ca, "server": ca.issue("server", "127.0.0.1", server=True), "alice": ca.issue("alice", "Alice", ou="eng"),
           "untrusted": other.issue("mallory", "alice", ou="eng")}
    port = free_port()
    b = broker_factory({
        "http.listeners": f"https://127.0.0.1:{port}", "http.authentication": "mtls",
        "listener.name.https.ssl.keystore.location": str(pki["server"]["pem"]),
        "listener.name.https.ssl.truststore.location": str(ca.ca_file),
        "listener.name.https.ssl.client.auth": "requested",
        "listener.name.https.ssl.principal.mapping.rules": RULES,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS"})
    b.http_port = port
    b.pki = pki
    return b


def https_call(b, method, path, body=None, client=None):
    import ssl
    ctx = ssl.create_default_context(cafile=str(b.pki["ca"].ca_file))
    if client:
        ctx.load_cert_chain(str(b.pki[client]["cert"]), str(b.pki[client]["key"]))
    conn = http.client.HTTPSConnection("127.0.0.1", b.http_port, context=ctx, timeout=30)
    try:
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read()
        return resp.status, (json.loads(text) if text else None)
    finally:
        conn.close()


def test_https_with_client_certificates_names_the_principal(tls_node):
    b = tls_node
    ctl(b, "topics", "create", "sec-tls", "--partitions", "1")
    # No certificate: 401; a certificate from another authority: the handshake fails.
    status, body = https_call(b, "GET", "/v1/topics/sec-tls/metadata")
    assert status == 401 and body["error"] == "sasl_authentication_failed", body
    import ssl
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        https_call(b, "GET", "/v1/topics/sec-tls/metadata", client="untrusted")
    # alice's certificate maps to User:alice, whose ACLs decide.
    status, body = https_call(b, "POST", "/v1/topics/sec-tls/records", {"records": [{"value": "v"}]}, client="alice")
    assert status == 403 and body["error"] == "topic_authorization_failed", body
    ctl(b, "acls", "create", "--principal", "User:alice", "--topic", "sec-tls", "--operation", "WRITE")
    assert eventually(lambda: https_call(b, "POST", "/v1/topics/sec-tls/records", {"records": [{"value": "v"}]},
                                         client="alice")[0] == 200)
    # curl speaks to it too.
    out = subprocess.run(["curl", "-s", "--cacert", str(b.pki["ca"].ca_file), "--cert", str(b.pki["alice"]["cert"]),
                          "--key", str(b.pki["alice"]["key"]), "-XPOST", "-d", '{"records": [{"value": "c"}]}',
                          f"https://127.0.0.1:{b.http_port}/v1/topics/sec-tls/records"],
                         capture_output=True, text=True, timeout=30)
    assert json.loads(out.stdout)["offsets"][0]["offset"] >= 1, out.stdout


def test_positions_through_a_node_that_does_not_coordinate_keep_the_callers_acls(tmp_path):
    """The coordinator answers a node that forwards, not the caller: what the caller may not
    do is refused where it asked, and what it may not see is left out of the answer."""
    from cluster_harness import QuorumCluster
    from confluent_kafka import Consumer, TopicPartition
    ports = {i: free_port() for i in (1, 2, 3)}
    c = QuorumCluster(tmp_path, overrides={
        "http.authentication": "basic", "offsets.topic.replication.factor": "3",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS"}, per_node={i: {"http.listeners": f"http://127.0.0.1:{p}"} for i, p in ports.items()})
    try:
        c.start()
        b = c.nodes[1]
        proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", b.bootstrap, "users", "create", "alice",
                               "--mechanism", "SCRAM-SHA-256", "--password-stdin", "--iterations", "4096"],
                              input=USERS["alice"] + "\n", capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        for t in ("pos-a", "pos-b"):
            ctl(b, "topics", "create", t, "--partitions", "1", "--replication-factor", "3")
        ctl(b, "acls", "create", "--principal", "User:alice", "--group", "pos-g", "--operation", "READ")
        ctl(b, "acls", "create", "--principal", "User:alice", "--topic", "pos-a", "--operation", "READ")
        # An operator commits both topics for the group (Kafka, as the super user).
        k = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": "pos-g", "enable.auto.commit": False})
        k.commit(offsets=[TopicPartition("pos-a", 0, 1), TopicPartition("pos-b", 0, 1)], asynchronous=False)
        k.close()
        for node, port in ports.items():
            b.http_port = port
            assert eventually(lambda: call(b, "GET", "/v1/groups/pos-g/positions", user="alice")[0] == 200)
            status, body, _ = call(b, "GET", "/v1/groups/pos-g/positions", user="alice")
            assert [p["topic"] for p in body["positions"]] == ["pos-a"], (node, body)
            status, body, _ = call(b, "POST", "/v1/groups/pos-g/positions", {"positions": [
                {"topic": "pos-a", "partition": 0, "offset": 2}, {"topic": "pos-b", "partition": 0, "offset": 7}]},
                user="alice")
            assert status == 403 and body["error"] == "topic_authorization_failed", (node, body)
        k = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": "pos-g", "enable.auto.commit": False})
        committed = k.committed([TopicPartition("pos-b", 0)], timeout=15)
        k.close()
        assert committed[0].offset == 1, "a position the caller was refused was saved"
    finally:
        c.tear_down()


def test_connections_past_http_max_connections_are_closed_at_once_and_the_rest_serve(broker_factory):
    import socket
    from confluent_kafka.admin import AdminClient
    port = free_port()
    b = broker_factory({"http.listeners": f"http://127.0.0.1:{port}", "http.max.connections": 4})
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(4)]
    try:
        time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
            # Closed at accept, before it sends anything (sending first could meet a reset).
            assert extra.recv(4096) == b"", "a connection past http.max.connections was kept"
        # The ones held are served, and so are Kafka clients.
        held[0].sendall(b"GET /v1/topics/x/metadata HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b" 404 " in held[0].recv(4096).split(b"\r\n")[0]
        md = AdminClient({"bootstrap.servers": b.bootstrap}).list_topics(timeout=10)
        assert md.brokers
    finally:
        for s in held:
            s.close()
    # Once they are gone, new ones are taken again.
    b.http_port = port
    assert eventually(lambda: call(b, "GET", "/v1/topics/x/metadata")[0] == 404, timeout=10)
