"""Connection admission: max.connections (held to what the open files limit leaves after the
partitions' descriptors), max.connections.per.ip with its overrides, and
max.connection.creation.rate. A connection past a bound is closed at once, so idle sockets
never take the descriptors partitions need to write."""
import re
import resource
import socket
import time

import pytest

from clients import create_topic
from kafka_wire import Connection, produce, record_batch


def limit_open_files(n):
    def apply():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return apply


@pytest.fixture(autouse=True)
def enough_descriptors_here():
    """This process opens hundreds of sockets: its soft limit up to its hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_sockets(port, n, source="127.0.0.1"):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        socks.append(s)
    return socks


def split_closed(socks, settle_s=1.5):
    """(open, closed): after `settle_s`, the sockets the broker has closed read end of stream."""
    time.sleep(settle_s)
    alive, closed = [], []
    for s in socks:
        s.setblocking(False)
        try:
            (closed if s.recv(1) == b"" else alive).append(s)
        except BlockingIOError:
            alive.append(s)
        except OSError:
            closed.append(s)
    return alive, closed


def close_all(socks):
    for s in socks:
        s.close()


def test_idle_sockets_past_the_open_files_limit_leave_produces_working(broker_factory):
    # 400 descriptors: 200 for partitions (the derived log.open.files.max) and 25 of margin,
    # 25 for the node's own; 150 connections. 600 idle sockets must not take the rest.
    broker = broker_factory({"offsets.topic.num.partitions": "1", "log.flush.interval.ms": "200",
                             "log.segment.bytes": "2048"},
                            preexec_fn=limit_open_files(400))
    topics = [f"busy-{i:02d}" for i in range(20)]
    for t in topics:
        create_topic(broker.bootstrap, t)
    with Connection(broker.port, timeout=30) as conn:
        for t in topics:
            assert produce(conn, t, 0, record_batch([(b"k", b"before")]))["error"] == 0, t
        idle = open_sockets(broker.port, 600)
        try:
            time.sleep(1.0)
            # Every produce rolls a segment: a new file to open, and the flush to sync it.
            for round_ in range(3):
                for t in topics:
                    resp = produce(conn, t, 0, record_batch([(b"k", b"a" * 1500)]), acks=-1)
                    assert resp["error"] == 0, (t, round_, resp)
                time.sleep(0.3)
            alive, closed = split_closed(idle, settle_s=0)
            # The producing connection is one of the 150.
            assert len(alive) <= 149 and len(closed) >= 600 - 149, (len(alive), len(closed))
        finally:
            close_all(idle)
    assert "is offline" not in broker.log_text()
    assert "client connections at most 150 (what the open files limit 400 leaves" in broker.log_text()
    assert re.search(r"closed a new connection from 127\.0\.0\.1 at once: max\.connections 150 reached",
                     broker.log_text())
    # Connections closed by the client give their places back.
    with Connection(broker.port, timeout=30) as conn:
        assert produce(conn, topics[0], 0, record_batch([(b"k", b"later")]))["error"] == 0
    broker.stop()


def test_connections_per_address_with_an_override(broker_factory):
    broker = broker_factory({"max.connections.per.ip": "3", "max.connections.per.ip.overrides": "127.0.0.2:6"})
    first = open_sockets(broker.port, 8)
    other = open_sockets(broker.port, 8, source="127.0.0.2")
    try:
        alive, closed = split_closed(first)
        assert (len(alive), len(closed)) == (3, 5)
        alive2, closed2 = split_closed(other, settle_s=0)
        assert (len(alive2), len(closed2)) == (6, 2)
        close_all(alive)
        time.sleep(0.5)
        again = open_sockets(broker.port, 4)
        alive3, closed3 = split_closed(again)
        assert (len(alive3), len(closed3)) == (3, 1)
        close_all(again)
    finally:
        close_all(first + other)
    broker.stop()


def test_connection_creation_rate_per_listener(broker_factory):
    broker = broker_factory({"max.connection.creation.rate": "5"})
    time.sleep(1.1)  # past the window of the harness's own connections at start
    burst = open_sockets(broker.port, 20)
    try:
        alive, closed = split_closed(burst)
        # The burst may straddle a second: at most two windows' worth.
        assert 5 <= len(alive) <= 10 and len(closed) >= 10, (len(alive), len(closed))
        later = open_sockets(broker.port, 3)  # a second later: a new window
        alive2, closed2 = split_closed(later, settle_s=0.5)
        assert len(alive2) == 3
        close_all(later)
    finally:
        close_all(burst)
    broker.stop()
