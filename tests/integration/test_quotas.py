"""Client quotas (KIP-546): set and listed with `brokerctl quotas`, stored in the metadata
log, and enforced: a producer or consumer over its byte rate is slowed to it, while a client
without a quota on the same broker is not."""
import json
import subprocess
import threading
import time
import urllib.request

from confluent_kafka import Consumer, Producer, TopicPartition

import clients
from brokerd_harness import brokerctl_binary, free_port

RATE = 200_000          # bytes/s
PAYLOAD = 1_200_000     # bytes each client moves
RECORD = 1000


def ctl(broker, *args):
    cmd = [brokerctl_binary(), "--bootstrap-server", broker.bootstrap] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def quota_broker(broker_factory):
    # A 2-sample window of 1 s: a burst is measured over 1-2 s, so the test is short.
    return broker_factory({"quota.window.num": 2, "quota.window.size.seconds": 1})


def produce_timed(bootstrap, topic, client_id, out):
    p = Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "acks": "1", "linger.ms": 5,
                  "batch.size": 16384})
    start = time.monotonic()
    for i in range(PAYLOAD // RECORD):
        while True:
            try:
                p.produce(topic, value=b"x" * RECORD)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    left = p.flush(60)
    out[client_id] = (time.monotonic() - start, left)


def test_quotas_are_set_listed_and_refused_as_kafka_does(broker_factory):
    b = quota_broker(broker_factory)
    r = ctl(b, "quotas", "alter", "--user", "alice", "--client-id", "<default>", "--set", "producer_byte_rate=1024",
            "--set", "consumer_byte_rate=2048")
    assert r.returncode == 0, r.stderr
    r = ctl(b, "quotas", "alter", "--user", "bob", "--set", "connection_creation_rate=5")
    assert r.returncode != 0 and "INVALID_REQUEST" in r.stderr and "not enforced" in r.stderr, r.stderr
    r = ctl(b, "quotas", "alter", "--user", "bob", "--set", "request_percentage=0")
    assert r.returncode != 0 and "INVALID_REQUEST" in r.stderr and "positive" in r.stderr, r.stderr
    r = ctl(b, "quotas", "alter", "--user", "carol", "--set", "producer_byte_rate=1", "--validate-only")
    assert r.returncode == 0, r.stderr
    listed = json.loads(ctl(b, "--output", "json", "quotas", "describe").stdout)
    assert sorted((q["quota"], q["value"]) for q in listed) == [("consumer_byte_rate", "2048"),
                                                                 ("producer_byte_rate", "1024")], listed
    assert all(q["entity"] == {"user": "alice", "client-id": "<default>"} for q in listed), listed
    only_bob = json.loads(ctl(b, "--output", "json", "quotas", "describe", "--user", "bob").stdout)
    assert only_bob == [], only_bob
    r = ctl(b, "quotas", "alter", "--user", "alice", "--client-id", "<default>", "--delete", "consumer_byte_rate")
    assert r.returncode == 0, r.stderr
    # Kept in the metadata log: still there after a restart.
    b.stop()
    b.start()
    listed = json.loads(ctl(b, "--output", "json", "quotas", "describe").stdout)
    assert [(q["quota"], q["value"]) for q in listed] == [("producer_byte_rate", "1024")], listed


def test_a_producer_over_its_quota_is_slowed_and_others_are_not(broker_factory):
    b = quota_broker(broker_factory)
    clients.create_topic(b.bootstrap, "metered", 1)
    r = ctl(b, "quotas", "alter", "--client-id", "slow", "--set", f"producer_byte_rate={RATE}")
    assert r.returncode == 0, r.stderr
    time.sleep(0.5)
    out = {}
    threads = [threading.Thread(target=produce_timed, args=(b.bootstrap, "metered", cid, out)) for cid in ("slow", "fast")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    slow, fast = out["slow"], out["fast"]
    assert slow[1] == 0 and fast[1] == 0, out
    # 1.2 MB at 200 KB/s: 6 s, less the burst the 2 s window lets through.
    assert slow[0] >= 3.0, out
    assert fast[0] < slow[0] / 2, out
    print(f"1.2 MB: client 'slow' (quota {RATE} B/s) {slow[0]:.1f} s, client 'fast' (none) {fast[0]:.1f} s")


def test_a_consumer_over_its_quota_is_slowed(broker_factory):
    port = free_port()
    b = broker_factory({"quota.window.num": 2, "quota.window.size.seconds": 1, "metrics.listener": f"127.0.0.1:{port}"})
    clients.create_topic(b.bootstrap, "to-read", 1)
    out = {}
    produce_timed(b.bootstrap, "to-read", "writer", out)
    r = ctl(b, "quotas", "alter", "--client-id", "slow-reader", "--set", f"consumer_byte_rate={RATE}")
    assert r.returncode == 0, r.stderr
    time.sleep(0.5)

    def read(client_id):
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": client_id, "client.id": client_id,
                      "enable.auto.commit": False, "max.partition.fetch.bytes": 65536})
        c.assign([TopicPartition("to-read", 0, 0)])
        n, start = 0, time.monotonic()
        while n < PAYLOAD // RECORD and time.monotonic() - start < 60:
            m = c.poll(0.5)
            if m is not None and not m.error():
                n += 1
        c.close()
        return n, time.monotonic() - start

    n_fast, t_fast = read("fast-reader")
    n_slow, t_slow = read("slow-reader")
    assert n_fast == n_slow == PAYLOAD // RECORD, (n_fast, n_slow)
    assert t_slow >= 3.0, (t_slow, t_fast)
    assert t_fast < t_slow / 2, (t_slow, t_fast)
    print(f"1.2 MB read: client 'slow-reader' (quota {RATE} B/s) {t_slow:.1f} s, 'fast-reader' {t_fast:.1f} s")
    # Per principal: what it produced and fetched (both readers are User:ANONYMOUS here), and
    # the time its clients were throttled.
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()

    def value(name):
        for line in text.splitlines():
            if line.startswith(name + '{principal="User:ANONYMOUS"}'):
                return float(line.split()[-1])
        return 0.0
    assert value("brokerd_principal_bytes_in_total") >= PAYLOAD, text[-2000:]
    assert value("brokerd_principal_bytes_out_total") >= 2 * PAYLOAD
    assert value("brokerd_principal_throttled_milliseconds_total") >= 1000


