"""The node-wide request budget (queued.max.request.bytes) under acks=all produce requests
that wait for followers: producers fill the budget with requests that only complete once the
followers have fetched, so the followers' fetches must still be read. Eight librdkafka
producers send 512 KiB records with acks=all at a three-node cluster whose budget is 4 MiB:
records keep being acknowledged while the budget stays spent, and the node holds little more
than the budget."""
import threading
import time

from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

import clients
from brokerd_harness import free_port
from cluster_harness import QuorumCluster
from prometheus_text import scrape, value

MB = 1 << 20
BUDGET = 4 * MB


def test_a_spent_budget_still_reads_the_fetches_that_release_it(tmp_path):
    c = QuorumCluster(tmp_path, overrides={"queued.max.request.bytes": str(BUDGET), "min.insync.replicas": "2"})
    for n in c.nodes.values():
        n.metrics_port = free_port()
        n.overrides["metrics.listener"] = f"127.0.0.1:{n.metrics_port}"
    stop = threading.Event()
    threads = []
    try:
        c.start()
        admin = clients.admin(c.bootstrap())
        for f in admin.create_topics([NewTopic("heavy", num_partitions=1, replica_assignment=[[1, 2, 3]])],
                                     operation_timeout=30).values():
            f.result(timeout=30)
        time.sleep(1)
        acked, failed = [], []

        def on_delivery(err, msg):
            (failed if err else acked).append(time.monotonic())

        producers = [Producer({"bootstrap.servers": c.nodes[1].bootstrap, "acks": "all", "linger.ms": 5,
                               "request.timeout.ms": 20000, "message.timeout.ms": 60000}) for _ in range(8)]

        def flood(p):
            while not stop.is_set():
                try:
                    p.produce("heavy", b"x" * (512 * 1024), on_delivery=on_delivery)
                except BufferError:
                    pass
                p.poll(0.01)

        threads = [threading.Thread(target=flood, args=(p,), daemon=True) for p in producers]
        for t in threads:
            t.start()
        time.sleep(2)  # the budget fills
        start, queued = time.monotonic(), []
        while time.monotonic() - start < 6:
            queued.append(value(scrape(c.nodes[1].metrics_port)[0], "brokerd_queued_request_bytes"))
            time.sleep(0.5)
        during = [t for t in acked if t >= start]
        print(f"budget {BUDGET} B: {len(during)} records of 512 KiB acknowledged in 6 s with the budget spent; "
              f"queued bytes seen {min(queued):.0f}-{max(queued):.0f}")
        assert max(queued) >= BUDGET  # the producers did spend the budget
        assert len(during) >= 30, f"only {len(during)} acknowledgements: the followers' fetches were not read"
        assert max(queued) <= BUDGET + 2 * MB  # one frame past the budget per reader at most
        assert not failed
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        c.tear_down()
