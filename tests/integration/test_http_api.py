"""The /v1 HTTP API on three real brokerd processes, driven with Python's http.client and curl,
checked against real Kafka clients on the other side (librdkafka, kafka-python): every call of
the contract, its errors, where keyed records go (Kafka's murmur2, kafka-python's own copy as
the oracle), long polls woken by a Kafka producer, positions shared with Kafka's group offsets,
writes and reads through a node that leads nothing, and bad input that fails alone."""
import base64
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "utils"))

from brokerd_harness import free_port  # noqa: E402
from cluster_harness import QuorumCluster  # noqa: E402
from kafka.partitioner.default import murmur2  # noqa: E402

MAX_BODY = 1 << 20


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    http_ports = {i: free_port() for i in (1, 2, 3)}
    c = QuorumCluster(tmp_path_factory.mktemp("http"), overrides={
        "offsets.topic.replication.factor": "3", "http.max.request.bytes": str(MAX_BODY),
        "http.request.timeout.ms": "10000"},
        per_node={i: {"http.listeners": f"http://127.0.0.1:{p}", "metrics.listener": f"127.0.0.1:{free_port()}"}
                  for i, p in http_ports.items()})
    c.http_ports = http_ports
    try:
        yield c.start()
    except BaseException:
        for n in c.nodes.values():
            sys.stderr.write(f"\n===== brokerd output ({n.workdir}) =====\n{n.all_logs()}\n")
        raise
    finally:
        c.tear_down()


def call(cluster, node, method, path, body=None, raw=None, timeout=30):
    """(status, parsed JSON body, headers) of one request to `node`'s HTTP API."""
    conn = http.client.HTTPConnection("127.0.0.1", cluster.http_ports[node], timeout=timeout)
    try:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        text = resp.read()
        return resp.status, (json.loads(text) if text else None), dict(resp.getheaders())
    finally:
        conn.close()


def create(cluster, name, partitions=3, copies=3, node=1, **extra):
    status, body, _ = call(cluster, node, "POST", "/v1/topics",
                           {"name": name, "partitions": partitions, "copies": copies, **extra})
    assert status == 201, body
    return body


def leaders(cluster, topic, node=1):
    status, body, _ = call(cluster, node, "GET", f"/v1/topics/{topic}/metadata")
    assert status == 200, body
    return {p["partition"]: p["leader"] for p in body["partitions"]}


def read(cluster, node, topic, partition, offset=0, **params):
    q = "&".join(f"{k}={v}" for k, v in {"offset": offset, **params}.items())
    return call(cluster, node, "GET", f"/v1/topics/{topic}/partitions/{partition}/records?{q}")


def test_create_topic_and_its_metadata(cluster):
    body = create(cluster, "h-create", partitions=4, copies=3, retention_ms=3600000, keep_latest=False,
                  configs={"segment.bytes": 1048576})
    assert body["name"] == "h-create" and body["id"]
    assert [p["partition"] for p in body["partitions"]] == [0, 1, 2, 3]
    for p in body["partitions"]:
        assert p["leader"] in (1, 2, 3) and sorted(p["replicas"]) == [1, 2, 3] and p["leader"] in p["isr"]
    # Every node answers the same metadata.
    for node in (2, 3):
        status, other, _ = call(cluster, node, "GET", "/v1/topics/h-create/metadata")
        assert status == 200 and other["id"] == body["id"]
    # Kafka's view agrees: the retention given is the topic's config.
    from confluent_kafka.admin import AdminClient, ConfigResource
    a = AdminClient({"bootstrap.servers": cluster.bootstrap()})
    res = ConfigResource("topic", "h-create")
    configs = a.describe_configs([res])[res].result(timeout=15)
    assert configs["retention.ms"].value == "3600000"
    assert configs["segment.bytes"].value == "1048576"


