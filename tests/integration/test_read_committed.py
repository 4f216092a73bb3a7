"""read_committed on the wire: a Fetch at isolation_level 1 answers up to the last stable
offset with the aborted transactions of what it returns (a list, empty without any), every
Fetch answer carries the last stable offset, ListOffsets at isolation_level 1 answers LATEST
with it, and a transactional batch in a Produce request without a transactional id is refused
with INVALID_TXN_STATE."""
import pytest

import clients
import kafka_wire as kw
from brokerd_harness import module_broker

INVALID_TXN_STATE = 48


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    def setup(b):
        clients.create_topic(b.bootstrap, "rc", partitions=1)
    yield from module_broker(tmp_path_factory, "read-committed", setup=setup)


def fetch(conn, topic, partition, offset, isolation_level, version=5):
    body = (kw.i32(-1) + kw.i32(0) + kw.i32(0) + kw.i32(1 << 20) + kw.i8(isolation_level) +
            kw.array([topic], lambda t: kw.string(t) + kw.array(
                [partition], lambda p: kw.i32(p) + kw.i64(offset) + kw.i64(-1) + kw.i32(1 << 20))))
    r = conn.request(kw.API_FETCH, version, body)
    r.i32()  # throttle

    def part(x):
        p = {"partition": x.i32(), "error": x.i16(), "hw": x.i64(), "lso": x.i64(), "log_start": x.i64()}
        p["aborted"] = x.array(lambda y: (y.i64(), y.i64()))
        p["records"] = x.nbytes() or b""
        return p

    return r.array(lambda x: (x.string(), x.array(part)))[0][1][0]


def list_latest(conn, topic, partition, isolation_level):
    body = kw.i32(-1) + kw.i8(isolation_level) + kw.array(
        [topic], lambda t: kw.string(t) + kw.array([partition], lambda p: kw.i32(p) + kw.i64(kw.LATEST)))
    r = conn.request(kw.API_LIST_OFFSETS, 2, body)
    r.i32()  # throttle
    return r.array(lambda x: (x.string(), x.array(
        lambda y: {"partition": y.i32(), "error": y.i16(), "timestamp": y.i64(), "offset": y.i64()})))[0][1][0]


def test_read_committed_reads_up_to_the_last_stable_offset(broker):
    with kw.Connection(broker.port) as c:
        r = kw.produce(c, "rc", 0, kw.record_batch([(b"k", b"a"), (b"k", b"b")]), acks=-1)
        assert r["error"] == 0
        for isolation in (0, 1):
            p = fetch(c, "rc", 0, 0, isolation)
            assert p["error"] == 0
            assert (p["hw"], p["lso"]) == (2, 2)
            assert p["records"], "committed records are returned at either isolation level"
            if isolation == 1:
                assert p["aborted"] == [], "read_committed gets a list of aborted transactions"
        assert list_latest(c, "rc", 0, 1)["offset"] == 2
        assert list_latest(c, "rc", 0, 0)["offset"] == 2


def test_transactional_batches_are_refused_without_a_transactional_id(broker):
    with kw.Connection(broker.port) as c:
        error, pid, epoch = kw.init_producer_id(c)
        assert error == 0
        batch = kw.record_batch([(b"k", b"t")], attributes=0x10, producer_id=pid, producer_epoch=epoch,
                                base_sequence=0)
        r = kw.produce(c, "rc", 0, batch, acks=-1)
        assert r["error"] == INVALID_TXN_STATE
        p = fetch(c, "rc", 0, 0, 1)
        assert p["lso"] == p["hw"]
