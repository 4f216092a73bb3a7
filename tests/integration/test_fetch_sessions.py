"""Incremental fetch sessions (KIP-227) on the wire, as the Java consumer and Kafka's own
followers use them: epoch 0 opens a session and gets its id, later epochs send only what
changed and get only partitions with news, partitions are added and forgotten, a wrong epoch
or an unknown session is refused with Kafka's codes, epoch -1 closes, and a full cache gives
a new session the place of a smaller one. (librdkafka, kafka-python 2.0 and KafkaJS always
send full fetches, which the same node answers as before.)"""
import pytest

import clients
import kafka_wire as kw
from brokerd_harness import module_broker

FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
VERSION = 11


def session_fetch(conn, session_id, epoch, wanted=(), forgotten=(), max_wait_ms=0, min_bytes=0):
    """Fetch v11. wanted: (topic, partition, offset); forgotten: (topic, partition). Returns
    (error, session id, {(topic, partition): {"hw": .., "records": bytes, "error": ..}})."""
    by_topic, forget = {}, {}
    for t, p, o in wanted:
        by_topic.setdefault(t, []).append((p, o))
    for t, p in forgotten:
        forget.setdefault(t, []).append(p)
    body = (kw.i32(-1) + kw.i32(max_wait_ms) + kw.i32(min_bytes) + kw.i32(1 << 20) + kw.i8(0) +
            kw.i32(session_id) + kw.i32(epoch) +
            kw.array(list(by_topic.items()), lambda tp: kw.string(tp[0]) + kw.array(
                tp[1], lambda po: kw.i32(po[0]) + kw.i32(-1) + kw.i64(po[1]) + kw.i64(-1) + kw.i32(1 << 20))) +
            kw.array(list(forget.items()), lambda tp: kw.string(tp[0]) + kw.array(tp[1], kw.i32)) +
            kw.string(""))
    r = conn.request(kw.API_FETCH, VERSION, body)
    r.i32()  # throttle
    error, sid = r.i16(), r.i32()

    def part(x):
        p = {"partition": x.i32(), "error": x.i16(), "hw": x.i64()}
        x.i64()  # last stable offset
        x.i64()  # log start
        x.array(lambda y: (y.i64(), y.i64()))
        x.i32()  # preferred read replica
        p["records"] = x.nbytes() or b""
        return p

    out = {}
    for topic, parts in r.array(lambda x: (x.string(), x.array(part))) or []:
        for p in parts:
            out[(topic, p["partition"])] = p
    return error, sid, out


def produce_one(conn, topic, partition, value=b"v"):
    r = kw.produce(conn, topic, partition, kw.record_batch([(b"k", value)]), acks=1)
    assert r["error"] == 0
    return r["base_offset"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    def setup(b):
        clients.create_topic(b.bootstrap, "sessions", partitions=3)
        clients.create_topic(b.bootstrap, "other", partitions=1)
    yield from module_broker(tmp_path_factory, "fetch-sessions", setup=setup)


def test_incremental_fetches_send_and_answer_only_what_changed(broker):
    with kw.Connection(broker.port) as c:
        wanted = [("sessions", p, 0) for p in range(3)]
        error, sid, parts = session_fetch(c, 0, 0, wanted)
        assert error == 0 and sid != 0
        assert sorted(parts) == [("sessions", 0), ("sessions", 1), ("sessions", 2)], "a new session's answer is full"

        # Nothing changed: an empty answer.
        error, got_sid, parts = session_fetch(c, sid, 1)
        assert (error, got_sid, parts) == (0, sid, {})

        # A record on partition 1: the next fetch names nothing and gets partition 1 alone.
        produce_one(c, "sessions", 1)
        error, _, parts = session_fetch(c, sid, 2)
        assert error == 0 and list(parts) == [("sessions", 1)]
        assert parts[("sessions", 1)]["hw"] == 1
        assert [b["base_offset"] for b in kw.parse_batches(parts[("sessions", 1)]["records"])] == [0]

        # Its new fetch offset is all the client sends; nothing is new again.
        error, _, parts = session_fetch(c, sid, 3, [("sessions", 1, 1)])
        assert (error, parts) == (0, {})

        # A long poll with a session wakes for a record on a partition the request did not name.
        produce_one(c, "sessions", 2)
        error, _, parts = session_fetch(c, sid, 4, max_wait_ms=5000, min_bytes=1)
        assert error == 0 and list(parts) == [("sessions", 2)]


def test_partitions_are_added_and_forgotten(broker):
    with kw.Connection(broker.port) as c:
        error, sid, parts = session_fetch(c, 0, 0, [("sessions", 0, 0)])
        assert error == 0 and sid != 0 and list(parts) == [("sessions", 0)]
        # Add a partition of another topic, forget the first one.
        error, _, parts = session_fetch(c, sid, 1, [("other", 0, 0)], forgotten=[("sessions", 0)])
        assert error == 0 and list(parts) == [("other", 0)], "an added partition is answered once"
        produce_one(c, "sessions", 0)
        produce_one(c, "other", 0, b"x")
        error, _, parts = session_fetch(c, sid, 2)
        assert error == 0 and list(parts) == [("other", 0)], "a forgotten partition is no longer read"


def test_wrong_epochs_unknown_sessions_and_closing(broker):
    with kw.Connection(broker.port) as c:
        error, sid, _ = session_fetch(c, 0, 0, [("sessions", 0, 0)])
        assert error == 0 and sid != 0
        assert session_fetch(c, sid, 5)[0] == INVALID_FETCH_SESSION_EPOCH
        assert session_fetch(c, sid ^ 0x5A5A5A, 1)[0] == FETCH_SESSION_ID_NOT_FOUND
        assert session_fetch(c, sid, 1)[0] == 0, "a refused request does not use up the epoch"
        # Epoch -1: a full fetch without a session, and the end of this one.
        error, got_sid, parts = session_fetch(c, sid, -1, [("sessions", 0, 0)])
        assert (error, got_sid) == (0, 0) and list(parts) == [("sessions", 0)]
        assert session_fetch(c, sid, 2)[0] == FETCH_SESSION_ID_NOT_FOUND


def test_a_full_cache_gives_a_larger_session_the_place_of_a_smaller_one(broker_factory):
    b = broker_factory({"max.incremental.fetch.session.cache.slots": "1"})
    clients.create_topic(b.bootstrap, "s", partitions=2)
    with kw.Connection(b.port) as c:
        _, small, _ = session_fetch(c, 0, 0, [("s", 0, 0)])
        _, large, _ = session_fetch(c, 0, 0, [("s", 0, 0), ("s", 1, 0)])
        assert small != 0 and large != 0
        assert session_fetch(c, small, 1)[0] == FETCH_SESSION_ID_NOT_FOUND, "evicted"
        # A smaller one does not displace it: no session, a full answer all the same.
        error, sid, parts = session_fetch(c, 0, 0, [("s", 1, 0)])
        assert (error, sid) == (0, 0) and list(parts) == [("s", 1)]
        assert session_fetch(c, large, 1)[0] == 0
    b.stop()


def test_sessions_can_be_turned_off(broker_factory):
    b = broker_factory({"max.incremental.fetch.session.cache.slots": "0"})
    clients.create_topic(b.bootstrap, "s", partitions=1)
    with kw.Connection(b.port) as c:
        error, sid, parts = session_fetch(c, 0, 0, [("s", 0, 0)])
        assert (error, sid) == (0, 0) and list(parts) == [("s", 0)]
    b.stop()
