"""The transactional workload ("transactional"): exactly-once under faults.

  producers  TXN_PRODUCERS librdkafka transactional producers ("txn-1", ...). Each transaction
             writes one record to every partition of "chaos-txn" (value "<id>|t<n>|<partition>"),
             then commits, or aborts (a quarter of them, from the seed). Every transaction ends
             in one "txn" event with its records and its outcome: committed (the commit
             returned), aborted (the abort returned) or unknown (the client gave up, or a new
             producer fenced the old one: either outcome is allowed, but not half of one).
  chain      a consume-transform-produce process: a read_committed consumer of group
             "chaos-eos" on "chaos-eos-in" (fed by an idempotent acks=all writer) and the
             transactional producer "txn-chain" copying each record to "chaos-eos-out" as
             "<partition>|<offset>|t<n>|<input value>" (n: the chain's transaction), with the consumer's positions sent to the
             transaction. A transaction that does not commit rewinds the consumer to the
             group's committed offsets; one in twenty is aborted on purpose.
  tailer     a read_committed consumer of "chaos-txn" and "chaos-eos-out" while the run goes on.

At the end every producer stops, the chain is given time to catch up with its input, every
partition's last stable offset must reach its high watermark (no transaction left open once
the transaction timeout has passed), and the topics are read back at read_committed.

The checker's anomalies:
  lost_commits        a committed transaction none of whose records is visible
  torn_transactions   a committed or unknown transaction only partly visible
  aborted_reads       a record of an aborted transaction visible to a read_committed reader
                      (the final read, or the tailer while the run went on)
  eos_duplicates      a record visible twice in chaos-txn, or an input record copied twice into
                      the chain's committed output
  eos_skipped         an input record below the chain's committed offsets never copied
  txn_offsets_lost    the chain's committed offsets behind a transaction that committed
                      (acknowledged) with later ones, or output visible for input beyond them
  txn_unexpected      a visible record no transaction wrote, or a copy that differs from its input
  txn_hanging         a partition whose last stable offset stayed below its high watermark
  eos_stalled         the chain did not catch up with its input once the faults were healed
"""
import random
import struct
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from workloads import Tailer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "utils"))
import kafka_wire as kw  # noqa: E402
from checker import TXN_ANOMALIES as ANOMALIES  # noqa: E402

TXN_TOPIC = "chaos-txn"
EOS_IN = "chaos-eos-in"
EOS_OUT = "chaos-eos-out"
EOS_GROUP = "chaos-eos"
TOPICS = (TXN_TOPIC, EOS_IN, EOS_OUT)
PARTITIONS = 3
TXN_PRODUCERS = 2
CHAIN_ID = "txn-chain"
TXN_TIMEOUT_MS = 10000
# Transactions a producer starts per second, and input records per second for the chain.
TXN_RATE = 8.0
INPUT_RATE = 40.0
ABORT_SHARE = 0.25
# Timed-out transactions (a killed coordinator's producer that gave up) aborted within a second
# of their timeout, so that none outlives the settling at the end.
BROKER_SETTINGS = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
                   "transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2"}


def transactional_ids():
    return [f"txn-{i + 1}" for i in range(TXN_PRODUCERS)] + [CHAIN_ID]


def _base_conf(bootstrap):
    return {"bootstrap.servers": bootstrap, "topic.metadata.refresh.interval.ms": 1000, "metadata.max.age.ms": 3000}


