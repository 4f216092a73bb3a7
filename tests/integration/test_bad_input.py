"""Malformed frames and requests: the broker answers with the right error or closes the
connection, stays up, does not balloon in memory, and keeps serving normal clients."""
import os
import random
import socket
import time

import pytest

import kafka_wire as kw
from brokerd_harness import module_broker, rss_kib
from clients import create_topic, produce_and_confirm, producer, read_all, watermarks

CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, UNSUPPORTED_VERSION = 2, 10, 35
UNSUPPORTED_FOR_MESSAGE_FORMAT, INVALID_RECORD = 43, 87
TOPIC = "bad-input"


@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory):
    yield from module_broker(tmp_path_factory, "bad-input", overrides={"message.max.bytes": 20000},
                             setup=lambda b: create_topic(b.bootstrap, TOPIC, 1))


def assert_still_serving(b):
    """The process is alive and a normal client can produce and consume."""
    assert b.running(), f"brokerd exited:\n{b.log_text()}"
    before = watermarks(b.bootstrap, TOPIC, 0)[1]
    p = producer(b.bootstrap, linger_ms=0)
    value = f"alive-{time.monotonic_ns()}"
    [rep] = produce_and_confirm(p, TOPIC, [{"value": value}], timeout=20)
    assert rep.offset() == before
    got = read_all(b.bootstrap, TOPIC, 1, start=before)[0]
    assert [m.value().decode() for m in got] == [value]


def test_huge_frame_size_closes_connection(shared_broker):
    b = shared_broker
    rss_before = rss_kib(b.pid)
    for _ in range(3):
        with kw.Connection(b.port) as conn:
            conn.send_raw(kw.i32(0x7FFFFFFF) + b"\x00\x12\x00\x00")
            assert conn.closed_by_peer(), "a 2 GiB frame must be refused by closing the connection"
    time.sleep(0.2)
    grown_mib = (rss_kib(b.pid) - rss_before) / 1024
    assert grown_mib < 200, f"RSS grew by {grown_mib:.0f} MiB after oversized frame headers"
    assert_still_serving(b)


def test_frame_just_over_socket_request_max_bytes(shared_broker):
    b = shared_broker
    with kw.Connection(b.port) as conn:
        conn.send_raw(kw.i32(104857600 + 1))
        assert conn.closed_by_peer()
    assert_still_serving(b)


@pytest.mark.parametrize("size", [-1, -2147483648, 0, 1, 3])
def test_negative_and_tiny_frame_sizes(shared_broker, size):
    b = shared_broker
    with kw.Connection(b.port) as conn:
        conn.send_raw(kw.i32(size) + b"\x00" * max(size, 0))
        assert conn.closed_by_peer(), f"frame size {size} must close the connection"
    assert_still_serving(b)


def test_truncated_frame_then_close(shared_broker):
    b = shared_broker
    for cut in (2, 10, 30):
        conn = kw.Connection(b.port)
        frame = conn.header(18, 0) + b""
        conn.send_raw(kw.i32(100) + frame[:cut])
        conn.close()
    # A frame split across several writes is still served.
    with kw.Connection(b.port) as conn:
        payload = conn.header(18, 0)
        data = kw.i32(len(payload)) + payload
        for i in range(len(data)):
            conn.send_raw(data[i:i + 1])
            time.sleep(0.002)
        r = kw.Reader(conn.recv_frame())
        assert r.i32() == conn.correlation
        assert r.i16() == 0
    assert_still_serving(b)


@pytest.mark.parametrize("api_key", [99, 27, -1, 32767])
def test_unknown_api_key(shared_broker, api_key):
    b = shared_broker
    with kw.Connection(b.port, timeout=5) as conn:
        corr = conn.send(api_key, 0, b"\x00" * 16)
        try:
            frame = conn.recv_frame()
        except (ConnectionError, OSError):
            frame = None  # closing the connection is what Kafka does for an unknown key
        if frame is not None:
            r = kw.Reader(frame)
            assert r.i32() == corr
            assert r.i16() == UNSUPPORTED_VERSION, f"api key {api_key}: unexpected response {frame!r}"
    assert_still_serving(b)


