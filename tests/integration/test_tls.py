"""TLS listeners with real clients: one-way TLS (librdkafka, kafka-python, KafkaJS), mutual
TLS with the principal taken from the client certificate through ssl.principal.mapping.rules
(and authorized by ACLs), SASL_SSL; refused: untrusted and expired client certificates, a
client that does not trust the server, a plaintext client on a TLS port, a handshake that
never finishes (closed after ssl.handshake.timeout.ms, memory flat). A renewed certificate
is served without a restart."""
import json
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient

from brokerd_harness import brokerctl_binary, free_port, rss_kib, sanitized
import clients
from clients import create_topic, read_all
from cluster_harness import QuorumCluster
from keyed_workload import KeyedWriter, check_read_back
from waiting import eventually
from pki import Authority

JS_DIR = Path(__file__).resolve().parent / "js"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret";')
RULES = "RULE:^CN=([^,]+),OU=eng,O=brokerd-tests$/$1/L,DEFAULT"


@pytest.fixture
def pki(tmp_path):
    ca = Authority(tmp_path / "pki")
    other = Authority(tmp_path / "pki-other", name="other-ca")
    return {
        "ca": ca,
        "server": ca.issue("server", "127.0.0.1", server=True),
        "alice": ca.issue("alice", "Alice", ou="eng"),
        "bob": ca.issue("bob", "bob", ou="sales"),
        "expired": ca.issue("expired", "alice", ou="eng", expired=True),
        "untrusted": other.issue("mallory", "alice", ou="eng"),
        "other": other,
    }


@pytest.fixture
def tls_broker(broker_factory, pki):
    """PLAINTEXT for the operator (a super user), SSL (one-way), MTLS (SSL, client
    certificates required) and SASL_SSL (PLAIN)."""
    b = broker_factory(start=False)
    ports = {}
    for name in ("SSL", "MTLS", "SASL_SSL"):
        while (port := free_port()) in set(ports.values()) | {b.port}:
            pass
        ports[name] = port
    b.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{b.port}," + ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
        "ssl.keystore.location": str(pki["server"]["pem"]),
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.truststore.location": str(pki["ca"].ca_file),
        "listener.name.mtls.ssl.principal.mapping.rules": RULES,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.handshake.timeout.ms": "1500",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
    })
    b.start()
    b.tls = {n: f"127.0.0.1:{p}" for n, p in ports.items()}
    b.tls_ports = ports
    return b


def ssl_conf(broker, pki, listener="SSL", client=None, ca=None):
    conf = {"bootstrap.servers": broker.tls[listener], "security.protocol": "SSL",
            "ssl.ca.location": str(ca or pki["ca"].ca_file)}
    if client:
        conf.update({"ssl.certificate.location": str(pki[client]["cert"]),
                     "ssl.key.location": str(pki[client]["key"])})
    return conf


def produce(conf, topic, count=1, value=b"v", timeout=15):
    """Delivery errors of `count` records (None for each delivered) and the client errors."""
    errors, results = [], []
    p = Producer({**conf, "acks": "all", "message.timeout.ms": timeout * 1000, "enable.idempotence": False,
                  "error_cb": lambda e: errors.append(e)})
    for i in range(count):
        p.produce(topic, key=str(i).encode(), value=value, on_delivery=lambda err, m: results.append(err))
    p.flush(timeout + 5)
    return results, errors


def ctl(broker, *args):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", broker.bootstrap, "--output", "json", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


API_VERSIONS_V0 = b"\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x01\xff\xff"


