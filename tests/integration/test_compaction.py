"""Log compaction through a real brokerd: the latest value of each key survives, tombstones
go after delete.retention.ms, offsets keep increasing, kill -9 mid-clean loses nothing, and a
record without a key is refused by a compacted topic."""
import random
import time

from confluent_kafka import KafkaError

from clients import create_topic, produce_and_confirm, producer, read_all, watermarks

CLEANER = {"log.cleaner.backoff.ms": 100, "log.segment.delete.delay.ms": 0}
TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "4096", "min.cleanable.dirty.ratio": "0.01",
                "delete.retention.ms": "3000"}
KEYS = 150
VERSIONS = 8


def value(key, version):
    return f"{key}:v{version}:" + "x" * 40


def produce_versions(bootstrap, topic, versions, tombstone_every=10, filler=0):
    """KEYS keys x versions; every tombstone_every-th key ends with a tombstone. Then
    `filler` unique keys so the rounds' data leaves the active segment."""
    p = producer(bootstrap, linger_ms=2, batch_num_messages=20)
    items = []
    for v in versions:
        for k in range(KEYS):
            items.append({"key": f"key-{k}", "value": value(f"key-{k}", v)})
    if tombstone_every:
        items += [{"key": f"key-{k}", "value": None} for k in range(0, KEYS, tombstone_every)]
    items += [{"key": f"filler-{versions[-1]}-{i}", "value": "f" * 100} for i in range(filler)]
    produce_and_confirm(p, topic, items)


def key_view(bootstrap, topic):
    msgs = read_all(bootstrap, topic, 1)[0]
    offsets = [m.offset() for m in msgs]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets), "offsets not increasing"
    counts, latest = {}, {}
    for m in msgs:
        k = m.key().decode()
        counts[k] = counts.get(k, 0) + 1
        latest[k] = None if m.value() is None else m.value().decode()
    return counts, latest


def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        ok, last = pred()
        if ok:
            return last
        time.sleep(0.5)
    raise AssertionError(f"{what} not reached within {timeout}s; last state: {last}")


def test_compacted_topic_keeps_latest_value_per_key(broker_factory):
    broker = broker_factory(CLEANER)
    topic = "compacted"
    create_topic(broker.bootstrap, topic, 1, TOPIC_CONFIG)
    produce_versions(broker.bootstrap, topic, list(range(VERSIONS)), filler=200)
    lo, hi = watermarks(broker.bootstrap, topic, 0)
    tombstoned = {f"key-{k}" for k in range(0, KEYS, 10)}

    def compacted():
        counts, latest = key_view(broker.bootstrap, topic)
        dup = {k: n for k, n in counts.items() if k.startswith("key-") and n > 1}
        return not dup, {"duplicates": len(dup)}

    wait_until(compacted, 60, "one record per key")
    counts, latest = key_view(broker.bootstrap, topic)
    for k in range(KEYS):
        key = f"key-{k}"
        if key in tombstoned:
            assert latest.get(key, None) is None  # a tombstone or already gone
        else:
            assert latest[key] == value(key, VERSIONS - 1)
    # Offsets are never renumbered: the log end stays where the producer left it.
    assert watermarks(broker.bootstrap, topic, 0)[1] == hi

    def tombstones_gone():
        counts, _ = key_view(broker.bootstrap, topic)
        left = tombstoned & set(counts)
        return not left, {"tombstoned keys left": sorted(left)[:5]}

    wait_until(tombstones_gone, 60, "tombstones removed after delete.retention.ms")
    counts, latest = key_view(broker.bootstrap, topic)
    for k in range(KEYS):
        key = f"key-{k}"
        if key not in tombstoned:
            assert counts[key] == 1 and latest[key] == value(key, VERSIONS - 1)
    assert len(broker.segment_files(topic, 0)) < 20
    assert "cleaned compacted-0" in broker.log_text()


def test_kill9_during_cleaning_loses_no_latest_value(broker_factory):
    broker = broker_factory(CLEANER)
    topic = "compacted-crash"
    create_topic(broker.bootstrap, topic, 1, dict(TOPIC_CONFIG, **{"delete.retention.ms": "600000"}))
    rng = random.Random(7)
    version = 0
    for round_ in range(4):
        produce_versions(broker.bootstrap, topic, [version, version + 1], tombstone_every=0, filler=60)
        version += 2
        time.sleep(rng.uniform(0.05, 0.6))  # the cleaner runs every 100 ms: land inside a pass
        broker.kill()
        broker.restart()
    def all_latest():
        counts, latest = key_view(broker.bootstrap, topic)
        wrong = [f"key-{k}" for k in range(KEYS) if latest.get(f"key-{k}") != value(f"key-{k}", version - 1)]
        return not wrong, {"wrong": wrong[:5]}

    wait_until(all_latest, 30, "every key's latest value readable after the crashes")
    # And the cleaner still finishes its work on the recovered log.
    def compacted():
        counts, _ = key_view(broker.bootstrap, topic)
        dup = [k for k, n in counts.items() if k.startswith("key-") and n > 1]
        return not dup, {"duplicates": len(dup)}

    wait_until(compacted, 60, "one record per key after recovery")
    leftovers = [p.name for p in broker.partition_dir(topic, 0).iterdir()
                 if p.name.endswith(".cleaned") or p.name.endswith(".swap")]
    assert not leftovers or broker.running()


def test_record_without_key_is_refused_by_compacted_topic(broker_factory):
    broker = broker_factory(CLEANER)
    topic = "compacted-keys"
    create_topic(broker.bootstrap, topic, 1, TOPIC_CONFIG)
    p = producer(broker.bootstrap, retries=0, message_timeout_ms=10000)
    errors = []
    p.produce(topic, value=b"no key", on_delivery=lambda err, msg: errors.append(err))
    assert p.flush(15) == 0
    assert len(errors) == 1 and errors[0] is not None, errors
    assert errors[0].code() == KafkaError.INVALID_RECORD, errors[0]
    # A keyed record still goes in.
    produce_and_confirm(p, topic, [{"key": "k", "value": "v"}])
    assert watermarks(broker.bootstrap, topic, 0)[1] == 1