def test_api_versions_unknown_version(shared_broker):
    b = shared_broker
    for version in (99, 5, 32767):
        with kw.Connection(b.port) as conn:
            error, apis = kw.api_versions(conn, version=version)  # answered in v0
            assert error == UNSUPPORTED_VERSION
            assert 18 in apis and apis[18][0] == 0 and apis[18][1] >= 3, apis
            assert 0 in apis and 1 in apis
            # The connection remains usable for a supported version.
            error, apis2 = kw.api_versions(conn, version=0)
            assert error == 0 and apis2 == apis
    assert_still_serving(b)


def produce_raw(b, batch, version=3):
    with kw.Connection(b.port) as conn:
        return kw.produce(conn, TOPIC, 0, batch, version=version)


def check_rejected(b, batch, allowed, version=3):
    end = watermarks(b.bootstrap, TOPIC, 0)[1]
    resp = produce_raw(b, batch, version)
    assert resp["error"] in allowed, f"error {resp['error']}, expected one of {allowed}: {resp}"
    assert resp["base_offset"] == -1
    assert watermarks(b.bootstrap, TOPIC, 0)[1] == end, "a rejected batch changed the log end"
    assert_still_serving(b)


def test_produce_raw_valid_batch_is_accepted(shared_broker):
    b = shared_broker
    end = watermarks(b.bootstrap, TOPIC, 0)[1]
    resp = produce_raw(b, kw.record_batch([(b"k1", b"v1"), (b"k2", b"v2")]))
    assert (resp["error"], resp["base_offset"]) == (0, end)
    resp = produce_raw(b, kw.record_batch([(b"k3", b"v3")]), version=8)
    assert (resp["error"], resp["base_offset"]) == (0, end + 2)
    recs = kw.read_partition(b.port, TOPIC, 0, start=end)
    assert [(r[0], r[2], r[3]) for r in recs] == [(end, b"k1", b"v1"), (end + 1, b"k2", b"v2"), (end + 2, b"k3", b"v3")]


def test_produce_wrong_crc(shared_broker):
    check_rejected(shared_broker, kw.record_batch([(b"k", b"v")], corrupt_crc=True), {CORRUPT_MESSAGE})


def test_produce_magic_1(shared_broker):
    b = shared_broker
    check_rejected(b, kw.legacy_message_v1(b"k", b"v"), {UNSUPPORTED_FOR_MESSAGE_FORMAT, CORRUPT_MESSAGE, INVALID_RECORD})
    # A v2-shaped batch whose magic byte says 1.
    check_rejected(b, kw.record_batch([(b"k", b"v")], magic=1), {UNSUPPORTED_FOR_MESSAGE_FORMAT, CORRUPT_MESSAGE,
                                                                   INVALID_RECORD})


def test_produce_too_large(shared_broker):
    check_rejected(shared_broker, kw.record_batch([(b"k", os.urandom(30000))]), {MESSAGE_TOO_LARGE})


def test_produce_records_count_mismatch(shared_broker):
    b = shared_broker
    two = [(b"k", b"a"), (b"k", b"b")]
    check_rejected(b, kw.record_batch(two, count=3), {CORRUPT_MESSAGE, INVALID_RECORD})
    check_rejected(b, kw.record_batch(two, count=1), {CORRUPT_MESSAGE, INVALID_RECORD})
    check_rejected(b, kw.record_batch(two, count=-5), {CORRUPT_MESSAGE, INVALID_RECORD})


def test_produce_batch_length_disagrees_with_data(shared_broker):
    b = shared_broker
    batch = bytearray(kw.record_batch([(b"k", b"v")]))
    # Batch length field claims more bytes than the partition carries.
    batch[8:12] = kw.i32(len(batch) + 50)
    check_rejected(b, bytes(batch), {CORRUPT_MESSAGE, INVALID_RECORD})
    # A valid batch followed by trailing bytes that do not make a batch.
    check_rejected(b, kw.record_batch([(b"k", b"v")]) + b"\x01\x02\x03", {CORRUPT_MESSAGE, INVALID_RECORD})


