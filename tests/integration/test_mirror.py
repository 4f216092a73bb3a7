"""Mirror links between two brokerd clusters on this machine (one node each): region B mirrors
topics of region A byte for byte, offsets and all, through brokerctl. The tests compare B's
copies with A record by record, check that mirror topics refuse producers until promoted,
and fail a region over: A is killed, the link promoted, and producers write on at the next
offset."""
import json
import subprocess
import time

import pytest
from confluent_kafka import TopicPartition

import clients
import kafka_wire as kw
from brokerd_harness import brokerctl_binary, free_port
from prometheus_text import scrape, value
from waiting import eventually

FAST = {"mirror.metadata.refresh.interval.ms": "300", "mirror.fetch.backoff.ms": "200"}


def brokerctl(bootstrap, *args, timeout=60):
    return subprocess.run([brokerctl_binary(), "--bootstrap-server", bootstrap, *args],
                          capture_output=True, text=True, timeout=timeout)


def describe(bootstrap, link):
    proc = brokerctl(bootstrap, "links", "describe", link, "--output", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def mirrored_ends(bootstrap, link):
    """{(topic, partition): mirrored end offset} as the link reports it."""
    d = describe(bootstrap, link)
    return {(t["name"], p["partition"]): p["mirrored_end_offset"] for t in d["mirror_topics"] for p in t["partitions"]}


def produce_keyed(bootstrap, topic, n, start=0, partitions=3):
    p = clients.producer(bootstrap, enable_idempotence=True)
    items = [{"key": f"k{i % 17}".encode(), "value": f"v{i}".encode() * 20, "headers": [("h", str(i).encode())],
              "partition": i % partitions} for i in range(start, start + n)]
    return clients.produce_and_confirm(p, topic, items)


def snapshot(bootstrap, topic, partitions):
    """Every record of the topic: {partition: [(offset, key, value, headers, timestamp), ...]}."""
    got = clients.read_all(bootstrap, topic, partitions)
    return {p: [(m.offset(), m.key(), m.value(), m.headers(), m.timestamp()) for m in ms] for p, ms in got.items()}


def wait_caught_up(a, b, link, topic, partitions, timeout=60):
    ends = {p: clients.watermarks(a.bootstrap, topic, p)[1] for p in range(partitions)}
    assert eventually(lambda: all(mirrored_ends(b.bootstrap, link).get((topic, p), -1) >= ends[p]
                                  for p in range(partitions)), timeout), describe(b.bootstrap, link)
    # The mirror's high watermark follows its log end (one replica here).
    assert eventually(lambda: all(clients.watermarks(b.bootstrap, topic, p)[1] >= ends[p] for p in range(partitions)), 10)


def test_a_link_copies_topics_with_their_offsets_and_promotion_makes_them_writable(broker_factory):
    a = broker_factory()
    metrics_port = free_port()
    b = broker_factory(overrides={**FAST, "metrics.listener": f"127.0.0.1:{metrics_port}"})
    clients.create_topic(a.bootstrap, "orders", partitions=3, config={"retention.ms": "86400000"})
    clients.create_topic(a.bootstrap, "other", partitions=1)
    # Offsets that do not start at 0 on the source: records deleted below 5 on partition 0.
    produce_keyed(a.bootstrap, "orders", 300)
    with kw.Connection(a.port) as conn:
        assert kw.delete_records(conn, "orders", 0, 5)["error"] == 0

    proc = brokerctl(b.bootstrap, "links", "create", "region-a", "--source-bootstrap-server", a.bootstrap,
                     "--topic", "orders")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert eventually(lambda: "orders" in clients.admin(b.bootstrap).list_topics(timeout=5).topics, 30)
    # The source's partition count and topic configs, and only the topics named.
    md = clients.admin(b.bootstrap).list_topics(timeout=5)
    assert len(md.topics["orders"].partitions) == 3 and "other" not in md.topics
    from confluent_kafka.admin import ConfigResource
    res = ConfigResource("topic", "orders")
    adm = clients.admin(b.bootstrap)
    cfg = adm.describe_configs([res])[res].result(timeout=10)
    assert cfg["retention.ms"].value == "86400000"

    # Writes go on at the source while the link copies.
    produce_keyed(a.bootstrap, "orders", 300, start=300)
    wait_caught_up(a, b, "region-a", "orders", 3)
    src, dst = snapshot(a.bootstrap, "orders", 3), snapshot(b.bootstrap, "orders", 3)
    assert sum(len(v) for v in src.values()) == 600 - 5  # partition 0 starts at 5
    assert dst == src
    lo, _ = clients.watermarks(b.bootstrap, "orders", 0)
    assert lo <= 5

    # Read-only until promoted.
    p = clients.producer(b.bootstrap, message_timeout_ms=5000, retries=0)
    errors = []
    p.produce("orders", b"x", partition=1, on_delivery=lambda err, msg: errors.append(err))
    p.flush(10)
    assert errors and errors[0] is not None and "INVALID_REQUEST" in str(errors[0]), errors
    proc = brokerctl(b.bootstrap, "topics", "add-partitions", "orders", "--to", "4")
    assert proc.returncode == 1 and "mirror" in proc.stderr, proc.stdout + proc.stderr

    d = describe(b.bootstrap, "region-a")
    assert d["state"] == "active", d
    assert all(p["lag_records"] == 0 and p["state"] == "mirroring" for t in d["mirror_topics"] for p in t["partitions"]), d
    # The source had deleted offsets 0..4 of partition 0 before the link began: reported, not hidden.
    skipped = {p["partition"]: p["skipped_records"] for t in d["mirror_topics"] for p in t["partitions"]}
    assert skipped == {0: 5, 1: 0, 2: 0}, d
    samples = scrape(metrics_port)[0]
    assert value(samples, "brokerd_mirror_link_up", link="region-a") == 1
    assert value(samples, "brokerd_mirror_partition_lag_records", link="region-a", topic="orders", partition="1") == 0
    assert value(samples, "brokerd_mirror_partition_skipped_records", link="region-a", topic="orders", partition="0") == 5

    # Failover: region A is lost; the link is promoted; producers write at the next offset.
    a.kill()
    proc = brokerctl(b.bootstrap, "links", "promote", "region-a", "--all")
    assert proc.returncode == 0 and "promoted" in proc.stdout, proc.stdout + proc.stderr
    ends = {q: clients.watermarks(b.bootstrap, "orders", q)[1] for q in range(3)}
    reports = produce_keyed(b.bootstrap, "orders", 30)
    for m in reports:
        assert m.offset() >= ends[m.partition()]
    assert {m.offset() for m in reports if m.partition() == 1} >= {ends[1]}
    # A link without mirror topics can be deleted.
    assert brokerctl(b.bootstrap, "links", "delete", "region-a").returncode == 0
    proc = brokerctl(b.bootstrap, "links", "list", "--output", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == [], proc.stdout


def test_a_mirror_refuses_delete_records_and_copied_config_changes_until_promoted(broker_factory):
    """DeleteRecords on a mirror would move its log start past records the source still has:
    refused (INVALID_REQUEST) like Produce, and so is a change to a config the link copies;
    a setting the link does not copy stays this cluster's. Promotion lifts both."""
    a = broker_factory()
    b = broker_factory(overrides=FAST)
    clients.create_topic(a.bootstrap, "ledger", partitions=1, config={"retention.ms": "86400000"})
    produce_keyed(a.bootstrap, "ledger", 50, partitions=1)
    assert brokerctl(b.bootstrap, "links", "create", "ro", "--source-bootstrap-server", a.bootstrap,
                     "--topic", "ledger").returncode == 0
    wait_caught_up(a, b, "ro", "ledger", 1)

    with kw.Connection(b.port) as conn:
        answer = kw.delete_records(conn, "ledger", 0, 20)
    assert answer["error"] == 42, answer  # INVALID_REQUEST
    assert clients.watermarks(b.bootstrap, "ledger", 0)[0] == 0
    proc = brokerctl(b.bootstrap, "topics", "alter-config", "ledger", "--set", "retention.ms=1000")
    assert proc.returncode == 1 and "read-only until the link promotes it" in proc.stderr, proc.stdout + proc.stderr
    proc = brokerctl(b.bootstrap, "topics", "alter-config", "ledger", "--set", "min.insync.replicas=1")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    proc = brokerctl(b.bootstrap, "links", "promote", "ro", "--all")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with kw.Connection(b.port) as conn:
        answer = kw.delete_records(conn, "ledger", 0, 20)
    assert answer["error"] == 0 and answer["low_watermark"] == 20, answer
    assert brokerctl(b.bootstrap, "topics", "alter-config", "ledger", "--set", "retention.ms=1000").returncode == 0


def test_the_link_survives_a_restart_of_either_side_and_resumes_without_gap_or_duplicate(broker_factory):
    a = broker_factory()
    b = broker_factory(overrides=FAST)
    clients.create_topic(a.bootstrap, "events", partitions=2)
    produce_keyed(a.bootstrap, "events", 200, partitions=2)
    assert brokerctl(b.bootstrap, "links", "create", "up", "--source-bootstrap-server", a.bootstrap,
                     "--topic-prefix", "ev").returncode == 0
    wait_caught_up(a, b, "up", "events", 2)

    # The source goes away: the link says so, and catches up when it is back.
    a.stop()
    assert eventually(lambda: describe(b.bootstrap, "up")["state"] == "source-unreachable", 30)
    a.start()
    produce_keyed(a.bootstrap, "events", 200, start=200, partitions=2)
    wait_caught_up(a, b, "up", "events", 2)

    # The destination restarts mid-stream: it resumes from its log end.
    b.stop()
    produce_keyed(a.bootstrap, "events", 200, start=400, partitions=2)
    b.start()
    wait_caught_up(a, b, "up", "events", 2)
    assert snapshot(b.bootstrap, "events", 2) == snapshot(a.bootstrap, "events", 2)

    # Pause stops copying; resume picks up where each mirror ends.
    assert brokerctl(b.bootstrap, "links", "pause", "up").returncode == 0
    time.sleep(1)
    before = mirrored_ends(b.bootstrap, "up")
    produce_keyed(a.bootstrap, "events", 50, start=600, partitions=2)
    time.sleep(1.5)
    assert all(clients.watermarks(b.bootstrap, "events", p)[1] == 300 for p in range(2)), before
    assert brokerctl(b.bootstrap, "links", "resume", "up").returncode == 0
    wait_caught_up(a, b, "up", "events", 2)
    assert snapshot(b.bootstrap, "events", 2) == snapshot(a.bootstrap, "events", 2)


def test_a_recreated_source_topic_is_not_appended_to_the_old_mirror(broker_factory):
    a = broker_factory()
    b = broker_factory(overrides=FAST)
    clients.create_topic(a.bootstrap, "t", partitions=1)
    produce_keyed(a.bootstrap, "t", 50, partitions=1)
    assert brokerctl(b.bootstrap, "links", "create", "l", "--source-bootstrap-server", a.bootstrap,
                     "--topic", "t").returncode == 0
    wait_caught_up(a, b, "l", "t", 1)
    adm = clients.admin(a.bootstrap)
    adm.delete_topics(["t"])["t"].result(timeout=15)
    assert eventually(lambda: "t" not in clients.admin(a.bootstrap).list_topics(timeout=5).topics, 15)
    clients.create_topic(a.bootstrap, "t", partitions=1)
    produce_keyed(a.bootstrap, "t", 80, partitions=1)

    def stopped():
        d = describe(b.bootstrap, "l")
        parts = [p for t in d["mirror_topics"] for p in t["partitions"]]
        return (d.get("state_message") or "").find("recreated") >= 0 or any(p["state"] == "source-gone" for p in parts)
    assert eventually(stopped, 30), describe(b.bootstrap, "l")
    time.sleep(1)
    assert clients.watermarks(b.bootstrap, "t", 0)[1] == 50


def test_bad_links_are_refused_or_reported(broker_factory, tmp_path):
    b = broker_factory(overrides=FAST)
    proc = brokerctl(b.bootstrap, "links", "create", "x", "--source-bootstrap-server", "127.0.0.1:1")
    assert proc.returncode == 2 and "--topic" in proc.stderr, proc.stderr
    proc = brokerctl(b.bootstrap, "links", "create", "bad name", "--source-bootstrap-server", "127.0.0.1:1",
                     "--topic", "t")
    assert proc.returncode == 1 and "illegal" in proc.stderr, proc.stderr
    cfg = tmp_path / "source.properties"
    cfg.write_text("security.protocol=SSL\nssl.keystore.type=JKS\n")
    proc = brokerctl(b.bootstrap, "links", "create", "x", "--source-bootstrap-server", "127.0.0.1:1", "--topic", "t",
                     "--source-command-config", str(cfg))
    assert proc.returncode == 1 and "must be PEM" in proc.stderr, proc.stderr
    # Unreachable source: created, and its state says why it copies nothing.
    assert brokerctl(b.bootstrap, "links", "create", "x", "--source-bootstrap-server", "127.0.0.1:1",
                     "--topic", "t").returncode == 0
    assert eventually(lambda: describe(b.bootstrap, "x")["state"] == "source-unreachable", 30)
    proc = brokerctl(b.bootstrap, "links", "create", "x", "--source-bootstrap-server", "127.0.0.1:1", "--topic", "t")
    assert proc.returncode == 1 and "already exists" in proc.stderr, proc.stderr
    proc = brokerctl(b.bootstrap, "links", "describe", "nope")
    assert proc.returncode == 1 and "RESOURCE_NOT_FOUND" in proc.stderr, proc.stderr
    assert brokerctl(b.bootstrap, "links", "delete", "x").returncode == 0
    # A topic the source does not have: the link says which.
    a = broker_factory()
    assert brokerctl(b.bootstrap, "links", "create", "y", "--source-bootstrap-server", a.bootstrap,
                     "--topic", "nosuch").returncode == 0
    assert eventually(lambda: "does not exist on the source" in (describe(b.bootstrap, "y")["state_message"] or ""), 30), \
        describe(b.bootstrap, "y")


AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS"}


def acls(bootstrap):
    """Every binding, as (resource type, name, pattern, principal, operation)."""
    proc = brokerctl(bootstrap, "acls", "list", "--output", "json")
    assert proc.returncode == 0, proc.stderr
    return {(a["resource_type"], a["resource_name"], a["pattern_type"], a["principal"], a["operation"])
            for a in json.loads(proc.stdout)}


def test_a_link_copies_the_acls_of_what_it_mirrors(broker_factory):
    """The source's bindings on the mirrored topic and group appear on the destination; those
    on topics it does not mirror, or prefixes wider than what it mirrors, do not; a binding
    removed on the source is removed from the copy, and one made on the destination by hand
    is left alone."""
    a = broker_factory(overrides=AUTHORIZER)
    b = broker_factory(overrides={**FAST, **AUTHORIZER})
    for topic in ("orders", "payroll"):
        clients.create_topic(a.bootstrap, topic)
    for args in (("--principal", "User:alice", "--topic", "orders", "--operation", "WRITE"),
                 ("--principal", "User:alice", "--group", "billing", "--operation", "READ"),
                 ("--principal", "User:bob", "--topic", "ord", "--pattern-type", "prefixed", "--operation", "READ"),
                 ("--principal", "User:carol", "--topic", "payroll", "--operation", "READ")):
        proc = brokerctl(a.bootstrap, "acls", "create", *args)
        assert proc.returncode == 0, proc.stderr
    proc = brokerctl(b.bootstrap, "acls", "create", "--principal", "User:erin", "--topic", "orders", "--operation", "READ")
    assert proc.returncode == 0, proc.stderr
    proc = brokerctl(b.bootstrap, "links", "create", "region-a", "--source-bootstrap-server", a.bootstrap,
                     "--topic", "orders", "--group", "billing")
    assert proc.returncode == 0, proc.stderr
    write = ("TOPIC", "orders", "LITERAL", "User:alice", "WRITE")
    group = ("GROUP", "billing", "LITERAL", "User:alice", "READ")
    local = ("TOPIC", "orders", "LITERAL", "User:erin", "READ")
    assert eventually(lambda: {write, group} <= acls(b.bootstrap), 30), (acls(b.bootstrap), describe(b.bootstrap, "region-a"))
    assert acls(b.bootstrap) == {write, group, local}
    assert describe(b.bootstrap, "region-a")["sync_acls"] is True
    proc = brokerctl(a.bootstrap, "acls", "delete", "--principal", "User:alice", "--topic", "orders", "--operation", "WRITE")
    assert proc.returncode == 0, proc.stderr
    assert eventually(lambda: acls(b.bootstrap) == {group, local}, 30), acls(b.bootstrap)


def test_a_link_authenticates_to_its_source_with_scram(broker_factory, tmp_path):
    """The source serves the link on a SASL_PLAINTEXT listener: the link presents SCRAM
    credentials from --source-command-config; a wrong password is reported by the link's
    state, and the password shows in no log. The destination keeps the password sealed with
    password.encoder.secret: not in clear in its metadata log, refused without a secret, and
    reported (not used) when a node has another secret."""
    sasl_port = free_port()
    a = broker_factory(start=False)
    a.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{a.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
    })
    a.start()
    proc = brokerctl(a.bootstrap, "users", "create", "mirror", "--mechanism", "SCRAM-SHA-512",
                     "--password", "mirror-secret")
    assert proc.returncode == 0, proc.stderr
    clients.create_topic(a.bootstrap, "guarded", partitions=2)
    produce_keyed(a.bootstrap, "guarded", 200, partitions=2)
    unsealed = broker_factory(overrides=FAST)
    b = broker_factory(overrides={**FAST, "password.encoder.secret": "region-b-secret"})

    def link(name, topic, password, on=None):
        cfg = tmp_path / f"{name}.properties"
        cfg.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                       f"sasl.username=mirror\nsasl.password={password}\n")
        return brokerctl((on or b).bootstrap, "links", "create", name, "--source-bootstrap-server",
                         f"127.0.0.1:{sasl_port}", "--topic", topic, "--source-command-config", str(cfg))

    proc = link("secured", "guarded", "mirror-secret", on=unsealed)
    assert proc.returncode == 1 and "password.encoder.secret" in proc.stderr, proc.stderr
    assert link("secured", "guarded", "mirror-secret").returncode == 0
    wait_caught_up(a, b, "secured", "guarded", 2)
    assert snapshot(b.bootstrap, "guarded", 2) == snapshot(a.bootstrap, "guarded", 2)
    # Settings the link's client cannot use are refused when the link is made.
    cfg = tmp_path / "half.properties"
    cfg.write_text("security.protocol=SASL_PLAINTEXT\nsasl.username=mirror\n")
    proc = brokerctl(b.bootstrap, "links", "create", "half", "--source-bootstrap-server", f"127.0.0.1:{sasl_port}",
                     "--topic", "other", "--source-command-config", str(cfg))
    assert proc.returncode == 1 and "sasl.password" in proc.stderr, proc.stderr
    # A wrong password: the link exists and says why it copies nothing.
    clients.create_topic(a.bootstrap, "other", partitions=1)
    assert link("wrong", "other", "not-the-secret").returncode == 0
    assert eventually(lambda: "SASL_AUTHENTICATION_FAILED" in (describe(b.bootstrap, "wrong")["state_message"] or ""),
                      30), describe(b.bootstrap, "wrong")
    for broker in (a, b):
        assert "mirror-secret" not in broker.log_text() and "not-the-secret" not in broker.log_text()
    metadata_log = b"".join(f.read_bytes() for f in (b.data_dir / "__cluster_metadata-0").iterdir() if f.is_file())
    assert b"SCRAM-SHA-512" in metadata_log and b"mirror-secret" not in metadata_log
    # A node with another secret cannot unseal the password: the link says so.
    b.stop()
    b.overrides["password.encoder.secret"] = "another-secret"
    b.start()
    assert eventually(lambda: "cannot unseal" in (describe(b.bootstrap, "secured")["state_message"] or ""), 30), \
        describe(b.bootstrap, "secured")


