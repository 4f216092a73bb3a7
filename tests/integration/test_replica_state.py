"""What a partition's leader knows reaches every replica, on three real brokerd processes in
three racks: DeleteRecords moves every in-sync replica's log start before it is answered, each
node checkpoints its high watermarks (replication-offset-checkpoint, Kafka's format), and a
consumer that names its rack reads from the replica in that rack (KIP-392)."""
import signal
import time

import pytest

import clients
import kafka_wire as kw
from brokerd_harness import free_port
from cluster_harness import QuorumCluster
from prometheus_text import scrape, value
from waiting import eventually

RACKS = {1: "zone-a", 2: "zone-b", 3: "zone-c"}
OVERRIDES = {"replica.lag.time.max.ms": "2000", "min.insync.replicas": "2",
             "replica.high.watermark.checkpoint.interval.ms": "200",
             "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
REQUEST_TIMED_OUT = 7


@pytest.fixture
def cluster(tmp_path):
    c = QuorumCluster(tmp_path, overrides=OVERRIDES,
                      per_node={i: {"broker.rack": r, "metrics.listener": f"127.0.0.1:{free_port()}"}
                                for i, r in RACKS.items()})
    try:
        yield c.start()
    finally:
        c.tear_down()




def partitions_of(cluster, name, excluding=()):
    """{partition: (leader, sorted ISR)} once every partition has a leader not in `excluding`."""
    def view():
        try:
            md = clients.admin(cluster.bootstrap()).list_topics(topic=name, timeout=5).topics.get(name)
        except Exception:
            return None
        if not md or md.error is not None or not md.partitions:
            return None
        if any(p.leader < 0 or p.leader in excluding for p in md.partitions.values()):
            return None
        return {p.id: (p.leader, sorted(p.isrs)) for p in md.partitions.values()}
    assert eventually(lambda: view() is not None, 30), f"{name}: no leaders"
    return view()


def create(cluster, name, partitions):
    from confluent_kafka.admin import NewTopic
    a = clients.admin(cluster.bootstrap())
    a.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=3)],
                    operation_timeout=30)[name].result(timeout=30)
    assert eventually(lambda: all(isr == [1, 2, 3] for _, isr in partitions_of(cluster, name).values()), 30)
    return partitions_of(cluster, name)


def produce(cluster, topic, count, partition=0, first=0):
    p = clients.producer(cluster.bootstrap())
    clients.produce_and_confirm(p, topic, [{"value": b"%05d" % i, "partition": partition}
                                           for i in range(first, first + count)])


def bytes_out(cluster, node, topic):
    port = int(cluster.nodes[node].overrides["metrics.listener"].rsplit(":", 1)[1])
    return value(scrape(port)[0], "brokerd_topic_bytes_out_total", topic=topic)


def test_delete_records_is_answered_once_every_in_sync_replica_has_moved_its_start(cluster):
    leader = create(cluster, "trimmed", 1)[0][0]
    followers = [i for i in RACKS if i != leader]
    produce(cluster, "trimmed", 100)
    with kw.Connection(cluster.nodes[leader].port) as conn:
        r = kw.delete_records(conn, "trimmed", 0, 40)
        assert (r["error"], r["low_watermark"]) == (0, 40), r
        # An in-sync follower that does not fetch holds the answer until it leaves the ISR.
        cluster.nodes[followers[0]].proc.send_signal(signal.SIGSTOP)
        try:
            r = kw.delete_records(conn, "trimmed", 0, 60, timeout_ms=300)
            assert r["error"] == REQUEST_TIMED_OUT, r
            assert kw.list_offsets(conn, "trimmed", 0, kw.EARLIEST)["offset"] == 60, "the leader deleted"
            # Once the paused follower is out of the ISR, the low watermark is the others'.
            assert eventually(lambda: kw.delete_records(conn, "trimmed", 0, 60, timeout_ms=300)["error"] == 0, 20)
        finally:
            cluster.nodes[followers[0]].proc.send_signal(signal.SIGCONT)
    # The next leader starts where this one did.
    cluster.nodes[leader].kill()
    successor = partitions_of(cluster, "trimmed", excluding=(leader,))[0][0]
    with kw.Connection(cluster.nodes[successor].port) as conn:
        assert kw.list_offsets(conn, "trimmed", 0, kw.EARLIEST)["offset"] == 60
        assert kw.list_offsets(conn, "trimmed", 0, kw.LATEST)["offset"] == 100


def read_checkpoint(node):
    path = node.data_dir / "replication-offset-checkpoint"
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2, lines
    return {(t, int(p)): int(o) for t, p, o in (line.split(" ") for line in lines[2:])}


