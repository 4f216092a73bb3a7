"""Frames larger than the connection's staging buffer are read straight into their own
buffer, waking the reader only once much of the body is there. Whatever way such a frame
arrives (trickled, pipelined behind and ahead of small frames, cut short) it is answered
once, in order, and the broker keeps serving."""
import struct
import time

import pytest

import kafka_wire as kw
from brokerd_harness import module_broker
from clients import create_topic, watermarks

TOPIC = "large-frames"
PARTITIONS = 3


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    yield from module_broker(tmp_path_factory, "large-frames",
                             setup=lambda b: create_topic(b.bootstrap, TOPIC, PARTITIONS))


def big_batch(tag, records=400, value_size=2000):
    """About 800 KB: under message.max.bytes, well over the 64 KB staging buffer."""
    return kw.record_batch([(f"{tag}-{i}".encode(), bytes([65 + i % 26]) * value_size) for i in range(records)])


def produce_frame(conn, batches, version=3):
    """A Produce request (acks=all) with one batch per partition, as a length-prefixed frame."""
    body = (kw.string(None) + kw.i16(-1) + kw.i32(10000) +
            kw.array([TOPIC], lambda t: kw.string(t) + kw.array(
                list(enumerate(batches)), lambda pb: kw.i32(pb[0]) + kw.nbytes(pb[1]))))
    payload = conn.header(kw.API_PRODUCE, version) + body
    return kw.i32(len(payload)) + payload, conn.correlation


def read_produce_response(conn, correlation):
    r = kw.Reader(conn.recv_frame())
    assert r.i32() == correlation

    def part(x):
        return {"partition": x.i32(), "error": x.i16(), "base_offset": x.i64(), "log_append_time": x.i64()}

    topics = r.array(lambda x: (x.string(), x.array(part)))
    return {p["partition"]: p for p in topics[0][1]}


def api_versions_frame(conn):
    payload = conn.header(kw.API_API_VERSIONS, 0)
    return kw.i32(len(payload)) + payload, conn.correlation


def read_api_versions(conn, correlation):
    r = kw.Reader(conn.recv_frame())
    assert r.i32() == correlation
    assert r.i16() == 0


def ends(b):
    return [watermarks(b.bootstrap, TOPIC, p)[1] for p in range(PARTITIONS)]


def check_written(b, before, tag, records=400):
    """Each partition got exactly one batch of `records` records with this tag, after `before`."""
    for p in range(PARTITIONS):
        recs = kw.read_partition(b.port, TOPIC, p, start=before[p])
        mine = [r for r in recs if r[2].decode().startswith(f"{tag}-")]
        assert len(mine) == records, f"partition {p}: {len(mine)} records tagged {tag}"
        assert [r[2].decode() for r in mine] == [f"{tag}-{i}" for i in range(records)]


def test_trickled_large_frame_is_answered(broker):
    before = ends(broker)
    with kw.Connection(broker.port, timeout=30) as conn:
        frame, corr = produce_frame(conn, [big_batch(f"trickle{p}") for p in range(PARTITIONS)])
        assert len(frame) > 2 << 20
        # Uneven pieces with pauses: the body arrives over about a second.
        pos, step = 0, 1
        while pos < len(frame):
            piece = min(len(frame) - pos, 37_000 * step)
            conn.send_raw(frame[pos:pos + piece])
            pos += piece
            step = step % 5 + 1
            time.sleep(0.01)
        resp = read_produce_response(conn, corr)
    assert all(resp[p]["error"] == 0 for p in range(PARTITIONS)), resp
    assert [resp[p]["base_offset"] for p in range(PARTITIONS)] == before
    for p in range(PARTITIONS):
        recs = kw.read_partition(broker.port, TOPIC, p, start=before[p])
        assert [r[2].decode() for r in recs] == [f"trickle{p}-{i}" for i in range(400)]


def test_large_and_small_frames_pipelined_in_one_write(broker):
    with kw.Connection(broker.port, timeout=30) as conn:
        frames, expect = [], []
        for round_ in range(4):
            f, c = produce_frame(conn, [big_batch(f"pipe{round_}") for _ in range(PARTITIONS)])
            frames.append(f)
            expect.append(("produce", c))
            f, c = api_versions_frame(conn)
            frames.append(f)
            expect.append(("versions", c))
        before = ends(broker)
        conn.send_raw(b"".join(frames))
        offsets = []
        for kind, corr in expect:
            if kind == "produce":
                resp = read_produce_response(conn, corr)
                assert all(resp[p]["error"] == 0 for p in range(PARTITIONS)), resp
                offsets.append([resp[p]["base_offset"] for p in range(PARTITIONS)])
            else:
                read_api_versions(conn, corr)
    # In arrival order: each request's batch follows the previous one's on every partition.
    for i, row in enumerate(offsets):
        assert row == [before[p] + 400 * i for p in range(PARTITIONS)]
    for i in range(4):
        check_written(broker, before, f"pipe{i}")


def test_large_frame_cut_short_then_close(broker):
    before = ends(broker)
    for cut in (10, 70_000, 1_500_000):
        conn = kw.Connection(broker.port)
        frame, _ = produce_frame(conn, [big_batch("cut") for _ in range(PARTITIONS)])
        conn.send_raw(frame[:cut])
        time.sleep(0.05)
        conn.close()
    # Nothing of the cut frames was written, and the broker still answers.
    assert ends(broker) == before
    with kw.Connection(broker.port) as conn:
        f, c = api_versions_frame(conn)
        conn.send_raw(f)
        read_api_versions(conn, c)
    test_trickled_large_frame_is_answered(broker)