def test_a_link_reaches_its_source_over_tls(broker_factory, tmp_path):
    """The source serves the link on an SSL listener: the link trusts the source's authority
    (ssl.ca.location in --source-command-config); one trusting another authority reports the
    failed handshake in its state."""
    from pki import Authority
    ca, other = Authority(tmp_path / "pki"), Authority(tmp_path / "other", name="other-ca")
    server = ca.issue("source", "127.0.0.1", server=True)
    ssl_port = free_port()
    a = broker_factory(start=False)
    a.overrides.update({"listeners": f"PLAINTEXT://127.0.0.1:{a.port},SSL://127.0.0.1:{ssl_port}",
                        "ssl.keystore.location": str(server["pem"])})
    a.start()
    clients.create_topic(a.bootstrap, "sealed", partitions=2)
    produce_keyed(a.bootstrap, "sealed", 200, partitions=2)
    b = broker_factory(overrides=FAST)

    def link(name, topic, authority):
        cfg = tmp_path / f"{name}.properties"
        cfg.write_text(f"security.protocol=SSL\nssl.ca.location={authority.ca_file}\n")
        return brokerctl(b.bootstrap, "links", "create", name, "--source-bootstrap-server", f"127.0.0.1:{ssl_port}",
                         "--topic", topic, "--source-command-config", str(cfg))

    assert link("tls", "sealed", ca).returncode == 0
    wait_caught_up(a, b, "tls", "sealed", 2)
    assert snapshot(b.bootstrap, "sealed", 2) == snapshot(a.bootstrap, "sealed", 2)
    clients.create_topic(a.bootstrap, "other", partitions=1)
    assert link("distrust", "other", other).returncode == 0
    assert eventually(lambda: "certificate verify failed" in (describe(b.bootstrap, "distrust")["state_message"] or ""),
                      30), describe(b.bootstrap, "distrust")


