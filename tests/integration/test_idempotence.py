"""The idempotent producer: a retried write is never written twice.

- Through a proxy that lets the broker process a Produce request and then breaks the
  connection before the response reaches the client, every record is read back exactly
  once and in per-key order, and every delivery report is a success.
- kill -9 of the broker mid-stream and a restart: the producer's retries after the restart
  are recognised from the producer state rebuilt from disk; no duplicates, nothing acked lost.
- InitProducerId refuses an empty transactional id; DescribeProducers lists the producers.
"""
import struct
import threading
import time

from confluent_kafka import Producer

import kafka_wire as kw
from brokerd_harness import free_port
from clients import create_topic, read_all
from faulty_proxy import FaultyProxy

PARTITIONS = 4
KEYS = 64


def proxied_broker(broker_factory, overrides=None, drop_every=0):
    proxy_port = free_port()
    props = {"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy_port}"}
    props.update(overrides or {})
    broker = broker_factory(props)
    proxy = FaultyProxy(proxy_port, broker.port, drop_every=drop_every).start()
    return broker, proxy


def idempotent_producer(bootstrap, **extra):
    conf = {"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 2,
            "batch.num.messages": 100, "max.in.flight.requests.per.connection": 5,
            "message.timeout.ms": 120000, "retry.backoff.ms": 20, "reconnect.backoff.ms": 10,
            "reconnect.backoff.max.ms": 200}
    conf.update(extra)
    return Producer(conf)


def check_exactly_once(got, expected_per_key=None):
    """Each (key, seq) once, in per-key order; returns {key: [seq...]}."""
    seqs = {}
    for p, msgs in got.items():
        for m in msgs:
            key = m.key().decode()
            seqs.setdefault(key, []).append(int(m.value().decode().rsplit(":", 1)[1]))
    for key, s in seqs.items():
        assert len(s) == len(set(s)), f"{key}: {len(s) - len(set(s))} duplicates"
        assert s == sorted(s), f"{key}: out of order"
        if expected_per_key is not None:
            assert s == list(range(expected_per_key)), f"{key}: {len(s)} of {expected_per_key} records"
    return seqs


def test_dropped_responses_are_retried_without_duplicates(broker_factory):
    broker, proxy = proxied_broker(broker_factory, {"log.segment.bytes": 262144}, drop_every=0)
    try:
        topic = "idem-proxy"
        create_topic(broker.bootstrap, topic, PARTITIONS)
        proxy.drop_every = 13
        per_key = 500  # 32,000 records
        failures, delivered = [], [0]

        def on_delivery(err, msg):
            if err is not None:
                failures.append(str(err))
            else:
                delivered[0] += 1

        p = idempotent_producer(f"127.0.0.1:{proxy.listen_port}", **{"batch.num.messages": 20})
        for seq in range(per_key):
            for k in range(KEYS):
                while True:
                    try:
                        p.produce(topic, key=f"key{k}", value=f"key{k}:{seq}", on_delivery=on_delivery)
                        break
                    except BufferError:
                        p.poll(0.01)
            p.poll(0)
        remaining = p.flush(150)
        assert remaining == 0, f"{remaining} records undelivered after 150 s; proxy {proxy.stats()}"
        assert not failures, f"{len(failures)} failed deliveries, e.g. {failures[:3]}"
        assert delivered[0] == KEYS * per_key
        stats = proxy.stats()
        assert stats["dropped"] >= 5, f"the proxy broke too few responses: {stats}"

        proxy.drop_every = 0
        got = read_all(broker.bootstrap, topic, PARTITIONS)
        assert sum(len(v) for v in got.values()) == KEYS * per_key
        check_exactly_once(got, per_key)
        print(f"proxy: {stats}")
    finally:
        proxy.stop()