def handshake_fails(port, context):
    """True when the broker refuses a client using `context`: it ends the handshake, or (TLS
    1.3, where the server judges the client's certificate after the client is done) closes
    the connection instead of answering an ApiVersions request."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        try:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(API_VERSIONS_V0)
                return len(s.recv(4)) < 4
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
            return True


def client_context(pki, client=None):
    ctx = ssl.create_default_context(cafile=str(pki["ca"].ca_file))
    if client:
        ctx.load_cert_chain(str(pki[client]["cert"]), str(pki[client]["key"]))
    return ctx


def test_librdkafka_over_one_way_tls(tls_broker, pki):
    create_topic(tls_broker.bootstrap, "tls-rd", 2)
    value = bytes(range(256)) * 256  # 64 KiB records: fetches read and encrypt file ranges
    results, errors = produce(ssl_conf(tls_broker, pki), "tls-rd", count=200, value=value)
    assert results == [None] * 200, (results[:3], errors[:3])
    got = read_all(tls_broker.tls["SSL"], "tls-rd", 2, **{k: v for k, v in ssl_conf(tls_broker, pki).items()
                                                          if k != "bootstrap.servers"})
    assert sum(len(v) for v in got.values()) == 200
    assert all(m.value() == value for msgs in got.values() for m in msgs)


def test_kafka_python_over_one_way_tls(tls_broker, pki):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    create_topic(tls_broker.bootstrap, "tls-kp")
    p = KafkaProducer(bootstrap_servers=tls_broker.tls["SSL"], security_protocol="SSL",
                      ssl_cafile=str(pki["ca"].ca_file), acks="all")
    for i in range(50):
        p.send("tls-kp", key=b"k", value=f"kp-{i}".encode())
    p.flush(30)
    p.close()
    c = KafkaConsumer(bootstrap_servers=tls_broker.tls["SSL"], security_protocol="SSL",
                      ssl_cafile=str(pki["ca"].ca_file), consumer_timeout_ms=10000, auto_offset_reset="earliest")
    c.assign([TopicPartition("tls-kp", 0)])
    seen = [m.value.decode() for m in c]
    c.close()
    assert seen == [f"kp-{i}" for i in range(50)]


def test_kafkajs_over_tls_and_sasl_ssl(tls_broker, pki, node):
    create_topic(tls_broker.bootstrap, "tls-js")
    ctl(tls_broker, "acls", "create", "--principal", "User:alice", "--topic", "tls-js", "--operation", "WRITE",
        "--operation", "READ")
    for group in ("js-sasl-plain", "js-sasl-none"):
        ctl(tls_broker, "acls", "create", "--principal", "User:alice", "--group", group, "--operation", "READ")
    env = {"PATH": "/usr/bin:/bin", "BROKERD_TLS_CA": str(pki["ca"].ca_file)}
    # Mutual TLS: alice's certificate maps to User:alice, whose ACLs allow the topic and group.
    mutual = {**env, "BROKERD_TLS_CERT": str(pki["alice"]["cert"]), "BROKERD_TLS_KEY": str(pki["alice"]["key"])}
    for listener, mechanism, user, password, environment in (("SSL", "none", "", "", env),
                                                             ("SASL_SSL", "plain", "alice", "alice-secret", env),
                                                             ("MTLS", "none", "", "", mutual)):
        proc = subprocess.run([node, str(JS_DIR / "sasl_client.js"), tls_broker.tls[listener], mechanism, user,
                               password, "tls-js", "10"], cwd=JS_DIR, capture_output=True, timeout=90, text=True,
                              env=environment)
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert proc.returncode == 0, (listener, out, proc.stderr[-2000:])
        assert len(out["consumed"]) >= 10


def test_mutual_tls_names_the_principal_from_the_certificate(tls_broker, pki):
    create_topic(tls_broker.bootstrap, "team-eng")
    # The rule maps CN=Alice,OU=eng,O=brokerd-tests to "alice"; bob's subject stays whole.
    ctl(tls_broker, "acls", "create", "--principal", "User:alice", "--topic", "team-eng", "--operation", "WRITE")
    results, errors = produce(ssl_conf(tls_broker, pki, "MTLS", client="alice"), "team-eng")
    assert results == [None], (results, errors)
    results, _ = produce(ssl_conf(tls_broker, pki, "MTLS", client="bob"), "team-eng")
    assert results and results[0] is not None and results[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    ctl(tls_broker, "acls", "create", "--principal", "User:CN=bob,OU=sales,O=brokerd-tests", "--topic", "team-eng",
        "--operation", "WRITE")
    results, errors = produce(ssl_conf(tls_broker, pki, "MTLS", client="bob"), "team-eng")
    assert results == [None], (results, errors)


def test_mutual_tls_principal_is_written_as_java_writes_it(tls_broker, pki):
    """An attribute outside Java's RFC 2253 keywords (emailAddress) is named by its OID with
    the hex of its DER value (IA5String, 14 bytes), and '=' in a value is escaped, so an ACL
    written for Kafka's principal matches."""
    pki["ca"].issue("mailer", "team=ops", ou="ops", email="alice@corp.com")
    conf = ssl_conf(tls_broker, pki, "MTLS")
    conf.update({"ssl.certificate.location": str(pki["ca"].dir / "mailer.crt"),
                 "ssl.key.location": str(pki["ca"].dir / "mailer.key")})
    create_topic(tls_broker.bootstrap, "team-ops")
    kafka_principal = (r"User:1.2.840.113549.1.9.1=#160e616c69636540636f72702e636f6d,"
                       r"CN=team\=ops,OU=ops,O=brokerd-tests")
    ctl(tls_broker, "acls", "create", "--principal", kafka_principal, "--topic", "team-ops", "--operation", "WRITE")
    results, errors = produce(conf, "team-ops")
    assert results == [None], (results, errors)


