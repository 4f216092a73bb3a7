"""brokerctl end to end against a live brokerd: every command, its JSON output, wrong input
(exit code 2 and one line on stderr), Kafka errors (exit code 1 with the error name), a
produce/consume round trip, and the group commands when the broker serves the group APIs."""
import json
import os
import socket
import struct
import subprocess
import threading
import time

import pytest

import kafka_wire as kw
from brokerd_harness import brokerctl_binary, module_broker

GROUP_APIS = {8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 15: "DescribeGroups",
              16: "ListGroups", 42: "DeleteGroups"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    yield from module_broker(tmp_path_factory, "brokerctl")


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"rc={self.rc} out={self.out!r} err={self.err!r}"


def ctl(broker, *args, stdin=None, env=None, bootstrap=True, timeout=60):
    cmd = [brokerctl_binary()]
    if bootstrap:
        cmd += ["--bootstrap-server", broker.bootstrap]
    cmd += [str(a) for a in args]
    full_env = dict(os.environ)
    full_env.pop("BROKERCTL_BOOTSTRAP", None)
    full_env.update(env or {})
    return Result(subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout, env=full_env))


def ok(r):
    assert r.rc == 0 and r.err == "", r
    return r


def fails(r, rc, *needles):
    assert r.rc == rc, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r
    for n in needles:
        assert n in lines[0], r
    return r


