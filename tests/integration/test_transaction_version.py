"""transaction.version (KIP-890 part 2): the feature finalized at 2 on a new cluster and shown in
ApiVersions, changed with UpdateFeatures (brokerctl features), and a producer that uses it
(txn_v2.cc: Produce v12 and TxnOffsetCommit v5 add to the transaction themselves, EndTxn v5
bumps the epoch), read back at read_committed; librdkafka, which stays on version 1, keeps
working at every level."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "utils"))

from clients import create_topic  # noqa: E402


def brokerctl(b, *args, ok=True):
    from brokerd_harness import brokerctl_binary
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", b.bootstrap, "--output", "json", *args],
                          capture_output=True, timeout=60)
    if ok:
        assert proc.returncode == 0, proc.stderr.decode()
        out = proc.stdout.decode().strip()
        return json.loads(out) if out.startswith(("[", "{")) else out
    assert proc.returncode != 0, proc.stdout.decode()
    return proc.stderr.decode()


def level(b):
    [f] = [f for f in brokerctl(b, "features", "describe") if f["feature"] == "transaction.version"]
    assert (f["supported_min"], f["supported_max"]) == (0, 2), f
    return f["finalized"]


def committed_values(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "tv-reader", "isolation.level": "read_committed",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    try:
        for _ in range(100):
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                break  # the end of the partition (its last stable offset)
            got.append(m.value().decode())
    finally:
        c.close()
    return got


def test_a_new_cluster_finalizes_transaction_version_2_and_update_features_changes_it(broker):
    assert level(broker) == 2
    # A level this broker does not support, an unknown feature, a downgrade asked as an upgrade.
    assert "INVALID_UPDATE_VERSION" in brokerctl(broker, "features", "upgrade", "--feature", "transaction.version=3",
                                                 ok=False)
    assert "INVALID_UPDATE_VERSION" in brokerctl(broker, "features", "upgrade", "--feature", "no.such.feature=1",
                                                 ok=False)
    assert "INVALID_UPDATE_VERSION" in brokerctl(broker, "features", "upgrade", "--feature", "transaction.version=1",
                                                 ok=False)
    brokerctl(broker, "features", "downgrade", "--feature", "transaction.version=1", "--dry-run")
    assert level(broker) == 2
    brokerctl(broker, "features", "downgrade", "--feature", "transaction.version=1")
    assert level(broker) == 1
    brokerctl(broker, "features", "downgrade", "--disable", "transaction.version")
    assert level(broker) == 0
    # librdkafka's transactions work at level 0 (it never reads the feature).
    create_topic(broker.bootstrap, "tv-rdkafka", partitions=1)
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "tv-rdkafka"})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce("tv-rdkafka", value=b"at-level-0", partition=0)
    p.commit_transaction(30)
    assert committed_values(broker.bootstrap, "tv-rdkafka") == ["at-level-0"]
    brokerctl(broker, "features", "upgrade", "--feature", "transaction.version=2")
    assert level(broker) == 2


def test_a_transaction_version_2_producer_commits_aborts_and_is_fenced(broker):
    create_topic(broker.bootstrap, "tv2", partitions=3)
    proc = subprocess.run([os.environ["BROKERD_TXN_V2_BIN"], "127.0.0.1", str(broker.port), "tv2", "tv2-group",
                           "tv2-producer"], capture_output=True, timeout=120)
    out = proc.stdout.decode()
    print(out)
    assert proc.returncode == 0, proc.stderr.decode() + out
    last = out.strip().splitlines()[-1]
    committed = last.split()[0].split("=")[1].split(",")
    # The committed transaction is visible, the aborted one is not; the Produce v11 that the
    # broker refused wrote nothing.
    assert committed_values(broker.bootstrap, "tv2") == committed
    described = brokerctl(broker, "transactions", "describe", "tv2-producer")
    assert described["state"] == "CompleteAbort", described


def test_on_three_nodes_a_leader_adds_its_partition_through_a_remote_coordinator(tmp_path):
    """Produce v12 to a leader that does not coordinate the producer's id: the leader adds the
    partition with AddPartitionsToTxn v5 (not verify-only) to the coordinator on another node."""
    import kafka_wire as kw
    from cluster_harness import QuorumCluster
    from confluent_kafka.admin import AdminClient, NewTopic
    c = QuorumCluster(tmp_path)
    try:
        c.start()
        bootstrap = c.bootstrap()
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("tv2-remote", num_partitions=3, replication_factor=3)])["tv2-remote"].result(30)
        md = admin.list_topics(topic="tv2-remote", timeout=10)
        leader = md.topics["tv2-remote"].partitions[0].leader
        first = next(iter(c.nodes.values()))
        chosen = None
        with kw.Connection(first.port, timeout=10) as conn:
            for i in range(200):
                txn_id = f"tv2-remote-{i}"
                for _ in range(100):  # the first FindCoordinator creates __transaction_state
                    error, coordinator = kw.find_coordinator(conn, txn_id, key_type=1)
                    if error == 0:
                        break
                    time.sleep(0.1)
                if error == 0 and coordinator != leader:
                    chosen = txn_id
                    break
        assert chosen, "no transactional id coordinated away from partition 0's leader"
        proc = subprocess.run([os.environ["BROKERD_TXN_V2_BIN"], "127.0.0.1", str(first.port), "tv2-remote",
                               "tv2-remote-group", chosen], capture_output=True, timeout=120)
        out = proc.stdout.decode()
        print(out)
        assert proc.returncode == 0, proc.stderr.decode() + out
        committed = out.strip().splitlines()[-1].split()[0].split("=")[1].split(",")
        assert committed_values(bootstrap, "tv2-remote") == committed
    finally:
        c.tear_down()
