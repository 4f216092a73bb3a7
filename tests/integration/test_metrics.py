"""The operator's HTTP endpoint: /metrics in Prometheus text format, /health and /ready.
Produces and fetches records of known size and checks that the counters moved by as much."""
import time

from confluent_kafka import TopicPartition

import kafka_wire as kw
from brokerd_harness import free_port
from clients import consumer, create_topic, produce_and_confirm, producer, read_all
from prometheus_text import get, scrape, value


def test_metrics_follow_produce_and_fetch(broker_factory):
    port = free_port()
    b = broker_factory({"metrics.listener": f"127.0.0.1:{port}"})
    assert get(port, "/health")[0] == 200
    assert get(port, "/ready")[:1] == (200,)

    topic, n, size = "metered", 200, 1000
    create_topic(b.bootstrap, topic, 2)
    before, types = scrape(port)
    assert types["brokerd_request_latency_seconds"] == "histogram"
    assert types["brokerd_topic_bytes_in_total"] == "counter"

    p = producer(b.bootstrap, compression_type="none", linger_ms=20)
    payload = b"x" * size
    produce_and_confirm(p, topic, [{"value": payload, "partition": i % 2} for i in range(n)])
    got = read_all(b.bootstrap, topic, 2)
    assert sum(len(v) for v in got.values()) == n

    after, _ = scrape(port)
    assert value(after, "brokerd_topic_records_in_total", topic=topic) == n
    bytes_in = value(after, "brokerd_topic_bytes_in_total", topic=topic)
    assert bytes_in >= n * size
    assert value(after, "brokerd_topic_bytes_out_total", topic=topic) >= bytes_in  # everything was read once
    for api in ("Produce", "Fetch", "Metadata"):
        assert value(after, "brokerd_requests_total", api=api) > value(before, "brokerd_requests_total", api=api), api
    produces = value(after, "brokerd_requests_total", api="Produce")
    assert value(after, "brokerd_request_latency_seconds_count", api="Produce") == produces
    assert value(after, "brokerd_request_latency_seconds_bucket", api="Produce", le="+Inf") == produces
    assert value(after, "brokerd_request_latency_seconds_sum", api="Produce") > 0
    assert value(after, "brokerd_request_errors_total", api="Produce") == 0

    total_size = 0
    for part in (0, 1):
        labels = {"topic": topic, "partition": str(part)}
        assert value(after, "brokerd_log_end_offset", **labels) == n // 2
        assert value(after, "brokerd_log_start_offset", **labels) == 0
        assert value(after, "brokerd_log_segments", **labels) >= 1
        total_size += value(after, "brokerd_log_size_bytes", **labels)
    assert total_size == bytes_in
    assert value(after, "brokerd_partitions") >= 2
    assert value(after, "brokerd_connections") >= 0
    assert value(after, "brokerd_fetch_purgatory_size") >= 0
    assert value(after, "brokerd_produce_purgatory_size") == 0
    assert value(after, "process_resident_memory_bytes") > 0
    assert value(after, "process_open_fds") > 0
    # Both partitions were just written and read: each holds its active segment open.
    assert types["brokerd_open_partition_files"] == "gauge"
    assert 2 <= value(after, "brokerd_open_partition_files") <= value(after, "process_open_fds")
    assert value(after, "process_cpu_seconds_total") > 0
    assert abs(value(after, "process_start_time_seconds") - time.time()) < 3600
    b.stop()


def test_group_lag_and_errors(broker_factory):
    port = free_port()
    b = broker_factory({"metrics.listener": f"127.0.0.1:{port}"})
    topic = "lagging"
    create_topic(b.bootstrap, topic, 1)
    produce_and_confirm(producer(b.bootstrap), topic, [{"value": b"v"} for _ in range(10)])
    c = consumer(b.bootstrap, group_id="metrics-group")
    try:
        deadline = time.monotonic() + 30
        while True:  # the coordinator may still be loading __consumer_offsets
            try:
                c.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        c.close()
    samples, _ = scrape(port)
    assert value(samples, "brokerd_groups") >= 1
    assert value(samples, "brokerd_group_lag", group="metrics-group", topic=topic, partition="0") == 6

    # A produce to a partition that does not exist is an error response.
    errors_before = value(samples, "brokerd_request_errors_total", api="Produce")
    with kw.Connection(b.port) as conn:
        r = kw.produce(conn, topic, 7, kw.record_batch([(None, b"v")]))
        assert r["error"] != 0
    samples, _ = scrape(port)
    assert value(samples, "brokerd_request_errors_total", api="Produce") == errors_before + 1
    assert get(port, "/nope")[0] == 404
    b.stop()


def test_taken_metrics_port_refuses_to_start(broker_factory, tmp_path):
    port = free_port()
    first = broker_factory({"metrics.listener": f"127.0.0.1:{port}"})
    second = broker_factory({"metrics.listener": f"127.0.0.1:{port}"}, start=False)
    try:
        second.start(timeout=10)
        assert False, "a second broker bound the same metrics port"
    except RuntimeError as e:
        assert "metrics.listener" in str(e)
    assert first.alive()