class _Transactions:
    """A transactional producer that survives its errors: ends each transaction with a known or
    unknown outcome and starts a new producer (fencing the old one) after a fatal error."""

    def __init__(self, txn_id, recorder, bootstrap, stop):
        self.txn_id = txn_id
        self.recorder = recorder
        self.conf = dict(_base_conf(bootstrap), **{"transactional.id": txn_id, "transaction.timeout.ms": TXN_TIMEOUT_MS,
                                                    "linger.ms": 5, "retry.backoff.ms": 100})
        self.stop = stop
        self.producer = None
        self.restarts = 0

    def ready(self):
        """A producer with its id initialised (retried while the cluster cannot answer); False
        once stopped."""
        p = None
        while self.producer is None and not self.stop.is_set():
            p = p or Producer(self.conf)
            try:
                p.init_transactions(30)
                self.producer = p
            except KafkaException as e:
                self.recorder.record({"type": "client-error", "reader": self.txn_id, "error": str(e.args[0])})
                if not e.args[0].retriable():
                    p = None  # a fatal error: a new producer
                self.stop.wait(0.5)
        return self.producer is not None

    def restart(self, why):
        self.restarts += 1
        self.recorder.record({"type": "client-restart", "writer": self.txn_id, "error": str(why)})
        self.producer = None

    def _retry(self, call, seconds=60.0):
        """Calls call(timeout) until it returns or raises an error that is not retriable."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                call(10)
                return
            except KafkaException as e:
                if not e.args[0].retriable() or time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def end(self, commit):
        """Ends the open transaction: "committed", "aborted" or "unknown"."""
        p = self.producer
        try:
            if commit:
                self._retry(p.commit_transaction)
                return "committed"
            self._retry(p.abort_transaction)
            return "aborted"
        except KafkaException as e:
            err = e.args[0]
            if err.txn_requires_abort():
                try:
                    self._retry(p.abort_transaction)
                    return "aborted"
                except KafkaException as e2:
                    err = e2.args[0]
            self.restart(err)
            return "unknown"

    def run(self, body, commit):
        """begin, body(producer), end. Returns (outcome, what body returned)."""
        p = self.producer
        try:
            p.begin_transaction()
            made = body(p)
        except (KafkaException, BufferError) as e:
            err = e.args[0] if isinstance(e, KafkaException) else e
            if isinstance(e, KafkaException) and err.fatal():
                self.restart(err)
                return "unknown", None
            return self.end(False), None
        return self.end(commit), made


class _Worker:
    """A thread of the workload with its transactional producer; an exception that ends it is
    recorded (the campaign's writers_crashed)."""

    def __init__(self, name, recorder, bootstrap):
        self.name = name
        self.recorder = recorder
        self.crashed = None
        self.unanswered = 0
        self._stop = threading.Event()
        self.txns = _Transactions(name, recorder, bootstrap, self._stop)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self, flush_timeout=None):
        self._stop.set()
        self._thread.join(timeout=150)

    def _run(self):
        try:
            self._work()
        except Exception as e:
            self.crashed = f"{type(e).__name__}: {e}"
            self.recorder.record({"type": "writer-crashed", "writer": self.name, "error": self.crashed})


class TxnProducer(_Worker):
    """Transactions over every partition of chaos-txn at TXN_RATE/s."""

    def __init__(self, txn_id, recorder, bootstrap, rng, signal):
        super().__init__(txn_id, recorder, bootstrap)
        self.signal = signal
        self.rng = rng

    def _work(self):
        n = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            if not self.txns.ready():
                return
            n += 1
            values = [[p, f"{self.name}|t{n}|{p}"] for p in range(PARTITIONS)]
            commit = self.rng.random() >= ABORT_SHARE
            started = self.recorder.now()

            def body(producer):
                for p, v in values:
                    producer.produce(TXN_TOPIC, key=f"t{n}".encode(), value=v.encode(), partition=p)

            outcome, _ = self.txns.run(body, commit)
            if outcome == "committed":
                self.signal.fired(self.name)
            self.recorder.record({"type": "txn", "topic": TXN_TOPIC, "writer": self.name, "txn": f"{self.name}|t{n}",
                                  "started": round(started, 4), "outcome": outcome, "values": values})
            next_at = max(next_at + 1.0 / TXN_RATE, time.monotonic() - 1.0)
            self._stop.wait(max(0.0, next_at - time.monotonic()))