def served_apis(broker):
    with kw.Connection(broker.port) as c:
        err, apis = kw.api_versions(c)
    assert err == 0
    return apis


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (as the Java client's default partitioner), signed 32-bit."""
    m, r = 0x5bd1e995, 24
    h = (0x9747b28c ^ len(data)) & 0xffffffff
    n4 = len(data) // 4
    for i in range(n4):
        k = (int.from_bytes(data[4 * i:4 * i + 4], "little") * m) & 0xffffffff
        k ^= k >> r
        k = (k * m) & 0xffffffff
        h = ((h * m) & 0xffffffff) ^ k
    tail = data[4 * n4:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if len(tail) >= 1:
        h = ((h ^ tail[0]) * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def test_murmur2_matches_kafka_vectors():
    assert murmur2(b"21") == -973932308
    assert murmur2(b"foobar") == -790332482
    assert murmur2(b"a-little-bit-longer-string") == -1486304829


# ------------------------------------------------------------------ input checks

@pytest.mark.parametrize("args,needle", [
    ([], "missing command"),
    (["bogus"], "unknown command 'bogus'"),
    (["topics"], "missing topics command"),
    (["topics", "frob"], "unknown command 'topics frob'"),
    (["topics", "create"], "missing argument NAME"),
    (["topics", "create", "bad name"], "invalid topic name"),
    (["topics", "create", "a" * 250], "longer than 249"),
    (["topics", "create", ".."], "invalid topic name"),
    (["topics", "create", "t", "--partitions", "abc"], "--partitions must be an integer"),
    (["topics", "create", "t", "--partitions", "0"], "--partitions must be an integer"),
    (["topics", "create", "t", "--replication-factor", "x"], "--replication-factor"),
    (["topics", "create", "t", "--config", "no.such.key=1"], "unknown topic config 'no.such.key'"),
    (["topics", "create", "t", "--config", "retention.ms=soon"], "retention.ms must be an integer"),
    (["topics", "create", "t", "--config", "retention.ms"], "expects KEY=VALUE"),
    (["topics", "create", "t", "--frobnicate"], "unknown option '--frobnicate'"),
    (["topics", "alter-config", "t"], "nothing to change"),
    (["topics", "alter-config", "t", "--delete", "nope.key"], "unknown topic config 'nope.key'"),
    (["topics", "add-partitions", "t"], "missing option --to"),
    (["topics", "list", "--output", "xml"], "--output must be table or json"),
    (["configs", "describe", "--entity-name", "t"], "missing option --entity-type"),
    (["configs", "describe", "--entity-type", "users", "--entity-name", "t"], "--entity-type must be"),
    (["configs", "describe", "--entity-type", "brokers", "--entity-name", "one"], "node id"),
    (["configs", "alter", "--entity-type", "brokers", "--entity-name", "1", "--set", "broker.id=2"],
     "Cannot update these configs dynamically: Set(broker.id)"),
    (["configs", "alter", "--entity-type", "topics", "--entity-default", "--set", "a=b"], "--entity-default goes with"),
    (["configs", "alter", "--entity-type", "brokers", "--entity-default", "--entity-name", "1", "--set", "a=b"],
     "not both"),
    (["produce"], "missing argument TOPIC"),
    (["produce", "t", "--partition", "-1"], "--partition must be an integer"),
    (["consume", "t", "--max", "many"], "--max must be an integer"),
    (["groups", "reset-offsets", "g", "--to-earliest"], "missing option --topic"),
    (["groups", "reset-offsets", "g", "--topic", "t"], "exactly one of"),
    (["groups", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--to-latest"], "exactly one of"),
    (["groups", "reset-offsets", "g", "--topic", "t", "--to-datetime", "yesterday"], "--to-datetime expects"),
    (["groups", "reset-offsets", "g", "--topic", "t", "--to-offset", "x"], "--to-offset must be an integer"),
])
def test_wrong_input_exits_2_before_connecting(args, needle):
    # Port 1 has no listener: a check that passed would fail to connect with exit code 1.
    r = ctl(None, "--bootstrap-server", "127.0.0.1:1", *args, bootstrap=False)
    fails(r, 2, needle)


def test_bad_bootstrap_server():
    fails(ctl(None, "--bootstrap-server", "nohostport", "topics", "list", bootstrap=False), 2, "HOST:PORT")
    fails(ctl(None, "topics", "list", bootstrap=False, env={"BROKERCTL_BOOTSTRAP": "127.0.0.1:1"}), 1,
          "cannot connect to 127.0.0.1:1")


@pytest.mark.parametrize("args", [
    ["--help"], ["topics", "--help"], ["groups", "--help"],
    ["topics", "create", "--help"], ["topics", "list", "--help"], ["topics", "describe", "--help"],
    ["topics", "alter-config", "--help"], ["topics", "add-partitions", "--help"], ["topics", "delete", "--help"],
    ["groups", "list", "--help"], ["groups", "describe", "--help"], ["groups", "reset-offsets", "--help"],
    ["groups", "delete", "--help"], ["configs", "describe", "--help"], ["configs", "alter", "--help"],
    ["cluster", "describe", "--help"], ["produce", "--help"], ["consume", "--help"],
])
def test_help(args):
    r = ok(ctl(None, *args, bootstrap=False))
    assert r.out.startswith("usage: brokerctl"), r
    assert "--bootstrap-server" in r.out


# ------------------------------------------------------------------ topics, configs, cluster

def test_topic_lifecycle(srv):
    ok(ctl(srv, "topics", "create", "life", "--partitions", 2, "--replication-factor", 1,
           "--config", "retention.ms=3600000", "--config", "cleanup.policy=delete"))
    fails(ctl(srv, "topics", "create", "life", "--partitions", 2), 1, "TOPIC_ALREADY_EXISTS", "life")
    fails(ctl(srv, "topics", "create", "toobig", "--replication-factor", 3), 1, "INVALID_REPLICATION_FACTOR")

    listed = ok(ctl(srv, "topics", "list", "--output", "json")).json()
    life = [t for t in listed if t["name"] == "life"]
    assert life and life[0]["partitions"] == 2 and life[0]["replication_factor"] == 1
    assert "life" in ok(ctl(srv, "topics", "list")).out

    d = ok(ctl(srv, "topics", "describe", "life", "--output", "json")).json()
    assert d["name"] == "life" and d["partition_count"] == 2 and len(d["topic_id"]) == 22
    for i, p in enumerate(d["partitions"]):
        assert p["partition"] == i and p["leader"] >= 0 and p["replicas"] == [p["leader"]] and p["isr"] == [p["leader"]]
    assert d["configs"]["retention.ms"] == {"value": "3600000", "source": "DYNAMIC_TOPIC_CONFIG",
                                           "read_only": False, "sensitive": False}
    text = ok(ctl(srv, "topics", "describe", "life")).out
    assert "retention.ms=3600000" in text and "PARTITION" in text and "ISR" in text
    fails(ctl(srv, "topics", "describe", "nothere"), 1, "UNKNOWN_TOPIC_OR_PARTITION")

    ok(ctl(srv, "topics", "alter-config", "life", "--set", "retention.ms=1000", "--set", "segment.bytes=1048576",
           "--delete", "cleanup.policy"))
    cfg = {c["name"]: c for c in ok(ctl(srv, "configs", "describe", "--entity-type", "topics",
                                        "--entity-name", "life", "--output", "json")).json()["configs"]}
    assert cfg["retention.ms"]["value"] == "1000" and cfg["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert cfg["segment.bytes"]["value"] == "1048576"
    assert cfg["cleanup.policy"]["source"] != "DYNAMIC_TOPIC_CONFIG"
    fails(ctl(srv, "topics", "alter-config", "nothere", "--set", "retention.ms=1"), 1, "UNKNOWN_TOPIC_OR_PARTITION")

    ok(ctl(srv, "topics", "add-partitions", "life", "--to", 4))
    assert ok(ctl(srv, "topics", "describe", "life", "--output", "json")).json()["partition_count"] == 4
    fails(ctl(srv, "topics", "add-partitions", "life", "--to", 2), 1, "INVALID_PARTITIONS")

    r = ok(ctl(srv, "topics", "delete", "life", "--output", "json"))
    assert r.json() == {"topic": "life", "result": "deleted"}
    fails(ctl(srv, "topics", "delete", "life"), 1, "UNKNOWN_TOPIC_OR_PARTITION")


def test_configs_and_cluster(srv):
    c = ok(ctl(srv, "cluster", "describe", "--output", "json")).json()
    assert c["cluster_id"] and c["controller"] >= 0
    [b] = c["brokers"]
    assert (b["host"], b["port"]) == ("127.0.0.1", srv.port) and "rack" in b
    assert c["offline_partitions"] == [] and c["under_replicated_partitions"] == []
    text = ok(ctl(srv, "cluster", "describe")).out
    assert c["cluster_id"] in text and f"127.0.0.1:{srv.port}" in text
    assert "Offline partitions: 0" in text and "Under-replicated partitions: 0" in text

    node = str(b["id"])
    bc = ok(ctl(srv, "configs", "describe", "--entity-type", "brokers", "--entity-name", node, "--output", "json")).json()
    names = {x["name"] for x in bc["configs"]}
    assert "log.retention.ms" in names or "num.partitions" in names, names
    assert "NAME" in ok(ctl(srv, "configs", "describe", "--entity-type", "brokers", "--entity-name", node)).out

    ok(ctl(srv, "topics", "create", "cfg", "--partitions", 1))
    r = ok(ctl(srv, "configs", "alter", "--entity-type", "topics", "--entity-name", "cfg",
               "--set", "max.message.bytes=2000000", "--output", "json")).json()
    assert r["set"] == {"max.message.bytes": "2000000"}
    out = ok(ctl(srv, "configs", "describe", "--entity-type", "topics", "--entity-name", "cfg")).out
    assert any(l.split()[:3] == ["max.message.bytes", "2000000", "DYNAMIC_TOPIC_CONFIG"] for l in out.splitlines()), out
    ok(ctl(srv, "configs", "alter", "--entity-type", "topics", "--entity-name", "cfg", "--delete", "max.message.bytes"))
    fails(ctl(srv, "configs", "describe", "--entity-type", "topics", "--entity-name", "nothere"), 1,
          "UNKNOWN_TOPIC_OR_PARTITION")


def test_cluster_quorum_asks_a_broker_or_a_controller(srv):
    """kafka-metadata-quorum asks --bootstrap-server or --bootstrap-controller; so does
    `cluster quorum` (a broker forwards DescribeQuorum to the quorum's leader)."""
    node = ok(ctl(srv, "cluster", "describe", "--output", "json")).json()["brokers"][0]["id"]
    q = ok(ctl(srv, "cluster", "quorum", "--output", "json")).json()
    assert q["leader"] == node and q["epoch"] >= 1 and [v["id"] for v in q["voters"]] == [node], q
    assert "Leader: " + str(node) in ok(ctl(srv, "cluster", "quorum")).out
    q = ok(ctl(srv, "cluster", "quorum", "--bootstrap-controller", srv.bootstrap, "--output", "json",
               bootstrap=False)).json()
    assert q["leader"] == node, q
    fails(ctl(srv, "cluster", "quorum", "--bootstrap-controller", srv.bootstrap), 2, "not both")


# ------------------------------------------------------------------ produce and consume

def consume_json(srv, *args):
    r = ok(ctl(srv, "consume", *args, "--output", "json"))
    return [json.loads(l) for l in r.out.splitlines()]


def test_produce_consume_round_trip(srv):
    ok(ctl(srv, "topics", "create", "rt", "--partitions", 3))
    keyed = [f"key{i}:value {i}" for i in range(30)]
    r = ok(ctl(srv, "produce", "rt", "--key-separator", ":", "--output", "json", stdin="\n".join(keyed) + "\n")).json()
    assert r["records"] == 30
    # Null keys go round robin.
    ok(ctl(srv, "produce", "rt", stdin="n0\nn1\nn2\nn3\nn4\nn5\n"))
    ok(ctl(srv, "produce", "rt", "--partition", 2, stdin="fixed\n"))

    got = consume_json(srv, "rt", "--from-beginning")
    assert len(got) == 37
    for m in got:
        if m["key"] is not None:
            assert m["partition"] == (murmur2(m["key"].encode()) & 0x7fffffff) % 3, m
            assert m["value"] == "value " + m["key"][3:]
    nulls = [m for m in got if m["key"] is None and m["value"].startswith("n")]
    assert sorted(m["value"] for m in nulls) == [f"n{i}" for i in range(6)]
    assert {m["partition"] for m in nulls} == {0, 1, 2}
    assert [m["value"] for m in got if m["value"] == "fixed"] and all(
        m["partition"] == 2 for m in got if m["value"] == "fixed")
    # Per partition, offsets are consecutive from 0.
    for p in range(3):
        offs = [m["offset"] for m in got if m["partition"] == p]
        assert offs == list(range(len(offs)))

    text = ok(ctl(srv, "consume", "rt", "--from-beginning", "--partition", 2, "--print-key")).out.splitlines()
    assert text == [f"{m['key'] or 'null'}\t{m['value']}" for m in got if m["partition"] == 2]
    assert len(consume_json(srv, "rt", "--from-beginning", "--max", 5)) == 5
    # Without --from-beginning the consumer starts at the end: nothing to print.
    assert ok(ctl(srv, "consume", "rt")).out == ""

    fails(ctl(srv, "produce", "nothere", stdin="x\n"), 1, "UNKNOWN_TOPIC_OR_PARTITION")
    fails(ctl(srv, "produce", "rt", "--partition", 7, stdin="x\n"), 1, "no partition 7")
    fails(ctl(srv, "produce", "rt", "--key-separator", ":", stdin="a:b\nnosep\n"), 1, "line 2 has no key separator")
    fails(ctl(srv, "consume", "nothere"), 1, "UNKNOWN_TOPIC_OR_PARTITION")


def test_produce_rejected_by_broker(srv):
    ok(ctl(srv, "topics", "create", "small", "--partitions", 1, "--config", "max.message.bytes=200"))
    fails(ctl(srv, "produce", "small", stdin="x" * 1000 + "\n"), 1, "MESSAGE_TOO_LARGE")


# ------------------------------------------------------------------ groups

def need_group_apis(broker):
    apis = served_apis(broker)
    missing = [name for key, name in GROUP_APIS.items() if key not in apis]
    if missing:
        pytest.skip(f"the broker does not serve {', '.join(missing)} yet")


def test_groups_with_simple_commits(srv):
    need_group_apis(srv)
    ok(ctl(srv, "topics", "create", "gt", "--partitions", 2))
    ok(ctl(srv, "produce", "gt", "--partition", 0, stdin="".join(f"a{i}\n" for i in range(10))))
    ok(ctl(srv, "produce", "gt", "--partition", 1, stdin="".join(f"b{i}\n" for i in range(4))))

    # Read 6 from the beginning with a group: they are committed, the rest is lag.
    first = consume_json(srv, "gt", "--from-beginning", "--group", "g1", "--max", 6)
    assert len(first) == 6
    rest = consume_json(srv, "gt", "--group", "g1")
    assert len(rest) == 8 and not {(m["partition"], m["offset"]) for m in first} & {(m["partition"], m["offset"]) for m in rest}

    groups = ok(ctl(srv, "groups", "list", "--output", "json")).json()
    assert any(g["group"] == "g1" for g in groups), groups
    assert "g1" in ok(ctl(srv, "groups", "list")).out

    d = ok(ctl(srv, "groups", "describe", "g1", "--output", "json")).json()
    assert d["group"] == "g1" and d["state"] == "Empty" and d["members"] == []
    offs = {(o["topic"], o["partition"]): o for o in d["offsets"]}
    assert offs[("gt", 0)]["committed_offset"] == 10 and offs[("gt", 0)]["lag"] == 0
    assert offs[("gt", 1)]["committed_offset"] == 4 and offs[("gt", 1)]["log_end_offset"] == 4

    # Dry run changes nothing; --execute commits; lag shows it.
    plan = ok(ctl(srv, "groups", "reset-offsets", "g1", "--topic", "gt", "--to-earliest", "--output", "json")).json()
    assert plan["executed"] is False and {o["new_offset"] for o in plan["offsets"]} == {0}
    d = ok(ctl(srv, "groups", "describe", "g1", "--output", "json")).json()
    assert {o["committed_offset"] for o in d["offsets"]} == {10, 4}
    ok(ctl(srv, "groups", "reset-offsets", "g1", "--topic", "gt", "--shift-by", "-3", "--execute"))
    d = ok(ctl(srv, "groups", "describe", "g1", "--output", "json")).json()
    lag = {o["partition"]: (o["committed_offset"], o["lag"]) for o in d["offsets"]}
    assert lag == {0: (7, 3), 1: (1, 3)}
    text = ok(ctl(srv, "groups", "describe", "g1")).out
    assert "LAG" in text and "CURRENT-OFFSET" in text
    ok(ctl(srv, "groups", "reset-offsets", "g1", "--topic", "gt", "--to-offset", 100, "--execute"))  # clamped
    ok(ctl(srv, "groups", "reset-offsets", "g1", "--topic", "gt", "--to-datetime", "2000-01-01T00:00:00Z", "--execute"))
    assert [m["value"] for m in consume_json(srv, "gt", "--group", "g1", "--partition", 1)] == ["b0", "b1", "b2", "b3"]
    ok(ctl(srv, "groups", "reset-offsets", "g1", "--topic", "gt", "--to-latest", "--execute"))
    assert consume_json(srv, "gt", "--group", "g1") == []

    ok(ctl(srv, "groups", "delete", "g1"))
    fails(ctl(srv, "groups", "describe", "g1"), 1, "GROUP_ID_NOT_FOUND")
    fails(ctl(srv, "groups", "delete", "g1"), 1, "GROUP_ID_NOT_FOUND")


def test_groups_with_live_member(srv):
    need_group_apis(srv)
    from confluent_kafka import Consumer
    ok(ctl(srv, "topics", "create", "live", "--partitions", 3))
    ok(ctl(srv, "produce", "live", stdin="".join(f"v{i}\n" for i in range(9))))
    c = Consumer({"bootstrap.servers": srv.bootstrap, "group.id": "g-live", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "client.id": "it-client", "session.timeout.ms": 6000})
    try:
        c.subscribe(["live"])
        deadline = time.monotonic() + 30
        while not c.assignment() and time.monotonic() < deadline:
            c.poll(0.2)
        assert c.assignment()
        msg = None
        while msg is None and time.monotonic() < deadline:
            msg = c.poll(0.2)
        c.commit(asynchronous=False)
        d = ok(ctl(srv, "groups", "describe", "g-live", "--output", "json")).json()
        assert d["state"] == "Stable" and d["protocol_type"] == "consumer"
        [m] = d["members"]
        assert m["client_id"] == "it-client"
        assert sorted((a["topic"], a["partition"]) for a in m["assignment"]) == [("live", 0), ("live", 1), ("live", 2)]
        assert all(o["member_id"] == m["member_id"] for o in d["offsets"])
        fails(ctl(srv, "groups", "reset-offsets", "g-live", "--topic", "live", "--to-earliest", "--execute"), 1,
              "Empty", "Stable")
        fails(ctl(srv, "groups", "delete", "g-live"), 1, "NON_EMPTY_GROUP")
    finally:
        c.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if ok(ctl(srv, "groups", "describe", "g-live", "--output", "json")).json()["state"] == "Empty":
            break
        time.sleep(0.2)
    ok(ctl(srv, "groups", "reset-offsets", "g-live", "--topic", "live", "--to-earliest", "--execute"))
    ok(ctl(srv, "groups", "delete", "g-live"))


# ------------------------------------------------------------------ an API the broker lacks

def fake_broker(apis):
    """A listener that answers ApiVersions (v0 or v3) with only `apis` and closes on anything else."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                while True:
                    head = conn.recv(4, socket.MSG_WAITALL)
                    if len(head) < 4:
                        break
                    frame = conn.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
                    key, version, corr = struct.unpack(">hhi", frame[:8])
                    if key != 18:
                        break
                    if version >= 3:
                        body = struct.pack(">h", 0) + bytes([len(apis) + 1])
                        body += b"".join(struct.pack(">hhh", k, lo, hi) + b"\x00" for k, (lo, hi) in apis.items())
                        body += struct.pack(">i", 0) + b"\x00"
                    else:
                        body = struct.pack(">hi", 0, len(apis)) + b"".join(
                            struct.pack(">hhh", k, lo, hi) for k, (lo, hi) in apis.items())
                    payload = struct.pack(">i", corr) + body
                    conn.sendall(struct.pack(">i", len(payload)) + payload)

    threading.Thread(target=serve, daemon=True).start()
    return sock


def test_unsupported_api_is_named():
    sock = fake_broker({18: (0, 4), 3: (0, 12)})
    try:
        port = sock.getsockname()[1]
        r = ctl(None, "--bootstrap-server", f"127.0.0.1:{port}", "groups", "describe", "g", bootstrap=False)
        fails(r, 1, "does not support FindCoordinator")
        r = ctl(None, "--bootstrap-server", f"127.0.0.1:{port}", "topics", "create", "t", bootstrap=False)
        fails(r, 1, "does not support CreateTopics")
    finally:
        sock.close()
