"""Workloads over what the brokers remove on their own: a compacted topic keeps the latest value of
each key, a retained topic deletes old segments. Each has a topic of its own, so the main
checker (checker.py) never sees their records; their events carry a "topic" field.

  compacted   every key is written twice, first with acks=all (idempotent), then about 0.4 s
              later with acks=1, to "chaos-compacted" (cleanup.policy=compact, small segments,
              an eager cleaner) and never again. A committed value and a newer, uncommitted one
              then meet in closed segments whenever a leader is cut off, which is where a
              cleaner that ignores the high watermark loses the committed one for good.
              Checks: the final read's latest record of each key is at or after the key's
              acknowledged acks=all record ("compacted_lost"); every replica holds the same
              latest record of every key ("compacted_diverged", read from the segment files).
  retention   acks=all and acks=1 writers to "chaos-retained" (retention.bytes and retention.ms
              small, small segments); a sampler asks every node, several times a second, for
              each partition's log start and high watermark: a log start above the high
              watermark means retention deleted records that were not committed
              ("retention_past_hw"). A record deleted below it is what retention is for.

The campaign also requires every replica of every campaign topic back in its ISR once the
faults are healed ("isr_not_restored").
"""
import collections
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "utils"))
import kafka_wire as kw  # noqa: E402
from checker import parse_value  # noqa: E402
from replicas import whole_batches  # noqa: E402
from workloads import ConfluentWriter, Writer  # noqa: E402

COMPACTED = "chaos-compacted"
RETAINED = "chaos-retained"
KEPT_WORKLOADS = ("compacted", "retention")
# Three partitions (about one led by each node of three) and at most 50 new records/s per
# writer: enough for segments of 1 KiB to roll several times within a fault, little enough
# that cleaning and deleting them leaves a 2-core machine room for the rest of the campaign.
PARTITIONS = 3
MAX_RATE = 50.0

# Topic configs: segments of about ten records, the cleaner free to clean any dirty segment,
# a retained partition holding a few segments for a second or two.
TOPIC_CONFIGS = {
    COMPACTED: {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01",
                "delete.retention.ms": "86400000"},
    RETAINED: {"cleanup.policy": "delete", "segment.bytes": "1024", "retention.bytes": "2048",
               "retention.ms": "1500"},
}
# Broker settings that make the cleaner and retention look often enough to act within a fault.
BROKER_SETTINGS = {"compacted": {"log.cleaner.backoff.ms": "200"},
                   "retention": {"log.retention.check.interval.ms": "300"}}
TOPIC_OF = {"compacted": COMPACTED, "retention": RETAINED}


class TopicWriter(ConfluentWriter):
    """A librdkafka writer whose events name its topic, uncompressed (the replica check reads
    the segment files)."""

    def __init__(self, name, recorder, topic, rate, bootstrap, acks, idempotent):
        super().__init__(name, recorder, topic, rate, bootstrap, acks, idempotent)
        self.conf["compression.type"] = "none"
        from confluent_kafka import Producer
        self.producer = Producer(self.conf)

    def acked(self, value, partition, offset):
        self.recorder.record({"type": "ack", "topic": self.topic, "writer": self.name, "value": value,
                              "partition": partition, "offset": offset})

    def failed(self, value, error):
        self.recorder.record({"type": "fail", "topic": self.topic, "writer": self.name, "value": value,
                              "error": str(error)})

    def sent(self, value):
        self.recorder.record({"type": "send", "topic": self.topic, "writer": self.name, "value": value})


class CompactedWriter(Writer):
    """New keys at `rate`/s: each key's first value with acks=all, its second with acks=1."""

    SECOND_AFTER_S = 0.4

    def __init__(self, recorder, rate, bootstrap):
        super().__init__("compacted", recorder, COMPACTED, rate)
        self.durable = TopicWriter("compacted", recorder, COMPACTED, rate, bootstrap, "all", True)
        self.loose = TopicWriter("compacted-acks1", recorder, COMPACTED, rate, bootstrap, "1", False)

    def _send(self, writer, key, seq):
        value = f"{writer.name}|{key}|{seq}"
        while not writer.send(key, value):  # a full queue: give the client time
            writer.poll()
            if self._stop.wait(0.01):
                return
        writer.sent(value)

    def _write(self):
        n = 0
        seconds = collections.deque()  # (due, key)
        next_at = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            while seconds and seconds[0][0] <= now:
                self._send(self.loose, seconds.popleft()[1], 1)
            if now >= next_at:
                key = f"g{n}"
                n += 1
                self._send(self.durable, key, 0)
                seconds.append((now + self.SECOND_AFTER_S, key))
                next_at = max(next_at + self.interval, now - 1.0)
            self.durable.poll()
            self.loose.poll()
            self._stop.wait(max(0.0, min(next_at, seconds[0][0] if seconds else next_at) - time.monotonic()))

    def flush(self, timeout):
        return self.durable.flush(timeout) + self.loose.flush(timeout)