class Chain(_Worker):
    """The consume-transform-produce chain from chaos-eos-in to chaos-eos-out."""

    def __init__(self, recorder, bootstrap, rng):
        super().__init__(CHAIN_ID, recorder, bootstrap)
        self.bootstrap = bootstrap
        self.rng = rng
        self.consumer = None

    def stop(self, flush_timeout=None):
        super().stop(flush_timeout)
        self._close_consumer()

    def _close_consumer(self):
        if self.consumer is not None:
            try:
                self.consumer.close()
            except Exception:
                pass
            self.consumer = None

    def _consumer(self):
        if self.consumer is None:
            c = Consumer(dict(_base_conf(self.bootstrap), **{
                "group.id": EOS_GROUP, "isolation.level": "read_committed", "enable.auto.commit": False,
                "auto.offset.reset": "earliest", "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000,
                "fetch.wait.max.ms": 100}))
            c.subscribe([EOS_IN])
            self.consumer = c
        return self.consumer

    def _rewind(self):
        """Back to the group's committed offsets: a new member, which starts from them."""
        self.recorder.record({"type": "chain-rewind", "t": round(self.recorder.now(), 4)})
        self._close_consumer()

    def _work(self):
        n = 0
        while not self._stop.is_set():
            if not self.txns.ready():
                return
            c = self._consumer()
            msgs = [m for m in c.consume(num_messages=50, timeout=0.3) if not m.error()]
            if not msgs:
                continue
            n += 1
            commit = self.rng.random() >= 0.05
            started = self.recorder.now()
            values, positions = [], {}
            for m in msgs:
                values.append([m.partition(),
                               f"{m.partition()}|{m.offset()}|t{n}|{m.value().decode(errors='replace')}"])
                positions[m.partition()] = m.offset() + 1

            def body(producer):
                for p, v in values:
                    producer.produce(EOS_OUT, value=v.encode(), partition=p)
                offsets = [TopicPartition(EOS_IN, p, o) for p, o in sorted(positions.items())]
                producer.send_offsets_to_transaction(offsets, c.consumer_group_metadata(), 30)

            outcome, _ = self.txns.run(body, commit)
            self.recorder.record({"type": "txn", "topic": EOS_OUT, "writer": self.name, "txn": f"{self.name}|t{n}",
                                  "started": round(started, 4), "outcome": outcome, "values": values,
                                  "offsets": {str(p): o for p, o in positions.items()}})
            if outcome != "committed":
                self._rewind()



class TransactionalWorkload:
    """The producers, the chain with its input writer, and the tailer."""

    name = "transactional"

    def __init__(self, recorder, bootstrap, seed):
        from kept_workloads import TopicWriter
        self.recorder = recorder
        self.bootstrap = bootstrap
        self.commits = CommitSignal()
        self.producers = [TxnProducer(i, recorder, bootstrap, random.Random(seed * 31 + k), self.commits)
                          for k, i in enumerate(transactional_ids()[:-1])]
        self.input = TopicWriter("eos-in", recorder, EOS_IN, INPUT_RATE, bootstrap, "all", True)
        self.chain = Chain(recorder, bootstrap, random.Random(seed * 31 + 99))
        # A read_committed reader of the transactions' topics while the run goes on.
        self.tailer = Tailer(recorder, [TXN_TOPIC, EOS_OUT], PARTITIONS, bootstrap, name="txn-tailer",
                             conf={"group.id": "chaos-txn-tailer", "isolation.level": "read_committed"})
        self.hanging = {}
        self.stalled = {}

    @property
    def crashed(self):
        return next((w.crashed for w in self.producers + [self.input, self.chain] if w.crashed), None)

    @property
    def unanswered(self):
        return self.input.unanswered

    @property
    def restarts(self):
        return sum(w.txns.restarts for w in self.producers + [self.chain])

    def start(self):
        for w in self.producers + [self.input, self.chain, self.tailer]:
            w.start()
        return self

    def stop(self, log, flush_timeout=60.0):
        """Stops the producers and the input, lets the chain catch up (60 s at most), stops it
        and the tailer, and waits for every partition's last stable offset to reach its high
        watermark (the transaction timeout and half a minute more at most)."""
        for w in self.producers:
            w.stop()
        self.input.stop(flush_timeout)
        ends = end_offsets(self.bootstrap, EOS_IN, "read_uncommitted")
        deadline = time.monotonic() + 60
        while True:
            try:
                at = group_offsets(self.bootstrap)
            except KafkaException:
                at = {}
            behind = {p: [at.get(p), end] for p, end in ends.items() if end > 0 and at.get(p, 0) < end}
            if not behind or time.monotonic() >= deadline or self.chain.crashed:
                break
            time.sleep(1.0)
        if behind:
            self.stalled = {"behind": behind}
            log(f"the chain did not catch up with its input: [committed, end] {behind}")
        self.chain.stop()
        self.tailer.stop()
        deadline = time.monotonic() + TXN_TIMEOUT_MS / 1000.0 + 30
        while True:
            self.hanging = open_transactions(self.bootstrap)
            if not self.hanging or time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        if self.hanging:
            log(f"transactions still open at the end: {self.hanging}")

    def final(self):
        """What the checker compares the history with."""
        return {"txn": read_committed(self.bootstrap, TXN_TOPIC), "out": read_committed(self.bootstrap, EOS_OUT),
                "in": read_committed(self.bootstrap, EOS_IN), "group": group_offsets(self.bootstrap),
                "hanging": self.hanging, "stalled": self.stalled}


