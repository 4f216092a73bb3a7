"""Fetch long poll: a waiting fetch returns as soon as data arrives, and after about
max_wait_ms when none does. Bounds are loose: the machine is shared."""
import threading
import time

from confluent_kafka import OFFSET_END, TopicPartition

import kafka_wire as kw
from clients import consumer, create_topic, produce_and_confirm, producer


def test_consumer_wakes_when_record_arrives(broker):
    topic = "long-poll"
    create_topic(broker.bootstrap, topic, 2)
    p = producer(broker.bootstrap, linger_ms=0)
    produce_and_confirm(p, topic, [{"value": b"warm-up", "partition": 1}])  # connection and metadata ready
    c = consumer(broker.bootstrap, fetch_wait_max_ms=3000, fetch_min_bytes=1)
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_END)])
        for _ in range(5):  # let the consumer resolve the end offset and park its fetch
            assert c.poll(0.2) is None
        for round_ in range(3):
            sent_at = {}

            def send():
                time.sleep(0.5)
                sent_at["t"] = time.monotonic()
                p.produce(topic, value=f"wake-{round_}".encode(), partition=0)
                p.flush(10)

            t = threading.Thread(target=send)
            t.start()
            deadline = time.monotonic() + 10
            m = None
            while time.monotonic() < deadline:
                m = c.poll(0.05)
                if m is not None:
                    break
            received = time.monotonic()
            t.join(timeout=10)
            assert m is not None and m.error() is None, m and m.error()
            assert m.value() == f"wake-{round_}".encode()
            latency = received - sent_at["t"]
            assert latency < 1.5, f"record delivered {latency:.2f}s after send: the fetch was not woken"
    finally:
        c.close()


def test_raw_fetch_waits_then_returns_empty(broker):
    topic = "long-poll-raw"
    create_topic(broker.bootstrap, topic, 1)
    with kw.Connection(broker.port) as conn:
        for wait_ms in (1000, 2000):
            t0 = time.monotonic()
            r = kw.fetch(conn, topic, 0, 0, max_wait_ms=wait_ms, min_bytes=1)
            elapsed = time.monotonic() - t0
            assert r["error"] == 0 and r["records"] == b"" and r["high_watermark"] == 0
            assert wait_ms / 1000 * 0.9 <= elapsed <= wait_ms / 1000 + 1.5, f"max_wait {wait_ms} ms took {elapsed:.2f}s"
        # min_bytes=0 never waits.
        t0 = time.monotonic()
        kw.fetch(conn, topic, 0, 0, max_wait_ms=3000, min_bytes=0)
        assert time.monotonic() - t0 < 1.0


def test_raw_fetch_returns_early_on_produce(broker):
    topic = "long-poll-raw-wake"
    create_topic(broker.bootstrap, topic, 1)
    p = producer(broker.bootstrap, linger_ms=0)
    produce_and_confirm(p, "long-poll-raw-wake", [{"value": b"first", "partition": 0}])
    sent_at = {}

    def send():
        time.sleep(0.5)
        sent_at["t"] = time.monotonic()
        produce_and_confirm(p, topic, [{"value": b"second", "partition": 0}])

    with kw.Connection(broker.port) as conn:
        t = threading.Thread(target=send)
        t.start()
        r = kw.fetch(conn, topic, 0, 1, max_wait_ms=3000, min_bytes=1)
        done = time.monotonic()
        t.join(timeout=15)
        assert r["error"] == 0
        recs = [rec for b in kw.parse_batches(r["records"]) for rec in b["records"]]
        assert [(o, v) for o, _, _, v in recs] == [(1, b"second")]
        assert done - sent_at["t"] < 1.5, f"fetch returned {done - sent_at['t']:.2f}s after the produce"