def test_produce_garbage_records_with_valid_crc(shared_broker):
    b = shared_broker
    rng = random.Random(7)
    for _ in range(10):
        good = kw.record_batch([(b"key", b"value" * 4)] * 3)
        header, records = good[:61], bytearray(good[61:])
        for i in range(len(records)):
            if rng.random() < 0.3:
                records[i] = rng.randrange(256)
        body = bytes(header[21:61]) + bytes(records)  # attributes .. records, covered by the CRC
        batch = header[:17] + kw.u32(kw.crc32c(body)) + body
        resp = produce_raw(b, batch)
        if resp["error"] == 0:
            continue  # the mutation happened to keep the records well formed
        assert resp["error"] in (CORRUPT_MESSAGE, INVALID_RECORD), resp
    assert_still_serving(b)


def test_random_bodies_for_every_served_api(shared_broker):
    b = shared_broker
    with kw.Connection(b.port) as conn:
        error, apis = kw.api_versions(conn)
    assert error == 0
    rng = random.Random(1234)
    for key, (lo, hi) in sorted(apis.items()):
        for version in sorted({lo, hi}):
            for length in (0, 1, 7, 64, 512):
                body = bytes(rng.randrange(256) for _ in range(length))
                try:
                    with kw.Connection(b.port, timeout=2) as conn:
                        conn.sock.settimeout(1.0)
                        conn.send(key, version, body)
                        try:
                            conn.recv_frame()
                        except (ConnectionError, socket.timeout, OSError):
                            pass
                except OSError:
                    pass
                assert b.running(), f"brokerd died on api {key} v{version} body {body.hex()}:\n{b.log_text()}"
    assert_still_serving(b)


def test_many_connections_dropped_midway(shared_broker):
    b = shared_broker
    socks = []
    for i in range(50):
        s = socket.create_connection(("127.0.0.1", b.port), timeout=5)
        s.sendall(kw.i32(1000) + b"\x00\x00" * (i % 7))
        socks.append(s)
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
        s.close()
    assert_still_serving(b)


def test_huge_array_and_string_lengths_in_small_frames(shared_broker):
    """Length prefixes far beyond the frame must be refused without allocating them."""
    b = shared_broker
    rss_before = rss_kib(b.pid)
    cases = [(3, 1, kw.i32(0x7FFFFFFF)), (0, 3, kw.i16(-1) + kw.i16(1) + kw.i32(1000) + kw.i32(0x7FFFFFFF)),
             (0, 3, kw.i16(-1) + kw.i16(1) + kw.i32(1000) + kw.i32(1) + kw.i16(0x7FFF) + b"t"),
             (0, 3, kw.i16(-1) + kw.i16(1) + kw.i32(1000) + kw.i32(1) + kw.string(TOPIC) + kw.i32(1) + kw.i32(0) +
              kw.i32(0x7FFFFFFF)),
             (1, 4, kw.i32(-1) + kw.i32(100) + kw.i32(1) + kw.i32(1000) + kw.i8(0) + kw.i32(0x10000000)),
             (21, 0, kw.i32(0x7FFFFFFF) + kw.i32(1000)),
             (19, 2, kw.i32(0x40000000)),
             (3, 9, b"\xff\xff\xff\xff\x07"),  # compact array, uvarint length 2^31
             (1, 12, kw.i32(-1) * 4 + kw.i8(0) + kw.i32(0) + kw.i32(0) + b"\xff\xff\xff\xff\x0f")]
    for key, version, body in cases:
        with kw.Connection(b.port, timeout=5) as conn:
            conn.send(key, version, body + b"\x00" * 8)
            try:
                conn.recv_frame()  # an error response is fine too
            except (ConnectionError, OSError):
                pass
        assert b.running(), f"brokerd died on api {key} v{version}"
    grown_mib = (rss_kib(b.pid) - rss_before) / 1024
    assert grown_mib < 200, f"RSS grew by {grown_mib:.0f} MiB"
    assert_still_serving(b)