# ---------------------------------------------------------------------------- reading

def end_offsets(bootstrap, topic, isolation):
    """{partition: end}: the high watermark, or at read_committed the last stable offset."""
    c = Consumer(dict(_base_conf(bootstrap), **{"group.id": "chaos-txn-ends", "isolation.level": isolation}))
    try:
        out = {}
        for p in range(PARTITIONS):
            for attempt in range(20):
                try:
                    out[p] = c.get_watermark_offsets(TopicPartition(topic, p), timeout=5)[1]
                    break
                except KafkaException:
                    if attempt == 19:
                        raise
                    time.sleep(0.5)
        return out
    finally:
        c.close()


def open_transactions(bootstrap):
    """{"topic/partition": [last stable offset, high watermark]} where the two differ."""
    out = {}
    for topic in TOPICS:
        stable = end_offsets(bootstrap, topic, "read_committed")
        high = end_offsets(bootstrap, topic, "read_uncommitted")
        for p in range(PARTITIONS):
            if stable[p] != high[p]:
                out[f"{topic}/{p}"] = [stable[p], high[p]]
    return out


def read_committed(bootstrap, topic, timeout=120.0):
    """{partition: [(offset, value)]}: everything a read_committed reader gets, up to each
    partition's end of partition (its last stable offset)."""
    c = Consumer(dict(_base_conf(bootstrap), **{"group.id": "chaos-txn-final", "isolation.level": "read_committed",
                                                "enable.auto.commit": False, "enable.partition.eof": True}))
    try:
        out = {p: {} for p in range(PARTITIONS)}
        c.assign([TopicPartition(topic, p, -2) for p in range(PARTITIONS)])
        pending = set(range(PARTITIONS))
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    pending.discard(m.partition())
                    continue
                raise KafkaException(m.error())
            out[m.partition()][m.offset()] = m.value().decode(errors="replace")
        if pending:
            raise TimeoutError(f"{topic}: partitions {sorted(pending)} not read to their end within {timeout}s")
        return {p: sorted(records.items()) for p, records in out.items()}
    finally:
        c.close()


def group_offsets(bootstrap):
    """The chain's committed offsets on chaos-eos-in: {partition: offset}."""
    c = Consumer(dict(_base_conf(bootstrap), **{"group.id": EOS_GROUP, "enable.auto.commit": False,
                                                "isolation.level": "read_committed"}))
    try:
        got = c.committed([TopicPartition(EOS_IN, p) for p in range(PARTITIONS)], timeout=30)
        return {tp.partition: tp.offset for tp in got if tp.offset >= 0}
    finally:
        c.close()


class Coordinators:
    """What the coordinator-kill nemesis asks: the coordinator of one of the workload's ids, and
    the coordinator of the next id whose commit the client was told succeeded (the moment its
    markers are being written)."""

    def __init__(self, nodes, signal):
        self.nodes = nodes
        self.signal = signal

    def of(self, r):
        ids = transactional_ids()
        return coordinator_of(self.nodes, ids[r % len(ids)])

    def after_next_commit(self, timeout):
        # Asked first: once the commit returns, every millisecond lets more markers through.
        known = {i: coordinator_of(self.nodes, i) for i in transactional_ids()}
        txn_id = self.signal.wait_next(timeout)
        return known.get(txn_id) if txn_id else None


class CommitSignal:
    """Set by a producer thread when a commit returns; the nemesis waits for the next one."""

    def __init__(self):
        self._cond = threading.Condition()
        self._count = 0
        self._last = None

    def fired(self, txn_id):
        with self._cond:
            self._count += 1
            self._last = txn_id
            self._cond.notify_all()

    def wait_next(self, timeout):
        with self._cond:
            seen = self._count
            if self._cond.wait_for(lambda: self._count != seen, timeout):
                return self._last
            return None