def test_the_proxy_duplicates_writes_of_a_producer_without_idempotence(broker_factory):
    """The fault the test above survives is real: without idempotence it duplicates records."""
    broker, proxy = proxied_broker(broker_factory)
    try:
        topic = "plain-proxy"
        create_topic(broker.bootstrap, topic, 1)
        proxy.drop_every = 5
        p = Producer({"bootstrap.servers": f"127.0.0.1:{proxy.listen_port}", "acks": "all", "linger.ms": 2,
                      "batch.num.messages": 20, "retries": 1000, "retry.backoff.ms": 20,
                      "message.timeout.ms": 60000, "max.in.flight.requests.per.connection": 1,
                      "reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 200})
        for i in range(2000):
            p.produce(topic, key="k", value=f"k:{i}")
            p.poll(0)
        assert p.flush(60) == 0
        proxy.drop_every = 0
        got = read_all(broker.bootstrap, topic, 1)
        assert sum(len(v) for v in got.values()) > 2000, "no duplicates: the proxy injected no fault"
    finally:
        proxy.stop()


def test_kill9_mid_idempotent_stream(broker_factory):
    broker = broker_factory({"log.segment.bytes": 65536})
    topic = "idem-crash"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    acked, failed = [], []
    lock = threading.Lock()
    stop = threading.Event()

    def on_delivery(err, msg):
        with lock:
            if err is None:
                acked.append((msg.partition(), msg.offset(), msg.value().decode()))
            else:
                failed.append(str(err))

    p = idempotent_producer(broker.bootstrap, **{"message.timeout.ms": 60000})
    sent = [0]

    def run():
        seq = 0
        while not stop.is_set():
            try:
                k = seq % KEYS
                p.produce(topic, key=f"key{k}", value=f"key{k}:{seq // KEYS}", on_delivery=on_delivery)
                seq += 1
            except BufferError:
                p.poll(0.005)
            p.poll(0 if seq % 100 else 0.001)
        sent[0] = seq

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(acked) < 20000:
        time.sleep(0.02)
    broker.kill()  # mid-stream; the producer keeps sending and retrying
    time.sleep(0.5)
    broker.restart()
    deadline = time.monotonic() + 30
    after = len(acked)
    while time.monotonic() < deadline and len(acked) < after + 10000:
        time.sleep(0.02)
    stop.set()
    t.join(timeout=10)
    assert p.flush(90) == 0, "records undelivered 90 s after the restart"
    with lock:
        acked_now, failed_now = list(acked), list(failed)
    assert not failed_now, f"{len(failed_now)} failed deliveries, e.g. {failed_now[:3]}"
    assert len(acked_now) == sent[0]

    got = read_all(broker.bootstrap, topic, PARTITIONS)
    stored = {(p_, m.offset()): m.value().decode() for p_, msgs in got.items() for m in msgs}
    missing = [a for a in acked_now if stored.get((a[0], a[1])) != a[2]]
    assert not missing, f"{len(missing)} acknowledged records lost or moved, e.g. {missing[:5]}"
    assert sum(len(v) for v in got.values()) == len(acked_now), "records in the log that were never acknowledged"
    check_exactly_once(got)
    assert "producer state rebuilt" in broker.log_text(), "the restart did not rebuild producer state from the log"


# ---------------------------------------------------------------- raw protocol checks

def request(conn, api_key, version, body, flexible):
    """Sends one request; returns the response body (after the correlation id/tagged fields)."""
    header = struct.pack(">hhi", api_key, version, 7) + kw.string("it")
    if flexible:
        header += b"\x00"
    frame = header + body
    conn.sock.sendall(struct.pack(">i", len(frame)) + frame)
    size = struct.unpack(">i", conn.recv_exact(4))[0]
    resp = conn.recv_exact(size)
    return resp[5:] if flexible else resp[4:]


def init_producer_id(conn, transactional_id=None, pid=-1, epoch=-1, version=4):
    # v2+ flexible: compact nullable string, int32, int64, int16, tagged fields.
    tid = b"\x00" if transactional_id is None else bytes([len(transactional_id) + 1]) + transactional_id.encode()
    body = tid + struct.pack(">iqh", 60000, pid, epoch) + b"\x00"
    r = request(conn, 22, version, body, flexible=True)
    _throttle, err, out_pid, out_epoch = struct.unpack(">ihqh", r[:16])
    return err, out_pid, out_epoch


def test_init_producer_id_rules(broker):
    conn = kw.Connection(broker.port)
    try:
        err, pid, epoch = init_producer_id(conn)
        assert (err, epoch) == (0, 0) and pid >= 0
        err, pid2, _ = init_producer_id(conn)
        assert err == 0 and pid2 != pid
        # KIP-360: the current id and epoch bump the epoch; a retry of that bump gets the same answer.
        assert init_producer_id(conn, pid=pid, epoch=0) == (0, pid, 1)
        assert init_producer_id(conn, pid=pid, epoch=0) == (0, pid, 1)
        assert init_producer_id(conn, pid=pid, epoch=1) == (0, pid, 2)
        assert init_producer_id(conn, pid=pid, epoch=0)[0] == 90  # PRODUCER_FENCED
        assert init_producer_id(conn, pid=pid, epoch=0, version=3)[0] == 47  # INVALID_PRODUCER_EPOCH before v4
        # The exhausted epoch moves the producer to a new id (an id this node does not track
        # is taken on trust, as after a restart).
        err, pid3, epoch3 = init_producer_id(conn, pid=pid2 + 500, epoch=32766)
        assert err == 0 and pid3 not in (pid, pid2, pid2 + 500) and epoch3 == 0
        assert init_producer_id(conn, pid=pid, epoch=-1)[0] == 42  # INVALID_REQUEST
        # An empty transactional id is refused (a named one goes to its coordinator: test_transactions.py).
        assert init_producer_id(conn, transactional_id="")[0] == 42  # INVALID_REQUEST
    finally:
        conn.close()


def test_producer_ids_never_repeat_across_restarts(broker):
    conn = kw.Connection(broker.port)
    first = [init_producer_id(conn)[1] for _ in range(3)]
    conn.close()
    broker.kill()
    broker.restart()
    conn = kw.Connection(broker.port)
    try:
        after = [init_producer_id(conn)[1] for _ in range(3)]
    finally:
        conn.close()
    assert not set(first) & set(after), (first, after)
    assert min(after) > max(first)


def describe_producers(conn, topic, partitions):
    body = bytes([2, len(topic) + 1]) + topic.encode() + bytes([len(partitions) + 1]) + b"".join(struct.pack(">i", p) for p in partitions)
    body += b"\x00" + b"\x00"
    r = request(conn, 61, 0, body, flexible=True)
    rd = memoryview(r)
    pos = 4  # throttle
    out = {}
    ntopics = rd[pos] - 1
    pos += 1
    for _ in range(ntopics):
        n = rd[pos] - 1
        pos += 1 + n
        nparts = rd[pos] - 1
        pos += 1
        for _ in range(nparts):
            index, err = struct.unpack(">ih", rd[pos:pos + 6])
            pos += 6
            assert rd[pos] == 0  # null error message
            pos += 1
            nprod = rd[pos] - 1
            pos += 1
            producers = []
            for _ in range(nprod):
                pid, epoch, last_seq, last_ts, coord_epoch, txn_start = struct.unpack(">qiiqiq", rd[pos:pos + 36])
                pos += 36 + 1  # tagged fields
                producers.append((pid, epoch, last_seq, coord_epoch, txn_start))
            pos += 1
            out[index] = (err, producers)
        pos += 1
    return out


def test_describe_producers(broker):
    topic = "idem-describe"
    create_topic(broker.bootstrap, topic, 2)
    p = idempotent_producer(broker.bootstrap)
    for i in range(10):
        p.produce(topic, value=f"v:{i}", partition=0)
    assert p.flush(30) == 0
    conn = kw.Connection(broker.port)
    try:
        out = describe_producers(conn, topic, [0, 1, 7])
    finally:
        conn.close()
    err0, producers0 = out[0]
    assert err0 == 0 and len(producers0) == 1
    _pid, epoch, last_seq, coord_epoch, txn_start = producers0[0]
    assert (epoch, last_seq, coord_epoch, txn_start) == (0, 9, -1, -1)
    assert out[1] == (0, [])
    assert out[7][0] == 3  # UNKNOWN_TOPIC_OR_PARTITION
