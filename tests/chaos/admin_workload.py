"""The "admin" workload: topic administration while faults happen. A thread creates topics
("chaos-admin-N", RF 3), adds partitions to them, sets their retention.ms and deletes them,
one operation every second or so (chosen from the seed), through librdkafka's AdminClient.
Every operation is recorded with its outcome: "ok" when the cluster acknowledged it, else
"unknown" (a timeout or an error may come after the change committed, so it proves
nothing either way).

check_admin() compares the acknowledged operations with the topics the healed cluster
describes: an acknowledged creation whose topic is gone (unless a deletion was attempted),
an acknowledged deletion whose topic is back, fewer partitions than acknowledged (or more
than ever asked for), or a retention that is neither the last acknowledged value nor one
asked for after it, is an anomaly."""
import threading
from collections import defaultdict

from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

PREFIX = "chaos-admin-"
TIMEOUT_S = 15


class AdminWorkload:
    name = "admin"

    def __init__(self, recorder, bootstrap, rng, period_s=1.0):
        self.recorder = recorder
        self.admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})
        self.rng = rng
        self.period_s = period_s
        self.live = {}  # topic -> partitions, as acknowledged
        self.created = 0
        self.crashed = None
        self.unanswered = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="admin", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self, flush_timeout=None):
        self._stop.set()
        self._thread.join(timeout=TIMEOUT_S + 10)

    def _record(self, op, topic, ok, **fields):
        self.recorder.record({"type": "admin", "op": op, "topic": topic, "result": "ok" if ok else "unknown", **fields})

    @staticmethod
    def _wait(future):
        try:
            future.result(timeout=TIMEOUT_S)
            return True
        except Exception:
            return False

    def _run(self):
        try:
            while not self._stop.wait(self.rng.uniform(0.5, 1.5) * self.period_s):
                self._step()
        except Exception as e:  # the workload stopped exercising the cluster: say so
            self.crashed = f"{type(e).__name__}: {e}"

    def _step(self):
        choice = self.rng.random()
        if not self.live or choice < 0.35:
            self.created += 1
            topic = f"{PREFIX}{self.created}"
            fut = self.admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=3)],
                                           operation_timeout=TIMEOUT_S)[topic]
            ok = self._wait(fut)
            self._record("create", topic, ok, partitions=2)
            if ok:
                self.live[topic] = 2
            return
        topic = self.rng.choice(sorted(self.live))
        if choice < 0.6:
            total = self.live[topic] + 1
            fut = self.admin.create_partitions([NewPartitions(topic, total)], operation_timeout=TIMEOUT_S)[topic]
            ok = self._wait(fut)
            self._record("add-partitions", topic, ok, partitions=total)
            self.live[topic] = max(self.live[topic], total) if ok else self.live[topic]
        elif choice < 0.85:
            retention = str(self.rng.randrange(3_600_000, 7 * 86_400_000))
            res = ConfigResource("topic", topic, set_config={"retention.ms": retention})
            ok = self._wait(self.admin.alter_configs([res])[res])
            self._record("alter-config", topic, ok, retention=retention)
        else:
            fut = self.admin.delete_topics([topic], operation_timeout=TIMEOUT_S)[topic]
            ok = self._wait(fut)
            self._record("delete", topic, ok)
            # Whatever the outcome, the topic is no longer worked on: an unknown deletion
            # leaves it in either state.
            del self.live[topic]


def describe_admin_topics(bootstrap):
    """{topic: (partitions, retention.ms)} of every chaos-admin topic the cluster lists."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    md = admin.list_topics(timeout=30)
    out = {}
    for name, t in md.topics.items():
        if not name.startswith(PREFIX) or t.error is not None:
            continue
        res = ConfigResource("topic", name)
        configs = admin.describe_configs([res])[res].result(timeout=30)
        out[name] = (len(t.partitions), configs["retention.ms"].value)
    return out


def check_admin(events, final):
    """Anomalies of the admin history against `final` (describe_admin_topics after healing)."""
    ops = defaultdict(list)
    for e in events:
        if e.get("type") == "admin":
            ops[e["topic"]].append(e)
    out = {"admin_lost": [], "admin_partitions": [], "admin_config": [], "admin_ops": 0, "admin_acknowledged": 0}
    for topic, history in ops.items():
        out["admin_ops"] += len(history)
        out["admin_acknowledged"] += sum(1 for e in history if e["result"] == "ok")
        created = any(e["op"] == "create" and e["result"] == "ok" for e in history)
        deleted = any(e["op"] == "delete" and e["result"] == "ok" for e in history)
        delete_tried = any(e["op"] == "delete" for e in history)
        exists = topic in final
        if deleted and exists:
            out["admin_lost"].append({"topic": topic, "what": "an acknowledged deletion, but the topic is back"})
        if created and not delete_tried and not exists:
            out["admin_lost"].append({"topic": topic, "what": "an acknowledged creation, but the topic is gone"})
        if not exists:
            continue
        partitions, retention = final[topic]
        acked = [e["partitions"] for e in history if e.get("partitions") and e["result"] == "ok"]
        asked = [e["partitions"] for e in history if e.get("partitions")]
        if acked and partitions < max(acked) or asked and partitions > max(asked):
            out["admin_partitions"].append({"topic": topic, "partitions": partitions, "acknowledged": acked,
                                            "asked": asked})
        alters = [e for e in history if e["op"] == "alter-config"]
        last_ok = max((i for i, e in enumerate(alters) if e["result"] == "ok"), default=None)
        if last_ok is not None:
            allowed = {e["retention"] for e in alters[last_ok:]}
            if retention not in allowed:
                out["admin_config"].append({"topic": topic, "retention.ms": retention, "allowed": sorted(allowed)})
    return out
