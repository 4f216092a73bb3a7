"""A full disk: appends fail with KAFKA_STORAGE_ERROR for the partition, everything
acknowledged before stays readable with no gap or garbage, the broker keeps serving, and
once space is freed producing works again. Uses a small tmpfs mounted by the test."""
import subprocess
import time

import pytest

from clients import create_topic
from kafka_wire import Connection, produce, read_partition, record_batch

KAFKA_STORAGE_ERROR = 56


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


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
