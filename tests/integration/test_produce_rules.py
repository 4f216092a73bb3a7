"""What Produce refuses, as Kafka refuses it: writes into the broker's own topics (a record in
__consumer_offsets would be taken for a group's commit), control batches, transactional
batches without a transaction, a producer id without a sequence; and a batch failed by
several of its records names every one of them (KIP-467's record_errors)."""
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

import kafka_wire as kw
from brokerd_harness import module_broker
from clients import create_topic

INVALID_TOPIC_EXCEPTION, INVALID_TXN_STATE, INVALID_RECORD = 17, 48, 87
OFFSETS_PARTITIONS = 4


def java_hash(s):
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def offsets_partition(group):
    return (java_hash(group) & 0x7FFFFFFF) % OFFSETS_PARTITIONS


def committed(bootstrap, group, topic, partition):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return c.committed([TopicPartition(topic, partition)], timeout=20)[0].offset
    finally:
        c.close()


def commit(bootstrap, group, topic, partition, offset):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition(topic, partition, offset)], asynchronous=False)
    finally:
        c.close()


def forged_commit(group, topic, partition, offset):
    """An OffsetCommitKey v1 / OffsetCommitValue v3 record, laid out as the coordinator writes it."""
    key = kw.i16(1) + kw.string(group) + kw.string(topic) + kw.i32(partition)
    value = kw.i16(3) + kw.i64(offset) + kw.i32(-1) + kw.string("") + kw.i64(int(time.time() * 1000))
    return key, value


def test_clients_cannot_write_into_consumer_offsets(broker_factory):
    b = broker_factory({"offsets.topic.num.partitions": str(OFFSETS_PARTITIONS)})
    create_topic(b.bootstrap, "orders", 1)
    commit(b.bootstrap, "victim", "orders", 0, 5)
    assert committed(b.bootstrap, "victim", "orders", 0) == 5
    p = offsets_partition("victim")
    with kw.Connection(b.port) as conn:
        for version in (3, 8):
            resp = kw.produce(conn, "__consumer_offsets", p,
                              kw.record_batch([forged_commit("victim", "orders", 0, 999999)]), version=version)
            assert resp["error"] == INVALID_TOPIC_EXCEPTION, resp
            if version >= 8:
                assert resp["error_message"] == "Cannot append to internal topic __consumer_offsets", resp
        # DeleteRecords is refused on internal topics too (as Kafka refuses it).
        assert kw.delete_records(conn, "__consumer_offsets", p, 0)["error"] == INVALID_TOPIC_EXCEPTION
    b.stop()
    b.start()
    assert committed(b.bootstrap, "victim", "orders", 0) == 5


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    def setup(b):
        create_topic(b.bootstrap, "rules", 1)
        create_topic(b.bootstrap, "rules-compacted", 1, {"cleanup.policy": "compact"})
    yield from module_broker(tmp_path_factory, "produce-rules", setup=setup)


def log_end(b, topic):
    with kw.Connection(b.port) as conn:
        return kw.list_offsets(conn, topic, 0, kw.LATEST)["offset"]


def produce_v8(b, topic, batch):
    with kw.Connection(b.port) as conn:
        return kw.produce(conn, topic, 0, batch, version=8)


def test_a_control_batch_from_a_client_is_refused(shared):
    before = log_end(shared, "rules")
    resp = produce_v8(shared, "rules", kw.record_batch([(b"k", b"v")], attributes=0x20))
    assert resp["error"] == INVALID_RECORD, resp
    assert resp["error_message"] == "Clients are not allowed to write control records", resp
    assert log_end(shared, "rules") == before


def test_a_transactional_batch_without_a_transaction_is_refused(shared):
    before = log_end(shared, "rules")
    with kw.Connection(shared.port) as conn:
        error, pid, epoch = kw.init_producer_id(conn)
        assert error == 0
    batch = kw.record_batch([(b"k", b"v")], attributes=0x10, producer_id=pid, producer_epoch=epoch, base_sequence=0)
    resp = produce_v8(shared, "rules", batch)
    assert resp["error"] == INVALID_TXN_STATE, resp
    assert log_end(shared, "rules") == before