def test_every_node_checkpoints_its_high_watermarks(cluster):
    create(cluster, "marked", 2)
    produce(cluster, "marked", 30, partition=0)
    produce(cluster, "marked", 7, partition=1)
    want = {("marked", 0): 30, ("marked", 1): 7}

    def recorded(node):
        cp = read_checkpoint(node) or {}
        return {k: cp.get(k) for k in want}
    for i, n in cluster.nodes.items():
        assert eventually(lambda: recorded(n) == want, 10), f"node {i}: {read_checkpoint(n)}"
    # Every hosted partition is there, the offsets topic's too, and nothing else.
    cp = read_checkpoint(cluster.nodes[1])
    assert set(cp) >= set(want)
    assert all(t in ("marked", "__consumer_offsets") for t, _ in cp)
    # A clean stop writes the last word; the restarted node starts from it.
    produce(cluster, "marked", 5, partition=0)
    node = cluster.nodes[3]
    node.stop()
    assert read_checkpoint(node)[("marked", 0)] == 35
    node.start(timeout=60)
    assert eventually(lambda: (read_checkpoint(node) or {}).get(("marked", 0)) == 35, 10)


def consume_all(bootstrap, topic, count, rack):
    from confluent_kafka import TopicPartition
    c = clients.consumer(bootstrap, **{"client.rack": rack, "group.id": f"reader-{rack}"})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        got, deadline = [], time.monotonic() + 30
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(int(m.value()))
        return got
    finally:
        c.close()


def test_a_consumer_reads_from_the_replica_in_its_rack(cluster):
    leader = create(cluster, "nearby", 1)[0][0]
    near = next(i for i in RACKS if i != leader)
    produce(cluster, "nearby", 200)
    before = {i: bytes_out(cluster, i, "nearby") for i in RACKS}
    assert consume_all(cluster.bootstrap(), "nearby", 200, RACKS[near]) == list(range(200))
    after = {i: bytes_out(cluster, i, "nearby") for i in RACKS}
    assert after[near] - before[near] >= 200 * 5, after
    assert after[leader] == before[leader], "the leader only pointed the consumer to its rack's replica"
    # A consumer in the leader's rack, or in a rack without a replica, reads from the leader.
    for rack in (RACKS[leader], "zone-elsewhere"):
        assert consume_all(cluster.bootstrap(), "nearby", 200, rack) == list(range(200))
        now = bytes_out(cluster, leader, "nearby")
        assert now > after[leader], rack
        after[leader] = now
    # A consumer at the end sees new records through the follower, within the follower's
    # high watermark.
    produce(cluster, "nearby", 10, first=200)
    assert consume_all(cluster.bootstrap(), "nearby", 210, RACKS[near])[-10:] == list(range(200, 210))


def test_a_follower_with_a_full_disk_leaves_the_isr_until_it_has_room(tmp_path):
    """Node 3 keeps its partitions on a small file system (its metadata log elsewhere). When it
    fills, node 3 cannot take the leader's batches: it drops out of the ISR while writes go on
    (min.insync.replicas 2), stays out while it has no room, and catches up and rejoins once
    space is freed. Every acknowledged record is there."""
    import subprocess
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(small)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    c = None
    try:
        (small / "ballast").write_bytes(b"\0" * (9 << 20))
        per_node = {i: {"broker.rack": r} for i, r in RACKS.items()}
        per_node[3].update({"log.dirs": str(small), "metadata.log.dir": str(tmp_path / "node3-metadata")})
        c = QuorumCluster(tmp_path, overrides=OVERRIDES, per_node=per_node).start()
        from confluent_kafka.admin import NewTopic
        a = clients.admin(c.bootstrap())
        a.create_topics([NewTopic("filling", num_partitions=1, replica_assignment=[[1, 2, 3]],
                                  config={"segment.bytes": "1048576", "segment.index.bytes": "65536"})],
                        operation_timeout=30)["filling"].result(timeout=30)
        assert eventually(lambda: partitions_of(c, "filling")[0][1] == [1, 2, 3], 30)
        # 6 MB: twice what node 3 has room for.
        p = clients.producer(c.bootstrap(), linger_ms=20)
        clients.produce_and_confirm(p, "filling", [{"value": b"%06d" % i + b"x" * 1000} for i in range(6000)])
        assert eventually(lambda: partitions_of(c, "filling")[0][1] == [1, 2], 20), "node 3 left the ISR"
        time.sleep(3)
        assert partitions_of(c, "filling")[0][1] == [1, 2], "node 3 does not rejoin without room"
        clients.produce_and_confirm(p, "filling", [{"value": b"%06d" % i} for i in range(6000, 6100)])
        # The failed appends are reported, but not one line per retry: the first, then one
        # every 10 s (the follower also waits replica.fetch.backoff.ms between tries).
        failures = c.nodes[3].log_text().count("write failed: No space left on device")
        assert 1 <= failures <= 4, failures
        (small / "ballast").unlink()
        assert eventually(lambda: partitions_of(c, "filling")[0][1] == [1, 2, 3], 30), "node 3 rejoins with room"
        assert "appends succeed again after" in c.nodes[3].log_text()
        got = clients.read_all(c.bootstrap(), "filling", 1, timeout=60)[0]
        assert [int(m.value()[:6]) for m in got] == list(range(6100))
    finally:
        if c:
            c.tear_down()
        subprocess.run(["umount", "-l", str(small)], capture_output=True)