def consume_some(bootstrap, topic, group, n, timeout=60):
    """A group member that reads `n` records, commits them and leaves; returns them."""
    c = clients.consumer(bootstrap, group_id=group, session_timeout_ms=6000)
    got = []
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None or m.error():
                continue
            got.append(m)
            c.store_offsets(m)
        assert len(got) >= n, f"read {len(got)} of {n}"
        c.commit(asynchronous=False)
    finally:
        c.close()
    return [(m.partition(), m.offset()) for m in got]


def committed(bootstrap, topic, group, partitions):
    c = clients.consumer(bootstrap, group_id=group)
    try:
        return {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)}
    finally:
        c.close()


def test_a_group_fails_over_to_the_mirror_and_resumes_where_it_committed(broker_factory):
    a = broker_factory()
    b = broker_factory(overrides={**FAST, "mirror.offsets.sync.interval.ms": "300"})
    clients.create_topic(a.bootstrap, "payments", partitions=2)
    produce_keyed(a.bootstrap, "payments", 400, partitions=2)
    assert brokerctl(b.bootstrap, "links", "create", "dr", "--source-bootstrap-server", a.bootstrap,
                     "--topic", "payments", "--group-prefix", "bill").returncode == 0
    first = consume_some(a.bootstrap, "payments", "billing", 250)
    at_a = committed(a.bootstrap, "payments", "billing", 2)
    assert sum(at_a.values()) >= 250, at_a
    wait_caught_up(a, b, "dr", "payments", 2)
    assert eventually(lambda: committed(b.bootstrap, "payments", "billing", 2) == at_a, 30), \
        (committed(b.bootstrap, "payments", "billing", 2), at_a)
    assert eventually(lambda: describe(b.bootstrap, "dr")["groups_synced"] == 1, 10), describe(b.bootstrap, "dr")

    # Region A is lost; B takes over and the group reads on from its last mirrored commit.
    a.kill()
    assert brokerctl(b.bootstrap, "links", "promote", "dr", "--all").returncode == 0
    rest = consume_some(b.bootstrap, "payments", "billing", 400 - sum(at_a.values()))
    seen = sorted(first + rest)
    assert seen == sorted({(p, o) for p in range(2) for o in range(200)}), "records skipped or read twice"


