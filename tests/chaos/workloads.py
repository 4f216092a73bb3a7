"""What the campaign's clients do while faults happen, each recording every operation.

Writers send unique values "<writer>|<key>|<seq>" (seq counts per key) at a steady rate:
  idempotent    librdkafka, acks=all, enable.idempotence   (durable, idempotent)
  acks-all      kafka-python, acks=all, one request in flight, retries   (durable)
  acks1         librdkafka, acks=1                          (losses counted, not failed)
  acks0         librdkafka, acks=0                          (losses counted, not failed)
A tailer reads every partition as it grows; what it read is compared with the final read.
A consumer group ("group" workload) reads the topic while its members come and go, committing
what it has processed; the checker looks for commits that went backwards and records the
group skipped. The "admin" workload (admin_workload.py) creates, grows, reconfigures and
deletes topics of its own. The "http" workload (http_workload.py) writes through the /v1 HTTP
API of a random node at acks=all.
"""
import json
import threading
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

WORKLOADS = ("idempotent", "acks-all", "acks1", "acks0", "group", "admin", "http")
PROMISES = {
    "http": {"durable": True, "idempotent": False},  # http_workload.py: acks=all through the /v1 API
    "idempotent": {"durable": True, "idempotent": True},
    "acks-all": {"durable": True, "idempotent": False},
    "acks1": {"durable": False, "idempotent": False},
    "acks0": {"durable": False, "idempotent": False},
}


