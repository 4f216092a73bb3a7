"""A data directory written by release 0.1 (metadata in a local log, before the metadata
quorum) starts unchanged under this release: topics, records, committed offsets and
producer-id blocks are all still there, and the node goes on from them."""
import tarfile
from pathlib import Path

import kafka_wire as kw
from brokerd_harness import Broker
from clients import create_topic, produce_and_confirm, producer, read_all
from confluent_kafka import Consumer, TopicPartition

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "single-node-0.1.tar.gz"


def committed(bootstrap, group, topic, partitions):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return {tp.partition: tp.offset
                for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=15)}
    finally:
        c.close()


def test_a_release_0_1_directory_starts_with_everything_in_it(tmp_path):
    with tarfile.open(FIXTURE) as t:
        t.extractall(tmp_path)
    b = Broker(tmp_path)
    b.start()
    try:
        for attempt in range(2):  # and again after a restart under this release
            got = read_all(b.bootstrap, "upgrade", 2)
            values = {p: [m.value().decode() for m in msgs] for p, msgs in got.items()}
            assert values[0] == [f"v{i}" for i in range(0, 100, 2)]
            assert values[1] == [f"v{i}" for i in range(1, 100, 2)]
            assert [m.offset() for m in got[0]] == list(range(50))
            assert committed(b.bootstrap, "upgrade-group", "upgrade", 2) == {0: 20, 1: 30}
            if attempt == 0:
                b.stop()
                b.start()
        # Producer ids continue after the block release 0.1 handed out.
        with kw.Connection(b.port) as conn:
            err, pid, _ = kw.init_producer_id(conn)
            assert err == 0 and pid >= 1000, pid
        # And it takes new work.
        create_topic(b.bootstrap, "after-upgrade", 1)
        reports = produce_and_confirm(producer(b.bootstrap), "after-upgrade", [{"value": b"x"}])
        assert reports[0].offset() == 0
        b.stop()
    finally:
        b.kill()  # by pid, whatever failed