def coordinator_of(nodes, txn_id):
    """The node id of txn_id's transaction coordinator (FindCoordinator v1, key type 1), asked of
    the first running node that answers; None if none does."""
    for n in nodes:
        if not n.running():
            continue
        try:
            with kw.Connection(n.port, host=getattr(n, "host", "127.0.0.1"), timeout=2.0, client_id="nemesis") as conn:
                error, node = kw.find_coordinator(conn, txn_id, key_type=1)
                if error == 0:
                    return node
        except (OSError, ValueError, struct.error, IndexError):
            continue
    return None


# ---------------------------------------------------------------------------- checks

def check(history, final):
    """`final` as TransactionalWorkload.final() returns it."""
    out = {k: [] for k in ANOMALIES}
    visible = defaultdict(list)  # value -> [(topic, partition, offset)]
    for topic, key in ((TXN_TOPIC, "txn"), (EOS_OUT, "out")):
        for p, records in final[key].items():
            for offset, value in records:
                visible[value].append((topic, p, offset))
    written = {}      # value -> the transaction (event) that wrote it
    aborted = set()
    chain_committed = defaultdict(int)  # partition -> highest offset a committed chain txn sent
    counts = defaultdict(int)
    tailer_reads = []
    for e in history:
        if e["type"] == "txn":
            counts[e["outcome"]] += 1
            values = [v for _, v in e["values"]]
            for v in values:
                written[v] = e
            seen = [v for v in values if v in visible]
            if e["outcome"] == "aborted":
                aborted.update(values)
                if seen:
                    out["aborted_reads"].append({"txn": e["txn"], "reader": "final", "visible": seen})
            elif e["outcome"] == "committed" and not seen:
                out["lost_commits"].append({"txn": e["txn"], "values": values})
            elif seen and len(seen) < len(values):
                out["torn_transactions"].append({"txn": e["txn"], "outcome": e["outcome"], "visible": seen,
                                                 "missing": [v for v in values if v not in visible]})
            if e["outcome"] == "committed" and "offsets" in e:
                for p, o in e["offsets"].items():
                    chain_committed[int(p)] = max(chain_committed[int(p)], o)
        elif e["type"] == "read" and e.get("reader") == "txn-tailer":
            tailer_reads.append(e)
    for e in tailer_reads:
        if e["value"] in aborted:
            out["aborted_reads"].append({"txn": written[e["value"]]["txn"], "reader": "tailer", "t": e["t"],
                                         "partition": e["partition"], "offset": e["offset"]})
    for value, places in visible.items():
        if value not in written:
            out["txn_unexpected"].append({"value": value, "at": places})
        elif len(places) > 1:
            out["eos_duplicates"].append({"value": value, "at": places})

    # The chain: every input record below the committed offsets copied exactly once, and
    # nothing copied beyond them.
    inputs = {(p, o): v for p, records in final["in"].items() for o, v in records}
    copies = defaultdict(int)
    for p, records in final["out"].items():
        for _, value in records:
            try:
                ip, io, _, iv = value.split("|", 3)
                key = (int(ip), int(io))
            except ValueError:
                continue
            copies[key] += 1
            if inputs.get(key) != iv:
                out["txn_unexpected"].append({"copy": value, "input": inputs.get(key)})
    group = {int(p): o for p, o in final["group"].items()}
    for (p, o), n in sorted(copies.items()):
        if n > 1:
            out["eos_duplicates"].append({"input": [p, o], "copies": n})
        if o >= group.get(p, 0):
            out["txn_offsets_lost"].append({"input": [p, o], "committed": group.get(p)})
    for (p, o) in sorted(inputs):
        if o < group.get(p, 0) and (p, o) not in copies:
            out["eos_skipped"].append({"input": [p, o]})
    for p, o in chain_committed.items():
        if group.get(p, -1) < o:
            out["txn_offsets_lost"].append({"partition": p, "acknowledged": o, "at_end": group.get(p)})
    out["txn_hanging"] = [{"partition": k, "lso_hw": v} for k, v in final["hanging"].items()]
    out["eos_stalled"] = [final["stalled"]] if final["stalled"] else []
    for k in ANOMALIES:
        out[k] = out[k][:100]
    out["transactions"] = dict(counts)
    out["txn_records_visible"] = sum(len(v) for v in visible.values())
    out["chain_copied"] = len(copies)
    out["txn_tailer_read"] = len(tailer_reads)
    return out
