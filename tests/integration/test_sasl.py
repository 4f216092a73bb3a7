"""SASL on a SASL_PLAINTEXT listener, with real clients: PLAIN against the listener's JAAS users,
SCRAM-SHA-256/512 against credentials made with brokerctl (AlterUserScramCredentials), through
librdkafka, kafka-python and KafkaJS; wrong passwords refused; nothing but ApiVersions and SASL
served before authentication; re-authentication (KIP-368)."""
import json
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

import kafka_wire as kw
from brokerd_harness import brokerctl_binary, free_port
from clients import create_topic

JS_DIR = Path(__file__).resolve().parent / "js"
USERS = {"alice": "alice-secret", "admin": "admin-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


@pytest.fixture
def sasl_broker(broker_factory):
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    })
    b.start()
    b.sasl_port = sasl_port
    b.sasl_bootstrap = f"127.0.0.1:{sasl_port}"
    return b


def brokerctl(broker, *args, stdin=None, config=None):
    cmd = [brokerctl_binary(), "--bootstrap-server", broker.bootstrap, "--output", "json"]
    if config:
        cmd = [brokerctl_binary(), "--bootstrap-server", broker.sasl_bootstrap, "--command-config", str(config),
               "--output", "json"]
    proc = subprocess.run(cmd + list(args), input=stdin, capture_output=True, text=True, timeout=60)
    return proc


def sasl_conf(broker, mechanism, user, password):
    return {"bootstrap.servers": broker.sasl_bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}


def produce_and_read(broker, mechanism, user, password, topic, count=20):
    """Produces `count` records over SASL with librdkafka and reads them back the same way."""
    conf = sasl_conf(broker, mechanism, user, password)
    errors = []
    p = Producer({**conf, "acks": "all", "message.timeout.ms": 20000,
                  "error_cb": lambda e: errors.append(e)})
    delivered = []
    for i in range(count):
        p.produce(topic, key=f"k{i}".encode(), value=f"{mechanism}-{i}".encode(),
                  on_delivery=lambda err, m: delivered.append(err))
    assert p.flush(30) == 0, f"not delivered; client errors: {errors}"
    assert delivered == [None] * count, delivered
    c = Consumer({**conf, "group.id": f"sasl-{mechanism}-{user}", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        got = []
        deadline = time.monotonic() + 30
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value().decode())
        assert got == [f"{mechanism}-{i}" for i in range(count)]
    finally:
        c.close()


def authentication_refused(broker, mechanism, user, password):
    """True when librdkafka reports an authentication error within 15 s."""
    errors = []
    p = Producer({**sasl_conf(broker, mechanism, user, password), "error_cb": lambda e: errors.append(e)})
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not any(e.code() == KafkaError._AUTHENTICATION for e in errors):
        p.poll(0.2)
    return any(e.code() == KafkaError._AUTHENTICATION for e in errors)


def create_user(broker, user, password, mechanism="SCRAM-SHA-256", iterations=4096):
    proc = brokerctl(broker, "users", "create", user, "--mechanism", mechanism, "--password-stdin",
                     "--iterations", str(iterations), stdin=password + "\n")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_plain_produce_consume_and_metadata_names_the_sasl_listener(sasl_broker):
    create_topic(sasl_broker.bootstrap, "plain-topic")
    produce_and_read(sasl_broker, "PLAIN", "alice", "alice-secret", "plain-topic")
    # Metadata asked on the SASL listener names the brokers by their SASL endpoint.
    a = AdminClient(sasl_conf(sasl_broker, "PLAIN", "admin", "admin-secret"))
    md = a.list_topics(timeout=10)
    assert {(b.host, b.port) for b in md.brokers.values()} == {("127.0.0.1", sasl_broker.sasl_port)}
    plain = AdminClient({"bootstrap.servers": sasl_broker.bootstrap}).list_topics(timeout=10)
    assert {(b.host, b.port) for b in plain.brokers.values()} == {("127.0.0.1", sasl_broker.port)}


def test_plain_wrong_password_and_unknown_user_are_refused(sasl_broker):
    assert authentication_refused(sasl_broker, "PLAIN", "alice", "wrong")
    assert authentication_refused(sasl_broker, "PLAIN", "mallory", "alice-secret")
    assert "authentication of" in sasl_broker.log_text() and "Invalid username or password" in sasl_broker.log_text()
    assert sasl_broker.alive()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_users_made_with_brokerctl(sasl_broker, tmp_path, mechanism):
    out = create_user(sasl_broker, "bob", "bob-secret", mechanism)
    assert out["user"] == "bob"
    listed = json.loads(brokerctl(sasl_broker, "users", "list").stdout)
    assert {"user": "bob", "mechanism": mechanism, "iterations": 4096} in listed
    create_topic(sasl_broker.bootstrap, "scram-topic")
    produce_and_read(sasl_broker, mechanism, "bob", "bob-secret", "scram-topic")
    assert authentication_refused(sasl_broker, mechanism, "bob", "not-bobs")
    # brokerctl itself authenticates with a --command-config file.
    config = tmp_path / "client.properties"
    config.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n"
                      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                      'username="bob" password="bob-secret";\n')
    proc = brokerctl(sasl_broker, "topics", "list", config=config)
    assert proc.returncode == 0 and "scram-topic" in proc.stdout, proc.stderr
    config.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n"
                      "sasl.username=bob\nsasl.password=wrong\n")
    proc = brokerctl(sasl_broker, "topics", "list", config=config)
    assert proc.returncode == 1 and "SASL_AUTHENTICATION_FAILED" in proc.stderr, proc.stderr
    # Deleted: the credential no longer authenticates, on any new connection.
    proc = brokerctl(sasl_broker, "users", "delete", "bob", "--mechanism", mechanism)
    assert proc.returncode == 0, proc.stderr
    assert authentication_refused(sasl_broker, mechanism, "bob", "bob-secret")
    proc = brokerctl(sasl_broker, "users", "delete", "bob", "--mechanism", mechanism)
    assert proc.returncode == 1 and "RESOURCE_NOT_FOUND" in proc.stderr