def test_bad_client_certificates_are_refused(tls_broker, pki):
    port = tls_broker.tls_ports["MTLS"]
    assert not handshake_fails(port, client_context(pki, "alice"))
    assert handshake_fails(port, client_context(pki))  # none sent, one required
    for bad in ("untrusted", "expired"):
        assert handshake_fails(port, client_context(pki, bad)), bad
        results, _ = produce(ssl_conf(tls_broker, pki, "MTLS", client=bad), "refused", timeout=5)
        assert results and results[0] is not None, bad
    assert "TLS handshake failed" in tls_broker.log_text()
    # The one-way listener asks for no certificate and serves a client that sends one.
    assert not handshake_fails(tls_broker.tls_ports["SSL"], client_context(pki, "untrusted"))


def test_a_client_that_does_not_trust_the_server_fails_alone(tls_broker, pki):
    create_topic(tls_broker.bootstrap, "trust")
    results, errors = produce(ssl_conf(tls_broker, pki, ca=pki["other"].ca_file), "trust", timeout=5)
    assert results and results[0] is not None
    assert any("certificate verify failed" in str(e) or "SSL handshake failed" in str(e) for e in errors), errors[:3]
    results, errors = produce(ssl_conf(tls_broker, pki), "trust")
    assert results == [None], (results, errors)


def stall(port, n):
    """`n` connections that never finish a handshake (half send nothing, half the start of a
    ClientHello); returns once the broker has closed every one (at most 15 s)."""
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(n)]
    for i, s in enumerate(stalled):
        if i % 2:
            s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    deadline = time.monotonic() + 15
    for s in stalled:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            assert s.recv(1024)[:1] in (b"", b"\x15")  # closed, perhaps after a TLS alert
        except ConnectionResetError:
            pass
        s.close()
    assert time.monotonic() < deadline, "stalled handshakes outlived their bound"


def test_plaintext_client_on_a_tls_port_and_a_stalled_handshake_are_cut(tls_broker, pki):
    port = tls_broker.tls_ports["SSL"]
    # A Kafka request where a ClientHello belongs.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"\x00\x00\x00\x0c\x00\x12\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00")
        s.settimeout(10)
        try:
            assert s.recv(1024)[:1] in (b"", b"\x15")  # closed, perhaps after a TLS alert
        except ConnectionResetError:
            pass
    # Connections that never start (or never finish) their handshake are closed after the bound,
    # and what they held is given back: the resident size levels off (the allocator keeps
    # some of the first rounds' memory; measured over 14 rounds of 200: +9.1, +3.6, +1.8,
    # +0.9, +0.4 MiB, then under 0.3 each) instead of growing with every connection made.
    sizes = []
    for _ in range(6):
        stall(port, 200)
        sizes.append(rss_kib(tls_broker.pid))
    print(f"RSS after each round of 200 stalled handshakes: {sizes} KiB")
    if not sanitized(tls_broker.pid):
        assert sizes[5] - sizes[3] < 6 * 1024, sizes
    assert "no TLS handshake within 1500 ms" in tls_broker.log_text()
    create_topic(tls_broker.bootstrap, "after2")
    results, errors = produce(ssl_conf(tls_broker, pki), "after2")
    assert results == [None], (results, errors)