class RetainedWriters:
    """An acks=all (idempotent) and an acks=1 writer, each at `rate`/s."""

    def __init__(self, recorder, rate, bootstrap):
        self.writers = [TopicWriter("retained", recorder, RETAINED, rate, bootstrap, "all", True),
                        TopicWriter("retained-acks1", recorder, RETAINED, rate, bootstrap, "1", False)]
        self.name = "retained"
        self.unanswered = 0

    @property
    def crashed(self):
        return next((w.crashed for w in self.writers if w.crashed), None)

    def start(self):
        for w in self.writers:
            w.start()
        return self

    def stop(self, flush_timeout):
        for w in self.writers:
            w.stop(flush_timeout)
        self.unanswered = sum(w.unanswered for w in self.writers)


class WatermarkSampler:
    """Asks every running node for the log start (earliest) and high watermark (latest) of each
    partition of `topic`, a node at a time, every `interval` seconds. A node that does not lead
    a partition answers an error for it, which is skipped. Records "watermark-inverted" events
    (log start above the high watermark) and counts the samples."""

    def __init__(self, recorder, cluster, topic, partitions, interval=0.1):
        self.recorder = recorder
        self.cluster = cluster
        self.topic = topic
        self.partitions = partitions
        self.interval = interval
        self.samples = 0
        self._conns = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="watermarks", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)
        for c in self._conns.values():
            c.close()

    def _request(self, node, timestamp):
        """{partition: offset} of the partitions this node answered without error."""
        n = self.cluster.nodes[node]
        conn = self._conns.get(node)
        if conn is None:
            conn = kw.Connection(n.port, host=getattr(n, "host", "127.0.0.1"), timeout=1.0, client_id="sampler")
            self._conns[node] = conn
        body = (kw.i32(-1) + kw.array([self.topic], lambda t: kw.string(t) + kw.array(
            range(self.partitions), lambda p: kw.i32(p) + kw.i64(timestamp))))
        r = conn.request(kw.API_LIST_OFFSETS, 1, body)
        topics = r.array(lambda x: (x.string(), x.array(
            lambda y: (y.i32(), y.i16(), y.i64(), y.i64()))))
        return {p: offset for p, error, _, offset in topics[0][1] if error == 0}

    def _run(self):
        while not self._stop.wait(self.interval):
            for node, n in list(self.cluster.nodes.items()):
                if not n.running():
                    self._conns.pop(node, None)
                    continue
                try:
                    low = self._request(node, -2)
                    high = self._request(node, -1)
                except (OSError, ValueError, struct.error, IndexError):
                    conn = self._conns.pop(node, None)
                    if conn is not None:
                        conn.close()
                    continue
                for p, start in low.items():
                    if p in high:
                        self.samples += 1
                        if start > high[p]:
                            self.recorder.record({"type": "watermark-inverted", "topic": self.topic, "node": node,
                                                  "partition": p, "log_start": start, "high_watermark": high[p]})


# ---------------------------------------------------------------------------- checks

def check_compacted(history, final, on_disk):
    """`final`: {partition: [(offset, key, value)]} read back through a client; `on_disk`:
    {partition: {node: {key: (offset, value)}}}, each replica's latest record of each key."""
    acked = {}  # key -> (partition, offset, value) of its acks=all write
    for e in history:
        if e["type"] == "ack" and e.get("topic") == COMPACTED and e["writer"] == "compacted" and e["offset"] >= 0:
            parsed = parse_value(e["value"])
            if parsed:
                acked[parsed[1]] = (e["partition"], e["offset"], e["value"])
    latest = {}
    for p, records in final.items():
        for offset, key, value in records:
            latest[key] = (p, offset, value)
    out = {"compacted_acknowledged": len(acked), "compacted_keys_read": len(latest), "compacted_lost": [],
           "compacted_diverged": []}
    for key, (p, offset, value) in acked.items():
        got = latest.get(key)
        if got is None or got[0] != p or got[1] < offset or (got[1] == offset and got[2] != value):
            out["compacted_lost"].append({"key": key, "acknowledged": [p, offset, value],
                                          "latest_read": list(got) if got else None})
    for p, views in on_disk.items():
        keys = set().union(*(v.keys() for v in views.values())) if views else set()
        for key in sorted(keys):
            held = {node: view.get(key) for node, view in views.items()}
            if len({tuple(h) if h else None for h in held.values()}) > 1:
                out["compacted_diverged"].append({"partition": p, "key": key,
                                                  "replicas": {n: list(h) if h else None for n, h in held.items()}})
    out["compacted_lost"] = out["compacted_lost"][:100]
    out["compacted_diverged"] = out["compacted_diverged"][:100]
    return out


def check_retained(history):
    inverted = [e for e in history if e["type"] == "watermark-inverted" and e.get("topic") == RETAINED]
    return {"retention_past_hw": inverted[:100]}


# ---------------------------------------------------------------------------- reading back

def latest_per_key_on_disk(partition_dir, end):
    """{key: (offset, value)} of the last record of each key below `end` in a partition's
    segment files (uncompressed batches; control batches skipped)."""
    out = {}
    for base, data in whole_batches(partition_dir):
        attributes, = struct.unpack_from(">h", data, 21)
        if attributes & 0x20 or len(data) < 61:  # a control batch
            continue
        batch = kw.Reader(bytes(data[57:]))
        for offset, _, key, value in kw.read_records(batch, base, 0, batch.i32()):
            if offset < end and key is not None:
                out[key.decode(errors="replace")] = (offset, None if value is None else value.decode(errors="replace"))
    return out
