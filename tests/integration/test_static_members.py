"""Static membership (KIP-345): a member with group.instance.id that closes without leaving and
comes back with the same instance id and subscription within the session timeout gets its
previous assignment back, and the other members see no rebalance, whether the one that
restarted was the group's leader or not."""
import threading
import time

from confluent_kafka import Consumer

from clients import create_topic
from waiting import wait_until

PARTITIONS = 4


class StaticMember(threading.Thread):
    """Polls continuously and records every assignment and revocation it is given."""

    def __init__(self, bootstrap, group, topic, instance):
        super().__init__(daemon=True)
        self.c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": instance,
                           "session.timeout.ms": 30000, "heartbeat.interval.ms": 500,
                           "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self.assigned, self.revoked = [], []
        self.lock = threading.Lock()
        self.stop_flag = threading.Event()
        self.c.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer, parts):
        with self.lock:
            self.assigned.append(sorted(p.partition for p in parts))

    def _on_revoke(self, consumer, parts):
        with self.lock:
            self.revoked.append(sorted(p.partition for p in parts))

    def current(self):
        with self.lock:
            return self.assigned[-1] if self.assigned else None

    def run(self):
        while not self.stop_flag.is_set():
            self.c.poll(0.1)

    def close_without_leaving(self):
        # A static member's close sends no LeaveGroup: the group keeps its place.
        self.stop_flag.set()
        self.join(10)
        self.c.close()



def balanced(members):
    parts = [m.current() for m in members]
    return all(p and len(p) == PARTITIONS // len(members) for p in parts) and \
        sorted(sum(parts, [])) == list(range(PARTITIONS))


def test_a_restarted_static_member_gets_its_assignment_back_without_a_rebalance(broker):
    create_topic(broker.bootstrap, "static", PARTITIONS)
    members = {"a": StaticMember(broker.bootstrap, "static-group", "static", "a")}
    members["a"].start()  # the first member: the group's leader
    wait_until(lambda: members["a"].current() == list(range(PARTITIONS)), 30, "a to own every partition")
    members["b"] = StaticMember(broker.bootstrap, "static-group", "static", "b")
    members["b"].start()
    wait_until(lambda: balanced(list(members.values())), 30, "a and b to share the partitions")
    time.sleep(1)
    try:
        for name in ("a", "b"):  # the leader first, then a follower
            other = members["b" if name == "a" else "a"]
            before = members[name].current()
            with other.lock:
                other_events = (len(other.assigned), len(other.revoked))
            members[name].close_without_leaving()
            members[name] = StaticMember(broker.bootstrap, "static-group", "static", name)
            members[name].start()
            wait_until(lambda: members[name].current() is not None, 30, f"{name} to be assigned again")
            assert members[name].current() == before, (name, before, members[name].current())
            time.sleep(2)  # a rebalance, had there been one, would reach the other member by now
            with other.lock:
                assert (len(other.assigned), len(other.revoked)) == other_events, \
                    f"restarting {name} rebalanced the other member: {other.assigned} {other.revoked}"
    finally:
        for m in members.values():
            m.stop_flag.set()
        for m in members.values():
            m.join(10)
            m.c.close()