def test_sasl_ssl_authenticates_over_tls(tls_broker, pki):
    create_topic(tls_broker.bootstrap, "sasl-tls")
    ctl(tls_broker, "acls", "create", "--principal", "User:alice", "--topic", "sasl-tls", "--operation", "WRITE")
    base = {"bootstrap.servers": tls_broker.tls["SASL_SSL"], "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(pki["ca"].ca_file), "sasl.mechanism": "PLAIN", "sasl.username": "alice"}
    results, errors = produce({**base, "sasl.password": "alice-secret"}, "sasl-tls")
    assert results == [None], (results, errors)
    results, errors = produce({**base, "sasl.password": "wrong"}, "sasl-tls", timeout=5)
    assert results and results[0] is not None
    assert any("Authentication failed" in str(e) or "SASL" in str(e) for e in errors), errors[:3]


def test_a_renewed_certificate_is_served_without_a_restart(tls_broker, pki):
    port = tls_broker.tls_ports["SSL"]

    def served_serial():
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with client_context(pki).wrap_socket(raw, server_hostname="127.0.0.1") as s:
                from cryptography import x509
                return x509.load_der_x509_certificate(s.getpeercert(binary_form=True)).serial_number

    assert served_serial() == pki["server"]["serial"]
    renewed = pki["ca"].issue("server-renewed", "127.0.0.1", server=True)
    tmp = Path(str(pki["server"]["pem"]) + ".new")
    tmp.write_bytes(renewed["pem"].read_bytes())
    tmp.rename(pki["server"]["pem"])  # as certificate tooling replaces files
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and served_serial() != renewed["serial"]:
        time.sleep(0.3)
    assert served_serial() == renewed["serial"]
    assert "read again" in tls_broker.log_text()
    create_topic(tls_broker.bootstrap, "renewed2")  # still a working listener
    assert produce(ssl_conf(tls_broker, pki), "renewed2")[0] == [None]


def test_a_listener_without_a_key_refuses_to_start(broker_factory, pki, tmp_path):
    b = broker_factory(start=False)
    b.overrides.update({"listeners": f"PLAINTEXT://127.0.0.1:{b.port},SSL://127.0.0.1:{free_port()}"})
    b.start(wait=False)
    assert b.proc.wait(timeout=30) != 0
    assert "ssl.keystore.location" in b.log_text()
    b2 = broker_factory(start=False)
    b2.overrides.update({"listeners": f"PLAINTEXT://127.0.0.1:{b2.port},SSL://127.0.0.1:{free_port()}",
                         "ssl.keystore.location": str(pki["server"]["pem"]),
                         "ssl.client.auth": "required"})
    b2.start(wait=False)
    assert b2.proc.wait(timeout=30) != 0
    assert "trust store" in b2.log_text()


def test_a_certificate_signed_with_sha1_is_refused_with_openssl_reason(broker_factory, pki, tmp_path):
    """OpenSSL 3 at security level 2 (Debian's default) refuses a certificate whose signature
    uses SHA-1; the line that stops the node says why."""
    from cryptography.hazmat.primitives import hashes
    weak = pki["ca"].issue("weak", "127.0.0.1", server=True, digest=hashes.SHA1())
    b = broker_factory(start=False)
    b.overrides.update({"listeners": f"PLAINTEXT://127.0.0.1:{b.port},SSL://127.0.0.1:{free_port()}",
                        "ssl.keystore.location": str(weak["pem"])})
    b.start(wait=False)
    assert b.proc.wait(timeout=30) != 0
    log = b.log_text()
    assert "ssl.keystore.location" in log and "md too weak" in log, log[-2000:]
    assert "no reason given" not in log


def test_brokerctl_speaks_tls(tls_broker, pki, tmp_path):
    create_topic(tls_broker.bootstrap, "ctl-tls")

    def run(listener, props):
        config = tmp_path / f"{listener}.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return subprocess.run([brokerctl_binary(), "--bootstrap-server", tls_broker.tls[listener], "--command-config",
                               str(config), "--output", "json", "topics", "list"], capture_output=True, text=True,
                              timeout=60)

    ok = run("SSL", {"security.protocol": "SSL", "ssl.ca.location": pki["ca"].ca_file})
    assert ok.returncode == 0 and "ctl-tls" in ok.stdout, ok.stderr
    # Kafka's Java names, mutual TLS with the key and chain in one PEM file.
    ok = run("MTLS", {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
                      "ssl.truststore.location": pki["ca"].ca_file, "ssl.keystore.type": "PEM",
                      "ssl.keystore.location": pki["alice"]["pem"]})
    assert ok.returncode == 0, ok.stderr
    ok = run("SASL_SSL", {"security.protocol": "SASL_SSL", "ssl.ca.location": pki["ca"].ca_file,
                          "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"})
    assert ok.returncode == 0, ok.stderr
    bad = run("SSL", {"security.protocol": "SSL", "ssl.ca.location": pki["other"].ca_file})
    assert bad.returncode != 0 and "certificate verify failed" in bad.stderr, bad.stderr
    bad = run("MTLS", {"security.protocol": "SSL", "ssl.ca.location": pki["ca"].ca_file})  # no client certificate
    assert bad.returncode != 0, bad.stdout


