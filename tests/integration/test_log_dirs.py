"""Moving partitions between the log dirs of one node (AlterReplicaLogDirs, through
`brokerctl log-dirs move`): the partition keeps serving an idempotent producer during the
moves, every acknowledged record reads back once and in order, also after a restart, and
bad requests are refused with Kafka's codes."""
import json
import subprocess
import threading
import time

from confluent_kafka import Producer

import clients
from brokerd_harness import brokerctl_binary

MOVE_TIMEOUT_S = 60


def ctl(broker, *args):
    cmd = [brokerctl_binary(), "--bootstrap-server", broker.bootstrap] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=MOVE_TIMEOUT_S + 30)


def placements(broker, topic):
    r = ctl(broker, "--output", "json", "log-dirs", "describe", "--topic", topic)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def two_dir_broker(broker_factory, tmp_path):
    dirs = [tmp_path / "disk-a", tmp_path / "disk-b"]
    for d in dirs:
        d.mkdir()
    b = broker_factory({"log.dirs": ",".join(str(d) for d in dirs)})
    return b, [str(d) for d in dirs]


class KeyedWriter:
    """An idempotent acks=all producer writing unique values on a few keys until stopped,
    at a bounded rate (a move converges only while it copies faster than the partition
    grows, and a sanitizer build copies slowly); remembers what was acknowledged, per key
    in order."""

    RECORDS_PER_S = 2000

    def __init__(self, bootstrap, topic):
        self.topic = topic
        self.acked = {}
        self.failed = []
        self.stop_flag = threading.Event()
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 2, "message.timeout.ms": 60000})
        self.thread = threading.Thread(target=self.run, daemon=True)

    def on_delivery(self, err, msg):
        if err is not None:
            self.failed.append(str(err))
        else:
            self.acked.setdefault(msg.key().decode(), []).append(msg.value().decode())

    def run(self):
        i = 0
        started = time.time()
        deadline = started + 120
        while not self.stop_flag.is_set() and time.time() < deadline:
            ahead = i / self.RECORDS_PER_S - (time.time() - started)
            if ahead > 0:
                self.producer.poll(min(ahead, 0.05))
                continue
            key = f"k{i % 8}"
            try:
                self.producer.produce(self.topic, key=key, value=f"{key}-{i:07d}-" + "x" * 300, on_delivery=self.on_delivery)
                i += 1
            except BufferError:
                self.producer.poll(0.05)
            if i % 200 == 0:
                self.producer.poll(0.01)
        self.producer.flush(60)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(90)


def check_read_back(bootstrap, topic, acked):
    records = clients.read_all(bootstrap, topic, 1, timeout=60)
    by_key = {}
    for m in records[0]:
        by_key.setdefault(m.key().decode(), []).append(m.value().decode())
    total = 0
    for key, values in acked.items():
        got = by_key.get(key, [])
        assert len(got) == len(set(got)), f"{key}: duplicates"
        assert got == sorted(got), f"{key}: out of order"
        missing = set(values) - set(got)
        assert not missing, f"{key}: {len(missing)} acknowledged records lost"
        total += len(values)
    return total


def test_a_partition_moves_between_log_dirs_while_it_serves(broker_factory, tmp_path):
    b, dirs = two_dir_broker(broker_factory, tmp_path)
    # Small segments: each move copies many closed segments and the active one.
    clients.create_topic(b.bootstrap, "moving", 1, config={"segment.bytes": "262144"})
    start_dir = next(p["log_dir"] for p in placements(b, "moving"))
    other = dirs[1] if start_dir == dirs[0] else dirs[0]
    moves = []
    with KeyedWriter(b.bootstrap, "moving") as w:
        deadline = time.time() + 10
        while sum(len(v) for v in w.acked.values()) < 3000 and time.time() < deadline:
            time.sleep(0.1)
        for target in (other, start_dir, other, start_dir, other):
            r = ctl(b, "--output", "json", "log-dirs", "move", "--topic", "moving", "--partition", 0, "--dir", target,
                    "--wait-ms", MOVE_TIMEOUT_S * 1000)
            assert r.returncode == 0, r.stderr
            moves.append(json.loads(r.stdout)["milliseconds"])
            time.sleep(0.3)
    assert not w.failed, w.failed[:5]
    now = placements(b, "moving")
    assert [(p["log_dir"], p["future"]) for p in now] == [(other, False)], now
    # Only the partition's directory in its new dir is left: no copy, no old directory, no
    # marker. The broker deletes them in the background once the move has committed.
    deadline = time.monotonic() + 30
    while True:
        left = sorted(str(p) for p in tmp_path.glob("disk-*/moving-0*"))
        if left == [f"{other}/moving-0"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == [f"{other}/moving-0"], left
    total = check_read_back(b.bootstrap, "moving", w.acked)
    assert total >= 3000, total
    # After a crash (kill -9) the node finds the partition in its new dir with everything in it.
    b.kill()
    b.start()
    assert [p["log_dir"] for p in placements(b, "moving")] == [other]
    assert check_read_back(b.bootstrap, "moving", w.acked) == total
    assert "moved moving-0 to" in b.log_text(0)
    print(f"5 moves under load: {moves} ms, {total} records acknowledged, all read back")


def test_bad_moves_are_refused_with_kafkas_codes(broker_factory, tmp_path):
    b, dirs = two_dir_broker(broker_factory, tmp_path)
    clients.create_topic(b.bootstrap, "fixed", 1)
    r = ctl(b, "log-dirs", "move", "--topic", "fixed", "--partition", 0, "--dir", str(tmp_path / "not-a-log-dir"))
    assert r.returncode != 0 and "LOG_DIR_NOT_FOUND" in r.stderr, r.stderr
    r = ctl(b, "log-dirs", "move", "--topic", "fixed", "--partition", 7, "--dir", dirs[1])
    assert r.returncode != 0 and "REPLICA_NOT_AVAILABLE" in r.stderr, r.stderr
    r = ctl(b, "log-dirs", "move", "--topic", "no-such-topic", "--partition", 0, "--dir", dirs[1])
    assert r.returncode != 0 and "REPLICA_NOT_AVAILABLE" in r.stderr, r.stderr
    # Moving to where it is already: nothing to do, at once.
    here = placements(b, "fixed")[0]["log_dir"]
    r = ctl(b, "log-dirs", "move", "--topic", "fixed", "--partition", 0, "--dir", here)
    assert r.returncode == 0, r.stderr
    assert b.alive()
