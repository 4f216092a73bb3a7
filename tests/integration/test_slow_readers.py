"""Readers that stop reading never slow producers or other readers: clients that send
large Fetch requests (from the start of a topic, after the page cache was dropped where
the test may do so) and then never read their socket leave the broker's reactors free; a
producer with acks=all and a live consumer on another topic keep going."""
import socket
import time

from clients import consumer, create_topic, produce_and_confirm, producer
from confluent_kafka import TopicPartition
from kafka_wire import Connection, array, i8, i32, i64, string

API_FETCH = 1
STALLED_READERS = 8


def drop_page_cache():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
        return True
    except OSError:
        return False


def fetch_body(topic, offset, max_bytes):
    part = i32(0) + i64(offset) + i64(-1) + i32(max_bytes)
    return (i32(-1) + i32(500) + i32(1) + i32(max_bytes) + i8(0) +
            array([topic], lambda t: string(t) + array([part], lambda p: p)))


def test_stalled_readers_do_not_slow_producers(broker_factory):
    broker = broker_factory({"log.segment.bytes": "8388608"})
    create_topic(broker.bootstrap, "history", 1)
    create_topic(broker.bootstrap, "live", 3)
    big = b"h" * 1000
    produce_and_confirm(producer(broker.bootstrap), "history", ({"key": b"%d" % i, "value": big} for i in range(60_000)))
    cold = drop_page_cache()

    # Readers that ask for 60 MB each from the start, with tiny receive buffers, and never read.
    stalled = []
    for i in range(STALLED_READERS):
        conn = Connection(broker.port, timeout=30)
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        for _ in range(3):
            conn.send(API_FETCH, 5, fetch_body("history", i * 1000, 60 << 20))
        stalled.append(conn)
    time.sleep(0.5)

    # A producer and a consumer on another topic go on as usual meanwhile.
    p = producer(broker.bootstrap, linger_ms=1)
    latencies = []

    def on_delivery(err, msg, sent=None):
        assert err is None, err

    started = time.monotonic()
    for i in range(2000):
        t0 = time.monotonic()
        p.produce("live", key=b"k%d" % (i % 30), value=b"x" * 200, on_delivery=on_delivery)
        p.flush(10)
        latencies.append(time.monotonic() - t0)
    took = time.monotonic() - started
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)]
    print(f"\n2000 acks=all round trips beside {STALLED_READERS} stalled readers (page cache dropped: {cold}): "
          f"{took:.2f}s, p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    # Loose bound: a blocked reactor would show as seconds, not milliseconds.
    assert p99 < 0.5

    c = consumer(broker.bootstrap)
    c.assign([TopicPartition("live", p_, 0) for p_ in range(3)])
    got = 0
    deadline = time.monotonic() + 30
    while got < 2000 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got += 1
    c.close()
    assert got == 2000
    for conn in stalled:
        conn.close()