def test_brokers_replicate_over_mutual_tls(tmp_path, pki):
    """The inter-broker listener is SSL with client certificates required: followers fetch
    from their leaders through it, each node trusting the listener's trust store and
    presenting its keystore."""
    internal = {i: free_port() for i in (1, 2, 3)}
    c = QuorumCluster(tmp_path / "cluster", overrides={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "listener.name.internal.ssl.keystore.location": str(pki["server"]["pem"]),
        "listener.name.internal.ssl.truststore.location": str(pki["ca"].ca_file),
        "listener.name.internal.ssl.client.auth": "required",
        "replica.lag.time.max.ms": "2000", "min.insync.replicas": "2", "offsets.topic.replication.factor": "3"})
    for i, n in c.nodes.items():
        n.overrides["listeners"] = (f"PLAINTEXT://127.0.0.1:{n.port},INTERNAL://127.0.0.1:{internal[i]},"
                                    f"CONTROLLER://127.0.0.1:{c.controller_ports[i]}")
    try:
        c.start()
        from confluent_kafka.admin import NewTopic
        a = clients.admin(c.bootstrap())  # outlives its futures
        a.create_topics([NewTopic("shared", num_partitions=2, replication_factor=3)],
                        operation_timeout=30)["shared"].result(timeout=30)

        def isrs():
            md = clients.admin(c.bootstrap()).list_topics(topic="shared", timeout=5).topics.get("shared")
            return md and md.error is None and [sorted(p.isrs) for p in md.partitions.values()]

        assert eventually(lambda: isrs() == [[1, 2, 3]] * 2, timeout=30), isrs()
        writer = KeyedWriter(c.bootstrap(), "shared").start()
        time.sleep(3)
        writer.stop()
        acked, read, lost, dups, reorders = check_read_back(c.bootstrap(), writer, 2)
        assert acked > 100 and not lost and dups == 0 and reorders == 0
        assert isrs() == [[1, 2, 3]] * 2  # acks=all went through every follower's TLS fetches
        # The inter-broker port speaks TLS only, and wants a certificate.
        assert handshake_fails(internal[1], client_context(pki))
        assert not handshake_fails(internal[1], client_context(pki, "alice"))
    finally:
        c.tear_down()


def test_the_quorum_speaks_mutual_tls(tmp_path, pki):
    """The controller listener is SSL with client certificates required: the voters elect
    and replicate the metadata log over it, brokers register and heartbeat through it, and a
    lost voter is replaced."""
    c = QuorumCluster(tmp_path / "cluster", overrides={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
        "listener.name.controller.ssl.keystore.location": str(pki["server"]["pem"]),
        "listener.name.controller.ssl.truststore.location": str(pki["ca"].ca_file),
        "listener.name.controller.ssl.client.auth": "required",
        "offsets.topic.replication.factor": "3"})
    try:
        c.start()
        create_topic(c.bootstrap(), "first", 3)
        victim = 1
        c.nodes[victim].kill()
        via = ",".join(n.bootstrap for i, n in c.nodes.items() if i != victim)
        from confluent_kafka.admin import NewTopic

        def create_second():
            # A fresh client each time: one that asked during the election may keep waiting
            # on the node that led before.
            a = clients.admin(via)  # outlives its futures
            try:
                a.create_topics([NewTopic("second", num_partitions=2, replication_factor=2)],
                                operation_timeout=10)["second"].result(timeout=15)
                return True
            except Exception as e:  # noqa: BLE001 - retried until the deadline
                return "TOPIC_ALREADY_EXISTS" in str(e)

        assert eventually(create_second, timeout=90)
        md = clients.admin(via).list_topics(timeout=10)
        assert {"first", "second"} <= set(md.topics)
        # The controller port speaks TLS only, and wants a certificate.
        assert handshake_fails(c.controller_ports[2], client_context(pki))
        for i, n in c.nodes.items():
            assert "TLS handshake with" not in n.log_text(), f"node {i} failed a TLS handshake"
    finally:
        c.tear_down()