def test_create_topic_errors(cluster):
    create(cluster, "h-dup", partitions=1, copies=1)
    status, body, _ = call(cluster, 2, "POST", "/v1/topics", {"name": "h-dup", "partitions": 1, "copies": 1})
    assert status == 409 and body["error"] == "topic_already_exists", body
    status, body, _ = call(cluster, 1, "POST", "/v1/topics", {"name": "h-bad", "partitions": 0, "copies": 1})
    assert status == 400 and body["error"] == "invalid_request", body
    status, body, _ = call(cluster, 1, "POST", "/v1/topics", {"name": "h-bad", "partitions": 1, "copies": 5})
    assert status == 400 and body["error"] == "invalid_replication_factor", body
    status, body, _ = call(cluster, 1, "POST", "/v1/topics", raw=b"{not json")
    assert status == 400 and body["error"] == "invalid_request", body
    status, body, _ = call(cluster, 1, "POST", "/v1/topics", {"name": 7, "partitions": 1, "copies": 1})
    assert status == 400 and '"name"' in body["message"], body
    status, body, _ = call(cluster, 1, "GET", "/v1/topics/h-nothing/metadata")
    assert status == 404 and body["error"] == "unknown_topic_or_partition", body
    status, body, headers = call(cluster, 1, "GET", "/v1/topics")
    assert status == 405 and headers.get("Allow") == "POST", body
    status, body, _ = call(cluster, 1, "GET", "/v2/anything")
    assert status == 404, body


def test_keyed_records_go_where_kafkas_partitioner_puts_them_and_read_back_in_order(cluster):
    create(cluster, "h-keys", partitions=5, copies=3)
    keys = [f"key-{i}" for i in range(40)]
    records = [{"key": k, "value": f"v{n}-{k}"} for n in range(3) for k in keys]
    # Through every node, in three requests: each key's records in publish order.
    answers = []
    for n, node in enumerate((1, 2, 3)):
        chunk = records[n * len(keys):(n + 1) * len(keys)]
        status, body, _ = call(cluster, node, "POST", "/v1/topics/h-keys/records", {"records": chunk})
        assert status == 200, body
        assert len(body["offsets"]) == len(chunk)
        answers += body["offsets"]
    for rec, ans in zip(records, answers):
        expected = (murmur2(rec["key"].encode()) & 0x7FFFFFFF) % 5
        assert ans["partition"] == expected, (rec, ans)
        assert ans["offset"] >= 0
    # Read back from every node: exactly the records written, each at the offset it was given.
    by_offset = {(a["partition"], a["offset"]): r for r, a in zip(records, answers)}
    for p in range(5):
        status, body, _ = read(cluster, 1 + p % 3, "h-keys", p)
        assert status == 200, body
        got = {(p, r["offset"]): {"key": r["key"], "value": r["value"]} for r in body["records"]}
        want = {k: v for k, v in by_offset.items() if k[0] == p}
        assert got == want
        assert body["latest_offset"] == body["next_offset"] == len(want)
    # librdkafka with Java's partitioner agrees.
    prod = Producer({"bootstrap.servers": cluster.bootstrap(), "partitioner": "murmur2_random"})
    seen = {}
    for k in keys[:10]:
        prod.produce("h-keys", key=k, value=b"x", on_delivery=lambda e, m: seen.__setitem__(m.key().decode(), m.partition()))
    assert prod.flush(30) == 0
    for k in keys[:10]:
        assert seen[k] == (murmur2(k.encode()) & 0x7FFFFFFF) % 5


