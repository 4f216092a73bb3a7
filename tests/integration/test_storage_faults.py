"""A partition whose files cannot be opened fails alone: clients get KAFKA_STORAGE_ERROR for
it, every other partition keeps serving, the broker keeps running, and the partition comes
back by itself once the cause is gone. Also: one process per data directory."""
import os
import resource
import shutil
import subprocess
import tempfile
import time

import pytest

from brokerd_harness import Broker, brokerd_binary
from clients import admin
from confluent_kafka.admin import NewTopic
from kafka_wire import Connection, produce, read_partition, record_batch

KAFKA_STORAGE_ERROR = 56
NOT_LEADER_OR_FOLLOWER = 6
UNKNOWN_TOPIC_OR_PARTITION = 3
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


def settled_answer(conn, topic, deadline_s=10.0):
    """The error of a produce once the partition exists here (served or offline)."""
    deadline = time.monotonic() + deadline_s
    while True:
        resp = produce(conn, topic, 0, record_batch([(b"k", b"v")]))
        if resp["error"] not in (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION) or time.monotonic() > deadline:
            return resp["error"]
        time.sleep(0.1)


def limit_open_files(n):
    def apply():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return apply


def split(conn, names):
    answers = {n: settled_answer(conn, n) for n in names}
    served = [n for n in names if answers[n] == 0]
    offline = [n for n in names if answers[n] == KAFKA_STORAGE_ERROR]
    assert len(served) + len(offline) == len(names), answers
    return served, offline


def free_descriptors_and_recover(broker, conn, served, offline):
    """Deletes served topics (their files close), then every offline partition must open at
    its next retry. Keeps two served topics."""
    kept, doomed = served[:2], served[2:]
    assert len(doomed) >= len(offline), (served, offline)
    client = admin(broker.bootstrap)
    for f in client.delete_topics(doomed, operation_timeout=15).values():
        f.result(timeout=30)
    for n in offline:
        resp = produce_until(conn, n, 0, 15.0)
        assert resp["error"] == 0, (n, resp)
    return kept


# An open files limit of 80 leaves 40 descriptors to partitions (a segment file each), so
# that of 60 one-partition topics some are served and some cannot open.
LIMIT = 80
TOPICS = 60


def test_partitions_beyond_the_open_files_limit_fail_alone_and_come_back(broker_factory):
    broker = broker_factory({"offsets.topic.num.partitions": "1"}, preexec_fn=limit_open_files(LIMIT))
    names = [f"many-{i:02d}" for i in range(TOPICS)]
    with Connection(broker.port, timeout=30) as conn:  # opened while descriptors remain
        create_topics(broker.bootstrap, names)
        served, offline = split(conn, names)
        assert served and offline, (served, offline)
        assert broker.running(), broker.log_text()
        for n in served:
            assert produce(conn, n, 0, record_batch([(b"k2", b"v2")]))["error"] == 0
        kept = free_descriptors_and_recover(broker, conn, served, offline)
    assert "is offline (KAFKA_STORAGE_ERROR to clients)" in broker.log_text()
    assert "is online again" in broker.log_text()
    for n in kept:
        assert [r[2] for r in read_partition(broker.port, n, 0)] == [b"k", b"k2"]
    broker.stop()


def test_a_restart_with_a_smaller_files_budget_serves_what_it_can_open(broker_factory):
    broker = broker_factory({"offsets.topic.num.partitions": "1"})
    names = [f"keep-{i:02d}" for i in range(20)]
    create_topics(broker.bootstrap, names)
    with Connection(broker.port, timeout=30) as conn:
        for n in names:
            assert produce_until(conn, n, 0, 10.0)["error"] == 0
    broker.kill()  # unclean: the restart recovers every log it opens
    broker.overrides["log.open.files.max"] = "12"
    broker.start()
    with Connection(broker.port, timeout=30) as conn:
        served, offline = split(conn, names)
        assert served and offline, (served, offline)
        kept = free_descriptors_and_recover(broker, conn, served, offline)
    for n in kept + offline:  # the record from before the crash, then those after
        assert [r[2] for r in read_partition(broker.port, n, 0)][0] == b"k"
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