class Recorder:
    """history.jsonl, appended from every client thread; times are seconds since start."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "w")
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.counts = {}

    def now(self):
        return time.monotonic() - self.t0

    def record(self, event):
        event.setdefault("t", round(self.now(), 4))
        line = json.dumps(event, separators=(",", ":"))
        with self.lock:
            self.file.write(line + "\n")
            self.counts[event["type"]] = self.counts.get(event["type"], 0) + 1

    def close(self):
        with self.lock:
            self.file.close()

    def events(self):
        with open(self.path) as f:
            for line in f:
                yield json.loads(line)


class Writer:
    """Sends at `rate` records/s from a thread of its own until stopped."""

    def __init__(self, name, recorder, topic, rate, keys=16):
        self.name = name
        self.recorder = recorder
        self.topic = topic
        self.interval = 1.0 / rate
        self.keys = [f"k{i}" for i in range(keys)]
        self.seq = {k: 0 for k in self.keys}
        self.unanswered = 0
        self.crashed = None  # why the writer's thread ended early, if it did
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        try:
            self._write()
        except Exception as e:  # a workload that stops writing would hide faults: the campaign fails
            self.crashed = f"{type(e).__name__}: {e}"
            self.recorder.record({"type": "writer-crashed", "writer": self.name, "error": self.crashed})

    def _write(self):
        i = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            key = self.keys[i % len(self.keys)]
            value = f"{self.name}|{key}|{self.seq[key]}"
            if self.send(key, value):
                self.seq[key] += 1
                i += 1
                self.recorder.record({"type": "send", "writer": self.name, "value": value})
            next_at += self.interval
            delay = next_at - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            else:
                next_at = time.monotonic()  # behind: do not burst to catch up
            self.poll()

    def acked(self, value, partition, offset):
        self.recorder.record({"type": "ack", "writer": self.name, "value": value, "partition": partition,
                              "offset": offset})

    def failed(self, value, error):
        self.recorder.record({"type": "fail", "writer": self.name, "value": value, "error": str(error)})

    def stop(self, flush_timeout):
        self._stop.set()
        self._thread.join(timeout=10)
        self.unanswered = self.flush(flush_timeout)

    # Per client library.
    def send(self, key, value):
        raise NotImplementedError

    def poll(self):
        pass

    def flush(self, timeout):
        return 0


class ConfluentWriter(Writer):
    def __init__(self, name, recorder, topic, rate, bootstrap, acks, idempotent):
        super().__init__(name, recorder, topic, rate)
        self.conf = {"bootstrap.servers": bootstrap, "acks": acks, "enable.idempotence": idempotent,
                     "linger.ms": 5, "message.timeout.ms": 60000, "retry.backoff.ms": 100,
                     "topic.metadata.refresh.interval.ms": 1000, "metadata.max.age.ms": 3000}
        self.producer = Producer(self.conf)
        self.restarts = 0

    def _restart(self, error):
        """librdkafka before 2.3.0 (Debian 12 ships 2.0.2) raises a fatal 'sequence
        desynchronization' error when a leader it wrote to is cut off and answers
        NOT_ENOUGH_REPLICAS_AFTER_APPEND (its issue #4438): it wrongly counts the batch as
        written. An application would start a new producer; so does the workload, and the
        report counts it. Its unanswered records are reported failed, never acknowledged."""
        self.restarts += 1
        self.recorder.record({"type": "client-restart", "writer": self.name, "error": str(error)})
        old, self.producer = self.producer, Producer(self.conf)
        try:
            old.flush(0)
        except KafkaException:
            pass

    def send(self, key, value):
        def on_delivery(err, msg):
            if err:
                self.failed(value, err)
            elif msg.offset() is not None and msg.offset() >= 0:
                self.acked(value, msg.partition(), msg.offset())
            else:
                self.acked(value, msg.partition(), -1)  # acks=0: no offset comes back
        try:
            self.producer.produce(self.topic, key=key.encode(), value=value.encode(), on_delivery=on_delivery)
            return True
        except BufferError:
            return False
        except KafkaException as e:
            if not e.args[0].fatal():
                raise
            self._restart(e.args[0])
            return False

    def poll(self):
        try:
            self.producer.poll(0)
        except KafkaException as e:
            if not e.args[0].fatal():
                raise
            self._restart(e.args[0])

    def flush(self, timeout):
        try:
            return self.producer.flush(timeout)
        except KafkaException as e:
            if not e.args[0].fatal():
                raise
            self._restart(e.args[0])
            return self.producer.flush(timeout)


class KafkaPythonWriter(Writer):
    def __init__(self, name, recorder, topic, rate, bootstrap):
        super().__init__(name, recorder, topic, rate)
        from kafka import KafkaProducer
        self.producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all", retries=10,
                                      max_in_flight_requests_per_connection=1, linger_ms=5,
                                      request_timeout_ms=15000, retry_backoff_ms=200, metadata_max_age_ms=3000,
                                      api_version_auto_timeout_ms=10000)

    def send(self, key, value):
        try:
            fut = self.producer.send(self.topic, key=key.encode(), value=value.encode())
        except Exception as e:  # buffer full, metadata not available in time
            self.failed(value, e)
            return True  # sent and answered: counts as an attempt with its sequence number
        fut.add_callback(lambda md: self.acked(value, md.partition, md.offset))
        fut.add_errback(lambda e: self.failed(value, e))
        return True

    def flush(self, timeout):
        try:
            self.producer.flush(timeout)
        except Exception:
            pass
        self.producer.close(timeout=5)
        return 0


def make_writer(kind, recorder, topic, rate, bootstrap):
    name = kind
    if kind == "idempotent":
        return ConfluentWriter(name, recorder, topic, rate, bootstrap, "all", True)
    if kind == "acks-all":
        return KafkaPythonWriter(name, recorder, topic, rate, bootstrap)
    if kind == "acks1":
        return ConfluentWriter(name, recorder, topic, rate, bootstrap, "1", False)
    if kind == "acks0":
        return ConfluentWriter(name, recorder, topic, rate, bootstrap, "0", False)
    raise ValueError(f"unknown workload {kind!r} (known: {', '.join(WORKLOADS)})")


class Tailer:
    """Reads every partition from the beginning as it grows (consumers see only what is
    committed: below the high watermark), recording each record read. `topic` may be a list
    of topics: the events then name the topic of each record (a workload of its own, not the
    main checker's). `conf` adds to or replaces the consumer's settings."""

    def __init__(self, recorder, topic, partitions, bootstrap, name="tailer", conf=None):
        self.recorder = recorder
        self.name = name
        self.tagged = isinstance(topic, list)
        c = {"bootstrap.servers": bootstrap, "group.id": "chaos-tailer", "enable.auto.commit": False,
             "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100, "topic.metadata.refresh.interval.ms": 1000}
        self.consumer = Consumer(dict(c, **(conf or {})))
        self.consumer.assign([TopicPartition(t, p, -2) for t in (topic if self.tagged else [topic])
                              for p in range(partitions)])
        self.read = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            m = self.consumer.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() != KafkaError._PARTITION_EOF:
                    self.recorder.record({"type": "client-error", "reader": self.name, "error": str(m.error())})
                continue
            self.read += 1
            event = {"type": "read", "reader": self.name, "partition": m.partition(), "offset": m.offset(),
                     "value": m.value().decode(errors="replace")}
            if self.tagged:
                event["topic"] = m.topic()
            self.recorder.record(event)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)
        self.consumer.close()


class GroupConsumers:
    """`size` members of group "chaos-group" reading the topic; every few seconds (from the
    seed) one member leaves (close) and a new one joins. A member commits its position
    synchronously every `commit_every` records and when its partitions are revoked. Records:
    assign / consume (a contiguous run of offsets) / commit (acknowledged) / commit-fail."""

    GROUP = "chaos-group"

    def __init__(self, recorder, topic, bootstrap, rng, size=2, commit_every=100):
        self.recorder = recorder
        self.topic = topic
        self.bootstrap = bootstrap
        self.rng = rng
        self.size = size
        self.commit_every = commit_every
        self.members = []
        self.joined = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._churn, name="group-churn", daemon=True)

    def start(self):
        for _ in range(self.size):
            self._join()
        self._thread.start()
        return self

    def _join(self):
        self.joined += 1
        m = _Member(f"m{self.joined}", self)
        self.members.append(m)
        m.start()

    def _churn(self):
        while not self._stop.wait(self.rng.uniform(4.0, 10.0)):
            leaving = self.members.pop(self.rng.randrange(len(self.members)))
            leaving.stop()
            self._join()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)
        for m in self.members:
            m.stop()

    def committed(self):
        """The group's committed offsets now, as the broker answers them: {partition: offset}."""
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.GROUP, "enable.auto.commit": False})
        try:
            md = c.list_topics(self.topic, timeout=10).topics[self.topic]
            got = c.committed([TopicPartition(self.topic, p) for p in md.partitions], timeout=30)
            return {tp.partition: tp.offset for tp in got if tp.offset >= 0}
        finally:
            c.close()