def test_a_throttled_producer_holds_its_quota_within_ten_percent(broker_factory):
    # 13 s at full speed against a 300,000 B/s quota: the acknowledged rate over the 10 s after
    # the first burst (which a 2 s window lets through) is the quota, within 10%.
    b = quota_broker(broker_factory)
    clients.create_topic(b.bootstrap, "steady", 1)
    quota = 300_000
    r = ctl(b, "quotas", "alter", "--user-default", "--set", f"producer_byte_rate={quota}")
    assert r.returncode == 0, r.stderr
    time.sleep(0.5)
    acked = []  # (time, bytes)
    # Requests of 16 KB: fine enough grains for a 10 s measure.
    p = Producer({"bootstrap.servers": b.bootstrap, "client.id": "steady", "acks": "1", "linger.ms": 5,
                  "queue.buffering.max.kbytes": 2048, "batch.size": 16384})
    start = time.monotonic()

    def on_delivery(err, msg):
        if err is None:
            acked.append((time.monotonic() - start, len(msg.value())))

    while time.monotonic() - start < 13:
        try:
            p.produce("steady", value=b"r" * RECORD, on_delivery=on_delivery)
        except BufferError:
            p.poll(0.02)
        p.poll(0)
    p.flush(30)
    window = [n for t, n in acked if 3.0 <= t < 13.0]
    rate = sum(window) / 10.0
    print(f"quota {quota} B/s: acknowledged {rate:.0f} B/s from 3 s to 13 s ({rate / quota:.3f}x)")
    assert abs(rate - quota) <= 0.10 * quota, rate