def test_scram_credentials_survive_a_restart(sasl_broker):
    create_user(sasl_broker, "carol", "carol-secret", "SCRAM-SHA-512", iterations=8192)
    sasl_broker.stop()
    sasl_broker.start()
    create_topic(sasl_broker.bootstrap, "restart-topic")
    produce_and_read(sasl_broker, "SCRAM-SHA-512", "carol", "carol-secret", "restart-topic", count=5)


def test_kafka_python_plain_and_scram(sasl_broker):
    from kafka import KafkaConsumer, KafkaProducer
    create_user(sasl_broker, "dave", "dave-secret", "SCRAM-SHA-256")
    create_topic(sasl_broker.bootstrap, "kp-topic")
    for mechanism, user, password in (("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-256", "dave", "dave-secret")):
        conf = dict(bootstrap_servers=sasl_broker.sasl_bootstrap, security_protocol="SASL_PLAINTEXT",
                    sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)
        p = KafkaProducer(acks="all", **conf)
        for i in range(5):
            p.send("kp-topic", key=b"k", value=f"{mechanism}-{i}".encode()).get(timeout=20)
        p.close()
        c = KafkaConsumer("kp-topic", auto_offset_reset="earliest", consumer_timeout_ms=5000,
                          group_id=f"kp-{mechanism}", **conf)
        values = [m.value.decode() for m in c]
        c.close()
        assert [v for v in values if v.startswith(mechanism)] == [f"{mechanism}-{i}" for i in range(5)]


