"""The campaign's "http" workload: a writer that publishes through the /v1 HTTP API of a node
picked at random for every request (so most writes are forwarded to their leader), half of
its requests with base64 keys and values, at acks=all. It writes the campaign's topic with
the same unique values as the Kafka writers, so the checker's durability checks ("lost",
"moved", ...) hold it to acks=all's promise; its own anomaly is "http_misplaced": a keyed
record acknowledged in another partition than Java's default partitioner gives its key
(murmur2 of the key's bytes, made positive, modulo the partition count), which would break
the order of a key shared with Kafka producers.
"""
import base64
import http.client
import json
import random

from kafka.partitioner.default import murmur2

from workloads import Writer

BROKER_SETTINGS = {"http.request.timeout.ms": "5000"}
HTTP_PORT = 8080  # in a network namespace of its own, each node has the port to itself


def listen(cluster, free_port):
    """Gives every node of `cluster` (not started yet) an HTTP listener; node id -> (host, port)."""
    addresses = {}
    for i, n in cluster.nodes.items():
        host = getattr(n, "host", "127.0.0.1")
        port = HTTP_PORT if host != "127.0.0.1" else free_port()
        n.overrides["http.listeners"] = f"http://{host}:{port}"
        addresses[i] = (host, port)
    return addresses
ANOMALIES = ("http_misplaced",)


class HttpWriter(Writer):
    """One record per POST, synchronously: the answer is known before the next is sent."""

    def __init__(self, recorder, topic, rate, addresses, seed):
        super().__init__("http", recorder, topic, rate)
        self.addresses = dict(addresses)  # node id -> (host, HTTP port)
        self.random = random.Random(seed)
        self.unavailable = 0  # answers 503 (no leader, not enough replicas)

    def send(self, key, value):
        node = self.random.choice(sorted(self.addresses))
        b64 = self.random.random() < 0.5
        record = {"key": key, "value": value}
        if b64:
            record = {k: base64.b64encode(v.encode()).decode() for k, v in record.items()}
        body = {"records": [record]}
        if b64:
            body["encoding"] = "base64"
        host, port = self.addresses[node]
        conn = http.client.HTTPConnection(host, port, timeout=20)
        try:
            conn.request("POST", f"/v1/topics/{self.topic}/records", body=json.dumps(body).encode(),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            answer = json.loads(resp.read() or b"{}")
        except (OSError, http.client.HTTPException, ValueError) as e:
            self.failed(value, f"node {node}: {type(e).__name__}: {e}")  # the write may or may not be in
            return True
        finally:
            conn.close()
        offsets = answer.get("offsets") or [{}]
        first = offsets[0]
        if resp.status == 200 and "offset" in first:
            self.acked(value, first["partition"], first["offset"])
        else:
            if resp.status == 503:
                self.unavailable += 1
            self.failed(value, f"node {node}: {resp.status} {first.get('error') or answer.get('error')}")
        return True


def check(events, partitions):
    """http_misplaced: the http writer's acknowledged records whose partition is not their
    key's (values are "<writer>|<key>|<seq>")."""
    misplaced = []
    for e in events:
        if e["type"] != "ack" or e.get("writer") != "http" or e.get("topic"):
            continue
        key = e["value"].split("|")[1]
        want = (murmur2(key.encode()) & 0x7FFFFFFF) % partitions
        if e["partition"] != want:
            misplaced.append({"value": e["value"], "partition": e["partition"], "expected": want})
    return {"http_misplaced": misplaced}
