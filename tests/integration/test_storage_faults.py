"""Partitions hold at most log.open.files.max descriptors together: idle ones let go of theirs
and open again when used. A partition whose files the system will not open fails alone:
clients get KAFKA_STORAGE_ERROR for it, every other partition keeps serving, the broker keeps
running, and the partition comes back by itself once the cause is gone. Also: one process per
data directory."""
import os
import re
import resource
import shutil
import tempfile
import time

import pytest

from brokerd_harness import Broker, brokerd_binary
from clients import admin
from confluent_kafka.admin import NewTopic
from kafka_wire import Connection, produce, read_partition, record_batch

KAFKA_STORAGE_ERROR = 56
NOBODY = 65534


def create_topics(bootstrap, names):
    client = admin(bootstrap)  # alive until every future resolves
    futures = client.create_topics([NewTopic(n, 1, 1) for n in names], operation_timeout=15)
    for f in futures.values():
        f.result(timeout=30)


def produce_until(conn, topic, want, deadline_s):
    """Produces one record until the answer's error is `want` (or the deadline passes)."""
    deadline = time.monotonic() + deadline_s
    while True:
        resp = produce(conn, topic, 0, record_batch([(b"k", b"v")]))
        if resp["error"] == want or time.monotonic() > deadline:
            return resp
        time.sleep(0.2)


def limit_open_files(n):
    def apply():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return apply


SEGMENT_FILE = re.compile(r"\d{20}\.log")


def open_segment_files(pid):
    """Segment files (<20-digit offset>.log) the process holds open, but the metadata log's
    (outside the budget); not the broker's own log, which its stdout and stderr write."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        n += bool(SEGMENT_FILE.fullmatch(os.path.basename(target))) and "__cluster_metadata" not in target
    return n


# Descriptors held a moment past the budget: the margin an open may take when the evictor
# cannot free one at once (responses being sent, syncs, another shard's logs hold them),
# max(budget / 8, 8), given back within a tick.
MARGIN = 8


def test_more_partitions_than_the_files_budget_all_serve(broker_factory):
    broker = broker_factory({"offsets.topic.num.partitions": "1", "log.open.files.max": "12",
                             "log.segment.bytes": "2048"})
    names = [f"lru-{i:02d}" for i in range(40)]
    create_topics(broker.bootstrap, names)
    with Connection(broker.port, timeout=30) as conn:
        for round in range(3):  # several segments each, written in turns
            for n in names:
                resp = produce_until(conn, n, 0, 10.0)
                assert resp["error"] == 0, (n, resp)
                assert open_segment_files(broker.pid) <= 12 + MARGIN
    for n in names:  # reads open closed segments again, within the budget
        assert [r[2] for r in read_partition(broker.port, n, 0)] == [b"k"] * 3, n
        assert open_segment_files(broker.pid) <= 12 + MARGIN
    broker.stop()
    broker.start()
    for n in names[:5]:
        assert len(read_partition(broker.port, n, 0)) == 3, n
    assert open_segment_files(broker.pid) <= 12 + MARGIN
    broker.stop()


def test_a_low_open_files_limit_serves_every_partition_across_an_unclean_restart(broker_factory):
    # A limit of 80 leaves partitions 40 descriptors (the rest is kept for connections and the
    # metadata log), a budget written larger is held to that; 100 partitions all serve.
    broker = broker_factory({"offsets.topic.num.partitions": "1", "log.open.files.max": "1000"},
                            preexec_fn=limit_open_files(80))
    names = [f"keep-{i:02d}" for i in range(100)]
    create_topics(broker.bootstrap, names)
    with Connection(broker.port, timeout=30) as conn:
        for n in names:
            assert produce_until(conn, n, 0, 10.0)["error"] == 0, n
        assert open_segment_files(broker.pid) <= 40 + MARGIN
    assert "partition files may hold 40 descriptors (log.open.files.max 1000 is more than" in broker.log_text()
    broker.kill()  # unclean: each log is recovered at start and opened again when used
    broker.start()
    with Connection(broker.port, timeout=30) as conn:
        for n in names:
            assert produce_until(conn, n, 0, 10.0)["error"] == 0, n
    # The first flush rounds after the crash (flush.ms 1000) must not hold a descriptor per
    # partition directory: every one of them was dirty (one syncfs() at start settles them).
    peak, deadline = 0, time.monotonic() + 2.5
    while time.monotonic() < deadline:
        peak = max(peak, len(os.listdir(f"/proc/{broker.pid}/fd")))
    assert peak <= 72, f"{peak} descriptors held after an unclean start (limit 80)"
    for n in names:
        assert [r[2] for r in read_partition(broker.port, n, 0)] == [b"k", b"k"], n
        assert open_segment_files(broker.pid) <= 40 + MARGIN
    assert "is offline" not in broker.log_text()
    broker.stop()


@pytest.fixture
def world_dir():
    """A directory an unprivileged brokerd can use (pytest's tmp_path is private to root)."""
    d = tempfile.mkdtemp(prefix="brokerd-nobody-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_an_unreadable_partition_directory_fails_alone(broker_factory, world_dir):
    if os.geteuid() != 0:
        pytest.skip("needs root, to run brokerd as an unprivileged user")
    if not os.access(brokerd_binary(), os.X_OK):
        pytest.skip("brokerd binary not found")

    def as_nobody():
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    workdir = os.path.join(world_dir, "node")
    os.makedirs(os.path.join(workdir, "data"))
    for root, dirs, _ in os.walk(world_dir):
        for d in [root] + [os.path.join(root, x) for x in dirs]:
            os.chown(d, NOBODY, NOBODY)
    broker = broker_factory({"offsets.topic.num.partitions": "1"}, workdir=workdir, preexec_fn=as_nobody)
    create_topics(broker.bootstrap, ["readable", "locked"])
    with Connection(broker.port, timeout=30) as conn:
        for n in ("readable", "locked"):
            assert produce_until(conn, n, 0, 10.0)["error"] == 0
    broker.stop()

    locked = os.path.join(workdir, "data", "locked-0")
    os.chown(locked, 0, 0)
    os.chmod(locked, 0o700)
    broker.start()
    with Connection(broker.port, timeout=30) as conn:
        assert produce_until(conn, "readable", 0, 10.0)["error"] == 0
        assert produce_until(conn, "locked", KAFKA_STORAGE_ERROR, 10.0)["error"] == KAFKA_STORAGE_ERROR
        os.chown(locked, NOBODY, NOBODY)
        assert produce_until(conn, "locked", 0, 15.0)["error"] == 0
    assert "Permission denied" in broker.log_text()
    broker.stop()


def test_a_second_process_on_a_locked_data_directory_is_refused(broker):
    second = Broker(broker.workdir.parent / "second", overrides={"log.dirs": str(broker.data_dir)})
    try:
        second.start(wait=False)
        rc = second.proc.wait(timeout=30)
    finally:
        second.kill()
    assert rc != 0
    text = second.log_text()
    assert f"data directory {broker.data_dir} is in use by another process (pid {broker.pid})" in text, text
    assert broker.alive()