def test_partition_mutations_over_the_controller_mutation_rate_are_refused(broker_factory):
    # KIP-599 with a 2 s window: 2 partitions/s lets 4 through at once; a request that finds
    # the bucket in debt is refused with THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+).
    b = quota_broker(broker_factory)
    r = ctl(b, "quotas", "alter", "--user-default", "--set", "controller_mutation_rate=2")
    assert r.returncode == 0, r.stderr
    time.sleep(0.5)

    def create(name, partitions):
        return ctl(b, "topics", "create", name, "--partitions", partitions, "--replication-factor", 1)

    assert create("m1", 4).returncode == 0
    assert create("m2", 4).returncode == 0          # accepted into debt, as Kafka does
    refused = create("m3", 1)
    assert refused.returncode != 0 and "THROTTLING_QUOTA_EXCEEDED" in refused.stderr, refused.stderr
    deadline = time.monotonic() + 10
    while create("m3", 1).returncode != 0:
        assert time.monotonic() < deadline, "the debt was never paid"
        time.sleep(0.5)
    waited = 10 - (deadline - time.monotonic())
    assert waited >= 1.0, waited


def metadata_requests(bootstrap, client_id, seconds, throttles):
    """Asks for metadata as fast as the client goes for `seconds`; returns how many answers came."""
    p = Producer({"bootstrap.servers": bootstrap, "client.id": client_id,
                  "throttle_cb": lambda event: throttles.append(event.throttle_time)})  # seconds
    p.list_topics(timeout=10)
    n, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        p.list_topics(timeout=10)
        p.poll(0)
        n += 1
    p.flush(5)
    return n


def test_a_client_over_its_request_percentage_is_throttled(broker_factory):
    # KIP-124: 0.1% of one reactor thread is 1 ms of request time per second (2 ms of burst in
    # the 2 s window). A client asking for metadata as fast as it can uses far more, so it is
    # told to wait (throttle_time_ms) and its connection is muted; a client without the
    # quota is not.
    port = free_port()
    b = broker_factory({"quota.window.num": 2, "quota.window.size.seconds": 1, "metrics.listener": f"127.0.0.1:{port}"})
    clients.create_topic(b.bootstrap, "some-topic", 3)
    r = ctl(b, "quotas", "alter", "--client-id", "busy", "--set", "request_percentage=0.1")
    assert r.returncode == 0, r.stderr
    listed = json.loads(ctl(b, "--output", "json", "quotas", "describe").stdout)
    assert [(q["quota"], float(q["value"])) for q in listed] == [("request_percentage", 0.1)], listed
    time.sleep(0.5)
    seconds = 6
    free_throttles, busy_throttles = [], []
    free = metadata_requests(b.bootstrap, "free", seconds, free_throttles)
    busy = metadata_requests(b.bootstrap, "busy", seconds, busy_throttles)
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    spent_ms = 0.0
    for line in text.splitlines():
        if line.startswith('brokerd_principal_request_time_microseconds_total{principal="User:ANONYMOUS"}'):
            spent_ms = float(line.split()[-1]) / 1000
    print(f"{seconds} s of metadata requests: 'free' {free}, 'busy' (request_percentage=0.1) {busy}; "
          f"'busy' charged {spent_ms:.2f} ms of reactor time (quota {seconds * 1.0:.1f} ms + 2 ms burst), "
          f"throttled {len(busy_throttles)} times, max {max(busy_throttles, default=0) * 1000:.0f} ms")
    assert not free_throttles, free_throttles
    assert busy_throttles and max(busy_throttles) > 0, busy_throttles
    assert busy < free / 2, (busy, free)
    # Only the quota's client is charged, and about what its quota and burst allow: a request
    # is served whenever the bucket is not in debt, so the last ones may overdraw it by their
    # own cost (a few of them: the client's bootstrap connection is charged too). Unthrottled,
    # the busy client would have used about as much as the free one: some hundreds of ms.
    per_request_ms = spent_ms / (busy + 2)
    assert 0 < spent_ms <= 1.5 * (seconds * 1.0 + 2.0) + 3 * per_request_ms, (spent_ms, per_request_ms)
