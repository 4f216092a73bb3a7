"""The request budget per principal (queued.max.request.bytes.per.principal): one team whose
acks=all produce requests cannot complete (a follower in their ISR is paused) holds at most
its own share of the node's in-flight bytes, so another principal's requests on the same
broker are still read and answered. Without the bound (0), the first team spends the
node's whole budget and the other waits for it: the control case, which shows the test can
fail."""
import os
import signal
import threading
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

import clients
from brokerd_harness import free_port
from cluster_harness import QuorumCluster
from prometheus_text import scrape, value

MB = 1 << 20
NODE_BUDGET = 8 * MB
PRINCIPAL_BUDGET = 2 * MB
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_team-a="a-secret";'


def cluster(tmp_path, per_principal):
    c = QuorumCluster(tmp_path, overrides={
        "queued.max.request.bytes": str(NODE_BUDGET),
        "queued.max.request.bytes.per.principal": str(per_principal),
        # The paused follower stays in the ISR (and registered) for the whole test.
        "replica.lag.time.max.ms": "60000",
        "broker.session.timeout.ms": "60000",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    })
    for i, n in c.nodes.items():
        n.sasl_port = free_port()
        n.metrics_port = free_port()
        n.overrides["listeners"] = (f"PLAINTEXT://127.0.0.1:{n.port},SASL_PLAINTEXT://127.0.0.1:{n.sasl_port},"
                                    f"CONTROLLER://127.0.0.1:{c.controller_ports[i]}")
        n.overrides["metrics.listener"] = f"127.0.0.1:{n.metrics_port}"
    return c


@pytest.mark.parametrize("per_principal", [PRINCIPAL_BUDGET, 0], ids=["bounded", "unbounded-control"])
def test_a_stuck_team_cannot_spend_the_node_budget_of_others(tmp_path, per_principal):
    c = cluster(tmp_path, per_principal)
    stop = threading.Event()
    threads = []
    try:
        c.start()
        controller, _ = c.wait_for_leader()
        paused = 2 if controller != 2 else 3
        admin = clients.admin(c.bootstrap())
        topics = [NewTopic("stuck", num_partitions=1, replica_assignment=[[1, 2, 3]]),
                  NewTopic("light", num_partitions=1, replica_assignment=[[1]])]
        for f in admin.create_topics(topics, operation_timeout=30).values():
            f.result(timeout=30)
        clients.wait_for_topic(c.nodes[1].bootstrap, "light", 1)
        os.kill(c.nodes[paused].pid, signal.SIGSTOP)

        team_a = [Producer({"bootstrap.servers": f"127.0.0.1:{c.nodes[1].sasl_port}",
                            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                            "sasl.username": "team-a", "sasl.password": "a-secret", "acks": "all",
                            "linger.ms": 5, "request.timeout.ms": 60000, "message.timeout.ms": 90000})
                  for _ in range(4)]

        def flood(p):
            while not stop.is_set():
                try:
                    p.produce("stuck", b"a" * (256 * 1024))
                except BufferError:
                    pass
                p.poll(0.01)

        threads = [threading.Thread(target=flood, args=(p,), daemon=True) for p in team_a]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 15
        queued = 0
        while time.monotonic() < deadline:
            queued = value(scrape(c.nodes[1].metrics_port)[0], "brokerd_queued_request_bytes")
            if queued >= min(NODE_BUDGET, per_principal or NODE_BUDGET):
                break
            time.sleep(0.2)
        assert queued >= min(NODE_BUDGET, per_principal or NODE_BUDGET), f"team A queued only {queued} bytes"

        # Another principal (User:ANONYMOUS on PLAINTEXT) produces to a partition of the same broker.
        delivered = []
        b = Producer({"bootstrap.servers": c.nodes[1].bootstrap, "acks": "1", "linger.ms": 0,
                      "message.timeout.ms": 30000})
        start = time.monotonic()
        for i in range(20):
            b.produce("light", f"b-{i}".encode(), on_delivery=lambda err, m: delivered.append(err))
        b.flush(8)
        took = time.monotonic() - start
        queued = value(scrape(c.nodes[1].metrics_port)[0], "brokerd_queued_request_bytes")
        print(f"per-principal bound {per_principal}: {len(delivered)} of 20 records of another principal "
              f"delivered in {took:.2f} s; node queued bytes {queued:.0f}")
        if per_principal:
            assert len(delivered) == 20 and not any(delivered), delivered
            # Team A holds its bound plus at most one frame per connection past it.
            assert queued <= PRINCIPAL_BUDGET + 4 * MB + MB, queued
        else:
            assert len(delivered) < 20, "the control case should starve the other principal"
    finally:
        stop.set()
        for t in threads:
            t.join(5)
        c.tear_down()