@pytest.mark.parametrize("mechanism", ["plain", "scram-sha-512"])
def test_kafkajs(sasl_broker, node, mechanism):
    create_user(sasl_broker, "erin", "erin-secret", "SCRAM-SHA-512")
    user, password = ("alice", "alice-secret") if mechanism == "plain" else ("erin", "erin-secret")
    topic = f"js-{mechanism}"
    create_topic(sasl_broker.bootstrap, topic)
    proc = subprocess.run([node, str(JS_DIR / "sasl_client.js"), sasl_broker.sasl_bootstrap, mechanism, user,
                           password, topic, "10"], cwd=JS_DIR, capture_output=True, timeout=90, text=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, out
    assert sorted(out["consumed"]) == sorted(f"js-sasl-{i}" for i in range(10))
    bad = subprocess.run([node, str(JS_DIR / "sasl_client.js"), sasl_broker.sasl_bootstrap, mechanism, user,
                          "wrong", topic, "1"], cwd=JS_DIR, capture_output=True, timeout=90, text=True)
    assert bad.returncode == 1 and "SASL" in bad.stdout, bad.stdout


sasl_handshake = kw.sasl_handshake
sasl_authenticate = kw.sasl_authenticate


def scram_server_first(broker, mechanism, user):
    """The server-first message's salt and iteration count for a raw client-first message
    naming `user` (the exchange is then abandoned)."""
    with kw.Connection(broker.sasl_port) as c:
        assert sasl_handshake(c, mechanism)[0] == 0
        error, message, reply, _ = sasl_authenticate(c, f"n,,n={user},r=clientnonce".encode())
        assert error == 0, message
    fields = dict(part.split("=", 1) for part in reply.decode().split(","))
    return fields["s"], int(fields["i"])


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_an_unknown_scram_user_is_answered_like_a_known_one(sasl_broker, mechanism):
    """No user enumeration: the server-first message for a user with no credential has the
    iteration count real users get by default and a salt that stays the same across
    exchanges and restarts, as a real user's does."""
    create_user(sasl_broker, "frank", "frank-secret", mechanism, iterations=8192)
    real_salt, real_iterations = scram_server_first(sasl_broker, mechanism, "frank")
    salt, iterations = scram_server_first(sasl_broker, mechanism, "nobody")
    assert iterations == real_iterations == 8192
    assert len(salt) == len(real_salt) and salt != real_salt
    assert scram_server_first(sasl_broker, mechanism, "nobody") == (salt, iterations)
    sasl_broker.stop()
    sasl_broker.start()
    assert scram_server_first(sasl_broker, mechanism, "frank") == (real_salt, real_iterations)
    assert scram_server_first(sasl_broker, mechanism, "nobody") == (salt, iterations)
    assert authentication_refused(sasl_broker, mechanism, "nobody", "guess")


def metadata_v1(conn):
    return conn.request(3, 1, kw.i32(-1))


def test_nothing_is_served_before_authentication(sasl_broker):
    # ApiVersions is, and says which SASL versions are served.
    with kw.Connection(sasl_broker.sasl_port) as c:
        _, versions = kw.api_versions(c)
        assert versions[17] == (0, 1) and versions[36] == (0, 2)
        c.send(3, 1, kw.i32(-1))  # Metadata: the connection is closed instead
        assert c.closed_by_peer()
    # An unknown mechanism: refused with the list of offered ones, then closed.
    with kw.Connection(sasl_broker.sasl_port) as c:
        error, mechanisms = sasl_handshake(c, "GSSAPI")
        assert error == 33 and mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        assert c.closed_by_peer()
    # SaslAuthenticate before a handshake: ILLEGAL_SASL_STATE, closed.
    with kw.Connection(sasl_broker.sasl_port) as c:
        error, *_ = sasl_authenticate(c, b"\0alice\0alice-secret")
        assert error == 34
        assert c.closed_by_peer()
    # A wrong password: SASL_AUTHENTICATION_FAILED with a message, closed.
    with kw.Connection(sasl_broker.sasl_port) as c:
        assert sasl_handshake(c, "PLAIN")[0] == 0
        error, message, _, _ = sasl_authenticate(c, b"\0alice\0nope")
        assert error == 58 and "Invalid username or password" in message
        assert c.closed_by_peer()
    # A frame far above sasl.server.max.receive.size before authenticating: closed unread.
    with kw.Connection(sasl_broker.sasl_port) as c:
        c.send_raw(struct.pack(">i", 50 * 1024 * 1024) + b"\0" * 64)
        assert c.closed_by_peer()
    # The right password: served from then on.
    with kw.Connection(sasl_broker.sasl_port) as c:
        assert sasl_handshake(c, "PLAIN")[0] == 0
        error, _, _, lifetime = sasl_authenticate(c, b"\0alice\0alice-secret")
        assert error == 0 and lifetime == 0
        metadata_v1(c)  # answered
    assert sasl_broker.alive()


def test_guesses_pipelined_behind_a_refused_one_are_not_served(sasl_broker):
    """A refused exchange ends the connection's session: a right password pipelined behind a
    wrong one does not authenticate, and nothing queued behind it is served."""
    with kw.Connection(sasl_broker.sasl_port) as c:
        assert sasl_handshake(c, "PLAIN")[0] == 0
        frames = b""
        for token in (b"\0alice\0wrong", b"\0alice\0alice-secret"):
            body = c.header(36, 1) + kw.nbytes(token)
            frames += struct.pack(">i", len(body)) + body
        # CreateTopics v2: [name, partitions, replication factor, no assignments, no configs],
        # timeout, validate_only. Its side effect shows whether it was served.
        create = (c.header(19, 2, correlation=4242) + kw.i32(1) + kw.string("guessed") + kw.i32(1) + kw.i16(1)
                  + kw.i32(0) + kw.i32(0) + kw.i32(10000) + b"\0")
        frames += struct.pack(">i", len(create)) + create
        c.send_raw(frames)
        first = kw.Reader(c.recv_frame())
        first.i32()
        assert first.i16() == 58  # SASL_AUTHENTICATION_FAILED
        answered = []
        try:
            while True:
                r = kw.Reader(c.recv_frame())
                answered.append(r.i32())
        except Exception:
            pass  # closed
        assert 4242 not in answered, answered
    time.sleep(0.5)
    md = AdminClient({"bootstrap.servers": sasl_broker.bootstrap}).list_topics(timeout=10)
    assert "guessed" not in md.topics
    assert sasl_broker.alive()


def test_sessions_end_and_clients_reauthenticate(broker_factory):
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "connections.max.reauth.ms": 1500,
    })
    b.start()
    b.sasl_port, b.sasl_bootstrap = sasl_port, f"127.0.0.1:{sasl_port}"
    # A raw client that does not re-authenticate is closed at its first request after the end.
    with kw.Connection(sasl_port) as c:
        assert sasl_handshake(c, "PLAIN")[0] == 0
        error, _, _, lifetime = sasl_authenticate(c, b"\0alice\0alice-secret")
        assert error == 0 and lifetime == 1500
        metadata_v1(c)
        time.sleep(2.0)
        c.send(3, 1, kw.i32(-1))
        assert c.closed_by_peer()
    # One that re-authenticates on the same connection keeps being served.
    with kw.Connection(sasl_port) as c:
        assert sasl_handshake(c, "PLAIN")[0] == 0
        assert sasl_authenticate(c, b"\0alice\0alice-secret")[0] == 0
        time.sleep(1.0)
        assert sasl_handshake(c, "PLAIN")[0] == 0
        assert sasl_authenticate(c, b"\0alice\0alice-secret")[0] == 0
        time.sleep(1.0)
        metadata_v1(c)  # 2 s after the first authentication, within the renewed session
    # Re-authenticating as someone else is refused.
    with kw.Connection(sasl_port) as c:
        assert sasl_handshake(c, "PLAIN")[0] == 0
        assert sasl_authenticate(c, b"\0alice\0alice-secret")[0] == 0
        assert sasl_handshake(c, "PLAIN")[0] == 0
        assert sasl_authenticate(c, b"\0admin\0admin-secret")[0] == 58
        assert c.closed_by_peer()
    # A client without KIP-368 (Debian's librdkafka 2.0) is cut when its session ends, reconnects,
    # authenticates afresh, and none of its deliveries fails.
    create_topic(b.bootstrap, "reauth")
    p = Producer({**sasl_conf(b, "PLAIN", "alice", "alice-secret"), "acks": "all"})
    delivered = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        p.produce("reauth", value=b"x", on_delivery=lambda err, m: delivered.append(err))
        p.poll(0.1)
    assert p.flush(20) == 0
    assert delivered and all(e is None for e in delivered), delivered[:5]
    cut_before = b.log_text().count("after its session ended")
    assert cut_before >= 2


def test_kafkajs_reauthenticates_on_its_connections(broker_factory, node):
    """A client with KIP-368 (KafkaJS) renews its session on the same connection: with 2 s
    sessions, 5 s of produce on one producer are never cut."""
    sasl_port = free_port()
    b = broker_factory(start=False)
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "connections.max.reauth.ms": 2000,
    })
    b.start()
    create_topic(b.bootstrap, "js-reauth")
    proc = subprocess.run([node, str(JS_DIR / "reauth_client.js"), f"127.0.0.1:{sasl_port}", "alice", "alice-secret",
                           "js-reauth", "5"], cwd=JS_DIR, capture_output=True, timeout=90, text=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, out
    assert out["sent"] >= 15
    assert "after its session ended" not in b.log_text()