def test_a_producer_id_without_a_sequence_is_refused(shared):
    before = log_end(shared, "rules")
    with kw.Connection(shared.port) as conn:
        error, pid, epoch = kw.init_producer_id(conn)
        assert error == 0
    batch = kw.record_batch([(b"k", b"v")], producer_id=pid, producer_epoch=epoch, base_sequence=-1)
    resp = produce_v8(shared, "rules", batch)
    assert resp["error"] == INVALID_RECORD, resp
    assert resp["error_message"] == f"Invalid sequence number -1 in record batch with producerId {pid}", resp
    assert log_end(shared, "rules") == before
    # The same producer's first real batch is taken.
    batch = kw.record_batch([(b"k", b"v")], producer_id=pid, producer_epoch=epoch, base_sequence=0)
    assert produce_v8(shared, "rules", batch)["error"] == 0


def test_every_keyless_record_of_a_batch_is_named(shared):
    records = [(None if i in (0, 10) else b"k%d" % i, b"v%d" % i) for i in range(20)]
    resp = produce_v8(shared, "rules-compacted", kw.record_batch(records))
    assert resp["error"] == INVALID_RECORD, resp
    assert [i for i, _ in resp["record_errors"]] == [0, 10], resp
    for _, message in resp["record_errors"]:
        assert message == "Compacted topic cannot accept message without key in topic partition rules-compacted-0.", resp
    assert resp["error_message"].startswith("One or more records have been rejected due to 2 record errors"), resp


def end_of_batches(data):
    """The end of the whole batches at the start of a segment file (preallocated zeros after)."""
    pos = 0
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
        if length <= 0 or pos + 12 + length > len(data):
            break
        pos += 12 + length
    return pos


def test_loading_skips_offsets_records_the_coordinator_cannot_have_written(broker_factory):
    # Records of __consumer_offsets that came from elsewhere (a log written before clients were
    # refused, or by another broker) are not taken for commits: a batch with a producer id
    # (the coordinator writes none), and a record with bytes after its value's fields.
    b = broker_factory({"offsets.topic.num.partitions": str(OFFSETS_PARTITIONS)})
    create_topic(b.bootstrap, "orders", 2)
    commit(b.bootstrap, "victim", "orders", 0, 5)
    commit(b.bootstrap, "victim", "orders", 1, 6)
    p = offsets_partition("victim")
    with kw.Connection(b.port) as conn:
        leo = kw.list_offsets(conn, "__consumer_offsets", p, kw.LATEST)["offset"]
    b.kill()  # unclean: the restart recovers (and checks) the segment's tail
    [segment] = b.segment_files("__consumer_offsets", p)
    data = segment.read_bytes()
    end = end_of_batches(data)
    key0, value0 = forged_commit("victim", "orders", 0, 999999)
    idempotent = kw.record_batch([(key0, value0)], base_offset=leo, producer_id=1000, producer_epoch=0,
                                 base_sequence=0)
    key1, value1 = forged_commit("victim", "orders", 1, 888888)
    trailing = kw.record_batch([(key1, value1 + b"\x00")], base_offset=leo + 1)
    with open(segment, "r+b") as f:
        f.seek(end)
        f.write(idempotent + trailing)
    b.start()
    with kw.Connection(b.port) as conn:
        assert kw.list_offsets(conn, "__consumer_offsets", p, kw.LATEST)["offset"] == leo + 2, \
            "recovery must keep both batches (they are valid batches)"
    assert committed(b.bootstrap, "victim", "orders", 0) == 5
    assert committed(b.bootstrap, "victim", "orders", 1) == 6
    assert "skipped 2 records the coordinator cannot have written" in b.log_text()