class _Member:
    def __init__(self, name, group):
        self.name = name
        self.group = group
        self.rec = group.recorder
        self.positions = {}
        self.since_commit = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=60)

    def _commit(self, consumer):
        if not self.positions:
            return
        offsets = [TopicPartition(self.group.topic, p, o) for p, o in self.positions.items()]
        try:
            done = consumer.commit(offsets=offsets, asynchronous=False)
            for tp in done or []:
                if tp.error is None:
                    self.rec.record({"type": "commit", "member": self.name, "partition": tp.partition,
                                     "offset": tp.offset})
        except Exception as e:
            self.rec.record({"type": "commit-fail", "member": self.name, "error": str(e)})
        self.since_commit = 0

    def _run(self):
        c = Consumer({"bootstrap.servers": self.group.bootstrap, "group.id": GroupConsumers.GROUP,
                      "enable.auto.commit": False, "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                      "heartbeat.interval.ms": 1000, "fetch.wait.max.ms": 100,
                      "topic.metadata.refresh.interval.ms": 1000})

        def on_assign(consumer, partitions):
            self.rec.record({"type": "assign", "member": self.name, "partitions": [tp.partition for tp in partitions]})

        def on_revoke(consumer, partitions):
            self._commit(consumer)
            self.positions.clear()
            self.rec.record({"type": "revoke", "member": self.name, "partitions": [tp.partition for tp in partitions]})

        c.subscribe([self.group.topic], on_assign=on_assign, on_revoke=on_revoke)
        try:
            while not self._stop.is_set():
                msgs = c.consume(num_messages=200, timeout=0.5)
                runs = {}
                for m in msgs:
                    if m.error():
                        continue
                    p, o = m.partition(), m.offset()
                    if p in runs and runs[p][-1][1] == o - 1:
                        runs[p][-1][1] = o
                    else:
                        runs.setdefault(p, []).append([o, o])
                    self.positions[p] = o + 1
                    self.since_commit += 1
                for p, spans in runs.items():
                    for first, last in spans:
                        self.rec.record({"type": "consume", "member": self.name, "partition": p, "first": first,
                                         "last": last})
                if self.since_commit >= self.group.commit_every:
                    self._commit(c)
            self._commit(c)
        finally:
            try:
                c.close()
            except Exception:
                pass