def test_headers_base64_tombstones_and_kafka_clients_both_ways(cluster):
    create(cluster, "h-interop", partitions=1, copies=3)
    raw = bytes(range(256))
    status, body, _ = call(cluster, 2, "POST", "/v1/topics/h-interop/records", {"encoding": "base64", "records": [
        {"key": base64.b64encode(b"bin").decode(), "value": base64.b64encode(raw).decode(),
         "headers": [{"key": "h1", "value": base64.b64encode(b"\x00\x01").decode()}]},
        {"key": base64.b64encode(b"gone").decode(), "value": None}]})
    assert status == 200, body
    status, body, _ = call(cluster, 3, "POST", "/v1/topics/h-interop/records", {"records": [
        {"key": "text", "value": "héllo", "headers": [{"key": "trace", "value": "abc"}, {"key": "empty", "value": None}]}]})
    assert status == 200, body
    # librdkafka reads what HTTP wrote, headers and tombstone included.
    c = Consumer({"bootstrap.servers": cluster.bootstrap(), "group.id": "h-interop-reader",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([TopicPartition("h-interop", 0, 0)])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 3 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append(m)
    c.close()
    assert len(got) == 3
    assert (got[0].key(), got[0].value(), got[0].headers()) == (b"bin", raw, [("h1", b"\x00\x01")])
    assert (got[1].key(), got[1].value()) == (b"gone", None)
    assert (got[2].key(), got[2].value().decode(), got[2].headers()) == (b"text", "héllo", [("trace", b"abc"), ("empty", None)])
    # A Kafka producer's records read through HTTP, headers included.
    p = Producer({"bootstrap.servers": cluster.bootstrap(), "acks": "all"})
    p.produce("h-interop", key=b"from-kafka", value=b"v", headers=[("x", b"y")])
    assert p.flush(30) == 0
    status, body, _ = read(cluster, 1, "h-interop", 0, offset=3)
    assert status == 200, body
    [r] = body["records"]
    assert (r["offset"], r["key"], r["value"], r["headers"]) == (3, "from-kafka", "v", [{"key": "x", "value": "y"}])
    # Binary values need base64 to be read; with it, they come back whole.
    status, body, _ = read(cluster, 1, "h-interop", 0)
    assert status == 400 and "base64" in body["message"], body
    status, body, _ = read(cluster, 1, "h-interop", 0, encoding="base64")
    assert status == 200
    assert base64.b64decode(body["records"][0]["value"]) == raw
    assert body["records"][1]["value"] is None
    # kafka-python sees the same records.
    from kafka import KafkaConsumer
    kc = KafkaConsumer(bootstrap_servers=cluster.bootstrap().split(","), auto_offset_reset="earliest",
                       consumer_timeout_ms=5000, enable_auto_commit=False)
    from kafka import TopicPartition as KTP
    kc.assign([KTP("h-interop", 0)])
    seen = [(m.key, m.value, m.headers) for m in kc]
    kc.close()
    assert seen[2] == (b"text", "héllo".encode(), [("trace", b"abc"), ("empty", None)])


def test_writes_and_reads_through_a_node_that_leads_nothing(cluster):
    create(cluster, "h-single", partitions=1, copies=1)
    leader = leaders(cluster, "h-single")[0]
    others = [n for n in (1, 2, 3) if n != leader]
    for node in others:
        status, body, _ = call(cluster, node, "POST", "/v1/topics/h-single/records",
                               {"records": [{"value": f"via-{node}"}]})
        assert status == 200, body
    status, body, _ = read(cluster, others[0], "h-single", 0)
    assert status == 200
    assert [r["value"] for r in body["records"]] == [f"via-{n}" for n in others]


def test_a_long_poll_is_woken_by_a_kafka_producers_write(cluster):
    create(cluster, "h-poll", partitions=1, copies=3)
    leader = leaders(cluster, "h-poll")[0]
    result = {}

    def poll(node):
        t0 = time.monotonic()
        result[node] = (read(cluster, node, "h-poll", 0, wait_ms=9000), time.monotonic() - t0)

    # One poll on the leader, one through another node.
    nodes = [leader, next(n for n in (1, 2, 3) if n != leader)]
    threads = [threading.Thread(target=poll, args=(n,)) for n in nodes]
    for t in threads:
        t.start()
    time.sleep(1.0)
    p = Producer({"bootstrap.servers": cluster.bootstrap(), "acks": "all"})
    p.produce("h-poll", value=b"wake")
    assert p.flush(30) == 0
    for t in threads:
        t.join(30)
    for n in nodes:
        (status, body, _), took = result[n]
        assert status == 200 and [r["value"] for r in body["records"]] == ["wake"], body
        assert took < 8.0, f"node {n}'s poll waited its whole wait_ms ({took:.1f}s)"
    # Nothing at the offset: the poll waits its wait_ms and answers empty.
    t0 = time.monotonic()
    status, body, _ = read(cluster, 1, "h-poll", 0, offset=1, wait_ms=500)
    assert status == 200 and body["records"] == [] and body["next_offset"] == 1
    assert time.monotonic() - t0 >= 0.4


def test_read_errors(cluster):
    create(cluster, "h-readerr", partitions=1, copies=1)
    call(cluster, 1, "POST", "/v1/topics/h-readerr/records", {"records": [{"value": "a"}]})
    status, body, _ = read(cluster, 1, "h-readerr", 0, offset=5)
    assert status == 416 and body["error"] == "offset_out_of_range", body
    status, body, _ = read(cluster, 2, "h-readerr", 3)
    assert status == 404, body
    status, body, _ = read(cluster, 1, "h-readerr", 0, encoding="rot13")
    assert status == 400, body
    status, body, _ = read(cluster, 1, "h-readerr", 0, offset="x")
    assert status == 400, body
    status, body, _ = call(cluster, 1, "GET", "/v1/topics/h-readerr/partitions/-1/records")
    assert status == 400, body


def test_produce_errors(cluster):
    create(cluster, "h-proderr", partitions=2, copies=1)
    for bad in ({}, {"records": []}, {"records": [{"key": "k"}]}, {"records": [{"value": 5}]},
                {"records": [{"value": "v", "partition": -1}]}, {"records": [{"value": "v"}], "encoding": "hex"},
                {"records": [{"value": "***"}], "encoding": "base64"}, {"records": [{"value": "v"}], "acks": 2}):
        status, body, _ = call(cluster, 1, "POST", "/v1/topics/h-proderr/records", bad)
        assert status == 400 and body["error"] == "invalid_request", (bad, body)
    status, body, _ = call(cluster, 1, "POST", "/v1/topics/h-proderr/records",
                           {"records": [{"value": "v", "partition": 2}]})
    assert status == 404, body
    status, body, _ = call(cluster, 1, "POST", "/v1/topics/h-none/records", {"records": [{"value": "v"}]})
    assert status == 404, body
    # A record larger than max.message.bytes: 413, with the error in the record's place.
    create(cluster, "h-small", partitions=1, copies=1, configs={"max.message.bytes": "1000"})
    status, body, _ = call(cluster, 2, "POST", "/v1/topics/h-small/records", {"records": [{"value": "x" * 5000}]})
    assert status == 413, body
    assert body["offsets"][0]["error"] == "message_too_large"
    # A body over http.max.request.bytes: 413 as soon as its length is known, and the connection
    # closed; the node serves on.
    with socket.create_connection(("127.0.0.1", cluster.http_ports[1]), timeout=10) as s:
        s.sendall(b"POST /v1/topics/h-proderr/records HTTP/1.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: " + str(MAX_BODY + 10).encode() + b"\r\n\r\n" + b"x" * 1000)
        answer = s.recv(4096)
        assert b" 413 " in answer.split(b"\r\n")[0], answer
        assert b"record_list_too_large" in answer
    status, _, _ = call(cluster, 1, "GET", "/v1/topics/h-proderr/metadata")
    assert status == 200


def test_positions_are_kafkas_committed_offsets_both_ways(cluster):
    create(cluster, "h-pos", partitions=2, copies=3)
    status, body, _ = call(cluster, 3, "POST", "/v1/topics/h-pos/records",
                           {"records": [{"value": str(i), "partition": i % 2} for i in range(10)]})
    assert status == 200
    status, body, _ = call(cluster, 1, "GET", "/v1/groups/h-nobody/positions")
    assert status == 404 and body["error"] == "group_id_not_found", body
    status, body, _ = call(cluster, 2, "POST", "/v1/groups/h-g1/positions",
                           {"positions": [{"topic": "h-pos", "partition": 0, "offset": 3},
                                          {"topic": "h-pos", "partition": 1, "offset": 5}]})
    assert status == 200, body
    # Kafka's OffsetFetch sees them.
    c = Consumer({"bootstrap.servers": cluster.bootstrap(), "group.id": "h-g1", "enable.auto.commit": False})
    committed = c.committed([TopicPartition("h-pos", 0), TopicPartition("h-pos", 1)], timeout=15)
    c.close()
    assert [(tp.partition, tp.offset) for tp in committed] == [(0, 3), (1, 5)]
    # From every node, with the high watermark and the lag.
    for node in (1, 2, 3):
        status, body, _ = call(cluster, node, "GET", "/v1/groups/h-g1/positions")
        assert status == 200, body
        assert body["positions"] == [
            {"topic": "h-pos", "partition": 0, "offset": 3, "latest_offset": 5, "lag": 2},
            {"topic": "h-pos", "partition": 1, "offset": 5, "latest_offset": 5, "lag": 0}]
    # A Kafka consumer's commit is visible as a position.
    c = Consumer({"bootstrap.servers": cluster.bootstrap(), "group.id": "h-g2", "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition("h-pos", 1, 4)], asynchronous=False)
    c.close()
    status, body, _ = call(cluster, 3, "GET", "/v1/groups/h-g2/positions")
    assert status == 200 and body["positions"] == [
        {"topic": "h-pos", "partition": 1, "offset": 4, "latest_offset": 5, "lag": 1}], body


def test_a_group_with_live_members_refuses_a_position_from_outside(cluster):
    create(cluster, "h-live", partitions=1, copies=3)
    c = Consumer({"bootstrap.servers": cluster.bootstrap(), "group.id": "h-live-g", "session.timeout.ms": 10000,
                  "enable.auto.commit": False})
    c.subscribe(["h-live"])
    try:
        deadline = time.monotonic() + 30
        while not c.assignment() and time.monotonic() < deadline:
            c.poll(0.2)
        assert c.assignment()
        status, body, _ = call(cluster, 1, "POST", "/v1/groups/h-live-g/positions",
                               {"positions": [{"topic": "h-live", "partition": 0, "offset": 1}]})
        assert status == 409 and body["error"] in ("unknown_member_id", "illegal_generation"), body
        status, body, _ = call(cluster, 1, "POST", "/v1/groups/h-live-g/positions",
                               {"positions": [{"topic": "h-live", "partition": 0, "offset": 1}],
                                "member_id": "someone-else", "generation_id": 1})
        assert status == 409, body
    finally:
        c.close()


def test_pipelined_requests_on_one_connection_are_answered_in_order(cluster):
    create(cluster, "h-pipe", partitions=1, copies=1)
    port = cluster.http_ports[1]
    reqs = b""
    for i in range(5):
        body = json.dumps({"records": [{"value": f"p{i}"}]}).encode()
        reqs += (b"POST /v1/topics/h-pipe/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(reqs)
        data = b""
        deadline = time.monotonic() + 30
        while data.count(b'"offsets"') < 5 and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    offsets = [json.loads(part.split(b"\r\n\r\n", 1)[1].split(b"HTTP/1.1")[0])["offsets"][0]["offset"]
               for part in data.split(b"HTTP/1.1 200")[1:]]
    assert offsets == [0, 1, 2, 3, 4]


def test_bad_connections_fail_alone(cluster):
    port = cluster.http_ports[2]
    # Malformed HTTP: 400 and closed.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        assert b" 400 " in s.recv(4096).split(b"\r\n")[0]
    # Headers past the bound: 431.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /v1/topics/x/metadata HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
        assert b" 431 " in s.recv(4096).split(b"\r\n")[0]
    # A slow sender is cut off within http.request.timeout.ms (10 s here).
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        t0 = time.monotonic()
        s.sendall(b"POST /v1/topics/x/records HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        assert s.recv(4096) == b""
        assert time.monotonic() - t0 < 20
    # curl works against the node all the while.
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                          f"http://127.0.0.1:{port}/v1/topics/h-keys/metadata"], capture_output=True, text=True, timeout=30)
    assert out.stdout in ("200", "404")


def test_the_openapi_description_names_exactly_the_routes_served(cluster):
    import re
    import yaml
    root = Path(__file__).resolve().parents[2]
    spec = yaml.safe_load((root / "docs" / "http-api.yaml").read_text())
    documented = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}
    table = re.findall(r"^//\s+(GET|POST)\s+(/v1/\S+)", (root / "src" / "http" / "api_routes.h").read_text(), re.M)
    assert documented == {(m, p.replace("{p}", "{partition}")) for m, p in table}
    create(cluster, "h-openapi", partitions=1, copies=1)
    for method, path in sorted(documented):
        concrete = path.replace("{topic}", "h-openapi").replace("{partition}", "0").replace("{group}", "h-openapi-g")
        body = {"POST": {}}.get(method)
        status, answer, _ = call(cluster, 1, method, concrete, body)
        assert status != 405, (method, path)
        assert not (status == 404 and answer["message"].startswith("no such route")), (method, path)
    status, answer, _ = call(cluster, 1, "DELETE", "/v1/topics/h-openapi/metadata")
    assert status == 405


def test_every_route_is_counted_in_the_metrics(cluster):
    from prometheus_text import scrape, value
    create(cluster, "h-metrics", partitions=1, copies=1, node=3)
    call(cluster, 3, "POST", "/v1/topics/h-metrics/records", {"records": [{"value": "m"}]})
    read(cluster, 3, "h-metrics", 0)
    call(cluster, 3, "GET", "/v1/topics/h-metrics-none/metadata")
    port = int(cluster.nodes[3].overrides["metrics.listener"].rsplit(":", 1)[1])
    samples = scrape(port)[0]
    for route in ("create_topic", "produce", "read", "topic_metadata"):
        assert value(samples, "brokerd_http_requests_total", route=route) >= 1, route
        assert value(samples, "brokerd_http_request_latency_seconds_count", route=route) >= 1, route
    assert value(samples, "brokerd_http_request_bytes_total", route="produce") > 0
    assert value(samples, "brokerd_http_response_bytes_total", route="read") > 0
    assert value(samples, "brokerd_http_responses_total", status="201") >= 1
    assert value(samples, "brokerd_http_responses_total", status="404") >= 1