class _Cluster:
    """What the helpers above need of a destination: its bootstrap servers."""

    def __init__(self, cluster):
        self.cluster = cluster

    @property
    def bootstrap(self):
        return self.cluster.bootstrap()


def test_mirror_partitions_are_replicated_and_a_new_leader_carries_on(broker_factory, tmp_path):
    from cluster_harness import QuorumCluster
    a = broker_factory()
    cluster = QuorumCluster(tmp_path / "region-b", overrides={
        **FAST, "default.replication.factor": "3", "offsets.topic.replication.factor": "3",
        "replica.lag.time.max.ms": "2000"})
    try:
        cluster.start()
        b = _Cluster(cluster)
        clients.create_topic(a.bootstrap, "flow", partitions=2)
        produce_keyed(a.bootstrap, "flow", 300, partitions=2)
        proc = brokerctl(b.bootstrap, "links", "create", "dr", "--source-bootstrap-server", a.bootstrap, "--topic", "flow")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        wait_caught_up(a, b, "dr", "flow", 2)
        md = clients.admin(b.bootstrap).list_topics(timeout=5).topics["flow"]
        assert all(len(p.replicas) == 3 for p in md.partitions.values())
        # The mirror leader of partition 0 dies; another replica leads and copies on from its own end.
        cluster.nodes[md.partitions[0].leader].kill()
        produce_keyed(a.bootstrap, "flow", 300, start=300, partitions=2)
        wait_caught_up(a, b, "dr", "flow", 2, timeout=90)
        assert snapshot(b.bootstrap, "flow", 2) == snapshot(a.bootstrap, "flow", 2)
    finally:
        cluster.tear_down()


