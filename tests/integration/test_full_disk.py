"""A full disk: appends fail with KAFKA_STORAGE_ERROR for the partition, everything
acknowledged before stays readable with no gap or garbage, the broker keeps serving, and
once space is freed producing works again. Uses a small tmpfs mounted by the test."""
import errno
import subprocess
import time

import pytest

from clients import create_topic
from kafka_wire import Connection, produce, read_partition, record_batch

KAFKA_STORAGE_ERROR = 56


def mount_tmpfs(mnt, size):
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.decode().strip()}")


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "small"
    mount_tmpfs(mnt, "16m")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.fixture
def fs_32m(tmp_path):
    mnt = tmp_path / "small32"
    mount_tmpfs(mnt, "32m")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill_to_last_block(path):
    """Writes `path` until the file system refuses another byte."""
    with open(path, "wb", buffering=0) as f:
        chunk = b"\0" * 4096
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e


def test_full_disk_fails_appends_alone_and_recovers(broker_factory, small_fs):
    ballast = small_fs / "ballast"
    ballast.write_bytes(b"\0" * (4 << 20))
    broker = broker_factory({"log.dirs": str(small_fs), "offsets.topic.num.partitions": "1",
                             "offsets.topic.segment.bytes": "1048576"})
    create_topic(broker.bootstrap, "full", 1, {"segment.bytes": "1048576"})

    value = b"v" * 1000
    acked = []  # (offset, key) of every acknowledged record
    error = 0
    with Connection(broker.port, timeout=30) as conn:
        for i in range(3000):  # 30 MB at most, twice the file system
            keys = [f"k{i}-{j}".encode() for j in range(10)]
            resp = produce(conn, "full", 0, record_batch([(k, value) for k in keys]))
            if resp["error"]:
                error = resp["error"]
                break
            acked += [(resp["base_offset"] + j, k) for j, k in enumerate(keys)]
        assert error == KAFKA_STORAGE_ERROR, f"expected KAFKA_STORAGE_ERROR, got {error}"
        assert len(acked) > 1000

        # Reads keep working, and the log holds exactly what was acknowledged.
        got = read_partition(broker.port, "full", 0)
        assert [(r[0], r[2]) for r in got] == acked

        # Free space: producing succeeds again, right after the last acknowledged offset.
        ballast.unlink()
        deadline = time.monotonic() + 20
        while True:
            resp = produce(conn, "full", 0, record_batch([(b"after", value)]))
            if resp["error"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert resp["error"] == 0, resp
        assert resp["base_offset"] == acked[-1][0] + 1

    got = read_partition(broker.port, "full", 0)
    assert got[-1][0] == acked[-1][0] + 1 and got[-1][2] == b"after"


def test_full_disk_with_preallocated_segment_fails_appends_without_a_crash(broker_factory, fs_32m):
    """The log file of a preallocated segment has room on a full disk, its index files do not:
    an index page the file system cannot allocate fails the append (it once killed the broker
    with SIGBUS, the index being written through a shared mapping)."""
    broker = broker_factory({"log.dirs": str(fs_32m), "offsets.topic.num.partitions": "1",
                             "offsets.topic.segment.bytes": "1048576"})
    create_topic(broker.bootstrap, "prealloc", 1, {"preallocate": "true", "segment.bytes": "8388608"})

    value = b"v" * 1000
    acked = []  # (offset, key) of every acknowledged record
    with Connection(broker.port, timeout=30) as conn:
        # A few index entries while there is room: the indexes' first pages are taken.
        for i in range(10):
            resp = produce(conn, "prealloc", 0, record_batch([(f"warm{i}".encode(), value)]))
            assert resp["error"] == 0, resp
            acked.append((resp["base_offset"], f"warm{i}".encode()))
        ballast = fs_32m / "ballast"
        fill_to_last_block(ballast)

        error = 0
        for i in range(3000):
            key = f"k{i}".encode()
            try:
                resp = produce(conn, "prealloc", 0, record_batch([(key, value)]))
            except (OSError, EOFError, ConnectionError) as e:
                pytest.fail(f"the broker dropped the connection after {len(acked)} records "
                            f"(exit code {broker.proc.poll()}): {e!r}")
            if resp["error"]:
                error = resp["error"]
                break
            acked.append((resp["base_offset"], key))
        assert broker.running(), f"brokerd exited with {broker.proc.poll()}"
        assert error == KAFKA_STORAGE_ERROR, f"expected KAFKA_STORAGE_ERROR, got {error} after {len(acked)} records"
        assert len(acked) > 1000  # the segment's room was used up to the index pages in hand
        print(f"{len(acked)} records acknowledged before KAFKA_STORAGE_ERROR")

        got = read_partition(broker.port, "prealloc", 0)
        assert [(r[0], r[2]) for r in got] == acked

        ballast.unlink()
        deadline = time.monotonic() + 20
        while True:
            resp = produce(conn, "prealloc", 0, record_batch([(b"after", value)]))
            if resp["error"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert resp["error"] == 0, resp
        assert resp["base_offset"] == acked[-1][0] + 1
        acked.append((resp["base_offset"], b"after"))

    # Nothing acknowledged is lost, also across a restart.
    got = read_partition(broker.port, "prealloc", 0)
    assert [(r[0], r[2]) for r in got] == acked
    broker.stop()
    broker.start()
    got = read_partition(broker.port, "prealloc", 0)
    assert [(r[0], r[2]) for r in got] == acked