def test_the_link_follows_a_source_leader_that_moves(broker_factory, tmp_path):
    from cluster_harness import QuorumCluster
    source = QuorumCluster(tmp_path / "region-a", overrides={
        "default.replication.factor": "3", "offsets.topic.replication.factor": "3", "min.insync.replicas": "2",
        "replica.lag.time.max.ms": "2000"})
    try:
        source.start()
        a = _Cluster(source)
        b = broker_factory(overrides=FAST)
        from confluent_kafka.admin import NewTopic
        adm = clients.admin(a.bootstrap)
        adm.create_topics([NewTopic("moving", num_partitions=2, replication_factor=3)])["moving"].result(timeout=30)
        clients.wait_for_topic(a.bootstrap, "moving", 2)
        produce_keyed(a.bootstrap, "moving", 200, partitions=2)
        assert brokerctl(b.bootstrap, "links", "create", "l", "--source-bootstrap-server", a.bootstrap,
                         "--topic", "moving").returncode == 0
        wait_caught_up(a, b, "l", "moving", 2)
        md = clients.admin(a.bootstrap).list_topics(timeout=5).topics["moving"]
        source.nodes[md.partitions[0].leader].kill()
        produce_keyed(a.bootstrap, "moving", 200, start=200, partitions=2)
        wait_caught_up(a, b, "l", "moving", 2, timeout=90)
        assert snapshot(b.bootstrap, "moving", 2) == snapshot(a.bootstrap, "moving", 2)
    finally:
        source.tear_down()
