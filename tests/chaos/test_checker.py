"""The checker over hand-made histories: a clean run passes, and each anomaly is named."""
from checker import check, named_anomalies

WRITERS = {"w": {"durable": True, "idempotent": True}, "u": {"durable": False, "idempotent": False}}


def send(v, t=0.0, w="w"):
    return {"type": "send", "t": t, "writer": w, "value": v}


def ack(v, p, o, t=0.1, w="w"):
    return {"type": "ack", "t": t, "writer": w, "value": v, "partition": p, "offset": o}


def clean():
    h = [send("w|a|0"), send("w|a|1"), send("w|b|0"),
         ack("w|a|0", 0, 0), ack("w|a|1", 0, 1), ack("w|b|0", 1, 0)]
    final = {0: [(0, "w|a|0"), (1, "w|a|1")], 1: [(0, "w|b|0")]}
    return h, final


def test_a_clean_history_passes():
    h, final = clean()
    r = check(h, final, WRITERS)
    assert r["ok"] and named_anomalies(r) == []
    assert r["acknowledged"] == 3 and r["read"] == 3


def test_an_acknowledged_record_missing_is_lost():
    h, final = clean()
    final[0] = final[0][:1]
    r = check(h, final, WRITERS)
    assert r["lost"] == ["w|a|1"] and named_anomalies(r) == ["lost"]


def test_losses_of_writers_that_promise_nothing_are_counted_not_failed():
    h, final = clean()
    h += [send("u|a|0", w="u"), ack("u|a|0", 1, 1, w="u")]
    r = check(h, final, WRITERS)
    assert r["ok"] and r["lost_unsafe"] == 1


def test_an_idempotent_writers_record_read_twice_is_a_duplicate():
    h, final = clean()
    final[0].append((2, "w|a|1"))
    r = check(h, final, WRITERS)
    assert r["duplicates"] == [{"value": "w|a|1", "read": [(0, 1), (0, 2)]}]
    assert "reordered" in named_anomalies(r)  # the copy also breaks the key's order


def test_a_key_read_out_of_order_is_reordered():
    h = [send("w|a|0"), send("w|a|1"), ack("w|a|1", 0, 0), ack("w|a|0", 0, 1)]
    final = {0: [(0, "w|a|1"), (1, "w|a|0")]}
    r = check(h, final, WRITERS)
    assert [x["value"] for x in r["reordered"]] == ["w|a|0"]


def test_a_record_never_sent_is_unexpected():
    h, final = clean()
    final[1].append((1, "w|z|9"))
    r = check(h, final, WRITERS)
    assert r["unexpected"] == ["w|z|9"]


def test_a_record_read_at_another_offset_than_acknowledged_has_moved():
    h, final = clean()
    final[1] = [(0, "x"), (1, "w|b|0")]
    h.append(send("x"))
    r = check(h, final, WRITERS)
    assert [m["value"] for m in r["moved"]] == ["w|b|0"]


def test_a_write_acknowledged_without_an_offset_has_not_moved():
    h, final = clean()
    h += [send("u|a|0", w="u"), ack("u|a|0", 1, -1, w="u")]
    final[1].append((1, "u|a|0"))
    assert check(h, final, WRITERS)["ok"]


def test_an_offset_that_held_another_value_earlier_changed():
    h, final = clean()
    h.append({"type": "read", "t": 0.2, "reader": "r", "partition": 0, "offset": 1, "value": "w|a|0"})
    r = check(h, final, WRITERS)
    assert r["offset_changed"] and r["offset_changed"][0]["final"] == "w|a|1"


def test_availability_is_the_longest_stop_of_durable_acknowledgements_after_each_fault():
    a_acks = [0.9, 1.0, 2.05, 2.1, 2.5, 2.6, 4.6, 4.7, 6.2, 7.5]
    b_acks = [1.0, 5.0, 5.1, 6.9]
    h = [ack(f"w|a|{i}", 0, i, t=t) for i, t in enumerate(a_acks)] + \
        [ack(f"w|b|{i}", 1, i, t=t) for i, t in enumerate(b_acks)] + \
        [ack("u|a|0", 1, 9, t=3.0, w="u"),  # acks=1 acknowledgements do not count
         {"type": "fault", "t": 2.0, "kind": "kill", "target": 1},
         {"type": "fault", "t": 6.0, "kind": "kill", "target": 2},
         {"type": "fault", "t": 7.0, "kind": "pause", "target": 2}]
    final = {0: [(i, f"w|a|{i}") for i in range(len(a_acks))], 1: [(i, f"w|b|{i}") for i in range(len(b_acks))]}
    final[1].append((9, "u|a|0"))
    a = check(h, final, WRITERS)["availability"]
    # After t=2: partition 0 stops for 2.0 s (2.6 -> 4.6), partition 1 for 3.0 s (2.0 -> 5.0).
    # After t=6: partition 0 stops 1.3 s (6.2 -> 7.5, past the next fault), partition 1 0.9 s;
    # after t=7 partition 1 never acknowledges again.
    assert a["kill"]["faults"] == 2 and a["kill"]["max_s"] == 3.0 and a["kill"]["p50_s"] == 1.3
    assert a["pause"]["never_resumed"] == 1


def test_replicas_that_differ_below_the_end_are_found(tmp_path):
    import struct
    from replicas import divergence

    def batch(base, last, crc):
        body = struct.pack(">ibI", 0, 2, crc) + struct.pack(">hi", 0, last - base) + b"\0" * 30
        return struct.pack(">qi", base, len(body)) + body

    for node, crcs in ((1, (7, 8, 9)), (2, (7, 8, 5)), (3, (7, 8))):
        d = tmp_path / f"n{node}" / "t-0"
        d.mkdir(parents=True)
        (d / "00000000000000000000.log").write_bytes(
            b"".join(batch(i * 2, i * 2 + 1, c) for i, c in enumerate(crcs)) + b"\0" * 64)
    nodes = {n: tmp_path / f"n{n}" for n in (1, 2, 3)}
    found = {f["nodes"][1]: f for f in divergence(nodes, "t", 1, {0: 6})}
    assert found[2]["kind"] == "diverged" and found[2]["first_offset"] == 4
    assert found[3]["kind"] == "behind" and found[3]["first_offset"] == 4
    assert divergence(nodes, "t", 1, {0: 4}) == []  # they agree below offset 4


def group_history():
    h, final = clean()
    h += [{"type": "assign", "t": 1.0, "member": "m1", "partitions": [0]},
          {"type": "consume", "t": 1.1, "member": "m1", "partition": 0, "first": 0, "last": 0},
          {"type": "commit", "t": 1.2, "member": "m1", "partition": 0, "offset": 1},
          {"type": "assign", "t": 2.0, "member": "m2", "partitions": [0]},
          {"type": "consume", "t": 2.1, "member": "m2", "partition": 0, "first": 1, "last": 1},
          {"type": "commit", "t": 2.2, "member": "m2", "partition": 0, "offset": 2}]
    return h, final


def end_offsets(offsets):
    return {"type": "group-committed", "t": 9.0, "offsets": offsets}


def test_a_group_that_reads_everything_once_passes():
    h, final = group_history()
    r = check(h + [end_offsets({"0": 2})], final, WRITERS)
    assert r["ok"] and r["group_consumed"] == 2 and r["group_commits"] == 2


def test_a_member_starting_below_an_acknowledged_commit_rewound():
    h, final = group_history()
    h[-2]["first"] = 0  # m2 starts at 0 although offset 1 was committed before it was assigned
    r = check(h + [end_offsets({"0": 2})], final, WRITERS)
    assert r["group_rewound"] == [{"partition": 0, "member": "m2", "started_at": 0, "acknowledged_commit": 1}]


def test_an_acknowledged_commit_missing_at_the_end_is_lost():
    h, final = group_history()
    r = check(h + [end_offsets({"0": 1})], final, WRITERS)
    assert r["commit_lost"] and named_anomalies(r) == ["commit_lost"]


def test_a_record_below_the_committed_offset_never_consumed_was_skipped():
    h, final = group_history()
    h[-2]["first"] = 2  # m2 jumped over offset 1
    h[-2]["last"] = 2
    r = check(h + [end_offsets({"0": 2})], final, WRITERS)
    assert r["group_skipped"] == [{"partition": 0, "offset": 1}]


def admin(op, topic, ok=True, **fields):
    return {"type": "admin", "op": op, "topic": topic, "result": "ok" if ok else "unknown", **fields}


ADMIN_HISTORY = [admin("create", "t1", partitions=2), admin("add-partitions", "t1", partitions=3),
                 admin("alter-config", "t1", retention="1000"), admin("alter-config", "t1", False, retention="2000"),
                 admin("create", "t2", partitions=2), admin("delete", "t2"),
                 admin("create", "t3", False, partitions=2)]


def test_admin_operations_that_held_pass():
    from admin_workload import check_admin
    # t1 took the unknown alter or not; t2 is gone; t3's creation is unknown either way.
    for final in ({"t1": (3, "1000")}, {"t1": (3, "2000"), "t3": (2, "604800000")}):
        r = check_admin(ADMIN_HISTORY, final)
        assert not r["admin_lost"] and not r["admin_partitions"] and not r["admin_config"], r
        assert r["admin_ops"] == 7 and r["admin_acknowledged"] == 5


def test_admin_operations_that_did_not_hold_are_named():
    from admin_workload import check_admin
    r = check_admin(ADMIN_HISTORY, {"t2": (2, "604800000")})
    assert [x["topic"] for x in r["admin_lost"]] == ["t1", "t2"]  # created but gone; deleted but back
    r = check_admin(ADMIN_HISTORY, {"t1": (2, "1000")})
    assert r["admin_partitions"] and not r["admin_config"]  # the acknowledged third partition is missing
    r = check_admin(ADMIN_HISTORY, {"t1": (3, "604800000")})
    assert r["admin_config"] and not r["admin_partitions"]  # the acknowledged retention did not hold


# ---- kept-data workloads (kept_workloads.py) and crashes (crashes.py)

def kept_ack(v, p, o, w="compacted", topic="chaos-compacted"):
    return {"type": "ack", "t": 0.1, "topic": topic, "writer": w, "value": v, "partition": p, "offset": o}


def test_kept_topics_events_are_left_to_their_own_check():
    from kept_workloads import COMPACTED
    h, final = clean()
    h += [kept_ack("compacted|g0|0", 0, 0, topic=COMPACTED)]
    r = check(h, final, WRITERS)
    assert r["ok"] and r["acknowledged"] == 3 and r["lost_unsafe"] == 0


def test_a_compacted_key_holds_its_acknowledged_value_or_a_later_one():
    from kept_workloads import check_compacted
    h = [kept_ack("compacted|g0|0", 0, 0), kept_ack("compacted|g1|0", 0, 1),
         kept_ack("compacted-acks1|g0|1", 0, 2, w="compacted-acks1")]
    final = {0: [(1, "g1", "compacted|g1|0"), (2, "g0", "compacted-acks1|g0|1")]}
    views = {1: {"g0": (2, "compacted-acks1|g0|1"), "g1": (1, "compacted|g1|0")}}
    on_disk = {0: {1: views[1], 2: dict(views[1])}}
    r = check_compacted(h, final, on_disk)
    assert r["compacted_lost"] == [] and r["compacted_diverged"] == []
    # The committed g0=0 cleaned away by an uncommitted g0=1 that a failover then dropped.
    final = {0: [(1, "g1", "compacted|g1|0")]}
    on_disk = {0: {1: {"g1": (1, "compacted|g1|0")}, 2: {"g0": (0, "compacted|g0|0"), "g1": (1, "compacted|g1|0")}}}
    r = check_compacted(h, final, on_disk)
    assert [x["key"] for x in r["compacted_lost"]] == ["g0"]
    assert [x["key"] for x in r["compacted_diverged"]] == ["g0"]


def test_a_log_start_above_the_high_watermark_is_named():
    from kept_workloads import RETAINED, check_retained
    h = [{"type": "watermark-inverted", "t": 1.0, "topic": RETAINED, "node": 2, "partition": 3, "log_start": 9,
          "high_watermark": 4}]
    assert len(check_retained(h)["retention_past_hw"]) == 1
    assert check_retained([])["retention_past_hw"] == []


def test_a_node_that_ends_on_its_own_is_a_crash_and_a_nemesis_kill_is_not(tmp_path):
    import subprocess
    from crashes import CrashWatch

    class Node:
        def __init__(self, args):
            self.log_paths = [tmp_path / f"n{len(args)}.log"]
            self.log_paths[0].write_text("first\nlast words\n")
            self.proc = subprocess.Popen(args)

    class Recorder:
        def __init__(self):
            self.events = []

        def record(self, e):
            self.events.append(e)

    killed = Node(["sleep", "30"])
    bus = Node(["sh", "-c", "kill -BUS $$"])
    failed = Node(["sh", "-c", "exit 3"])
    killed.proc.kill()
    cluster = type("C", (), {"nodes": {1: killed, 2: bus, 3: failed}})()
    rec = Recorder()
    watch = CrashWatch(cluster, rec, lambda msg: None)
    for n in cluster.nodes.values():
        n.proc.wait(timeout=10)
    watch._look()
    watch.stop()  # looks again: an ended process is reported once
    assert sorted((e["node"], e["ended"]) for e in rec.events) == [(2, "SIGBUS"), (3, "exit code 3")]
    assert rec.events[0]["last_lines"][-1] == "last words"


# ---- the transactional workload (txn_workload.py)

def txn(name, outcome, values, offsets=None, topic="chaos-txn"):
    e = {"type": "txn", "t": 1.0, "topic": topic, "writer": name.split("|")[0], "txn": name, "outcome": outcome,
         "values": [[p, v] for p, v in values]}
    if offsets is not None:
        e["offsets"] = {str(p): o for p, o in offsets.items()}
    return e


def txn_final(txn_records=None, out=None, inputs=None, group=None):
    def filled(records):
        return {p: list((records or {}).get(p, [])) for p in range(3)}
    return {"txn": filled(txn_records), "out": filled(out), "in": filled(inputs), "group": group or {},
            "hanging": {}, "stalled": {}}


def txn_history():
    a = [(p, f"txn-1|t1|{p}") for p in range(3)]
    b = [(p, f"txn-1|t2|{p}") for p in range(3)]
    c = [(0, "0|0|t1|in|k0|0"), (1, "1|0|t1|in|k1|0")]
    h = [txn("txn-1|t1", "committed", a), txn("txn-1|t2", "aborted", b),
         txn("txn-chain|t1", "committed", c, {0: 1, 1: 1}, topic="chaos-eos-out")]
    final = txn_final({p: [(0, f"txn-1|t1|{p}")] for p in range(3)},
                      {0: [(0, "0|0|t1|in|k0|0")], 1: [(0, "1|0|t1|in|k1|0")]},
                      {0: [(0, "in|k0|0")], 1: [(0, "in|k1|0")]}, {0: 1, 1: 1})
    return h, final


def txn_anomalies(result):
    import txn_workload
    return [k for k in txn_workload.ANOMALIES if result.get(k)]


def test_a_clean_transactional_history_passes():
    import txn_workload
    h, final = txn_history()
    r = txn_workload.check(h, final)
    assert txn_anomalies(r) == [] and r["transactions"] == {"committed": 2, "aborted": 1}
    assert r["chain_copied"] == 2 and r["txn_records_visible"] == 5


def test_each_transactional_anomaly_is_named():
    import txn_workload
    h, final = txn_history()
    final["txn"] = {0: [(0, "txn-1|t1|0"), (1, "txn-1|t2|0")], 1: [(0, "txn-1|t1|1")], 2: []}
    r = txn_workload.check(h, final)
    assert txn_anomalies(r) == ["torn_transactions", "aborted_reads"]
    h, final = txn_history()
    final["txn"] = {p: [] for p in range(3)}
    assert txn_anomalies(txn_workload.check(h, final)) == ["lost_commits"]
    h, final = txn_history()
    h.append({"type": "read", "t": 2.0, "topic": "chaos-txn", "reader": "txn-tailer", "partition": 1, "offset": 1,
              "value": "txn-1|t2|1"})
    r = txn_workload.check(h, final)
    assert txn_anomalies(r) == ["aborted_reads"] and r["aborted_reads"][0]["reader"] == "tailer"
    h, final = txn_history()
    final["txn"][0].append((1, "txn-1|t1|0"))
    assert txn_anomalies(txn_workload.check(h, final)) == ["eos_duplicates"]
    h, final = txn_history()
    final["txn"][0].append((1, "stray"))
    assert txn_anomalies(txn_workload.check(h, final)) == ["txn_unexpected"]


def test_the_chain_copies_each_input_below_its_offsets_once():
    import txn_workload
    h, final = txn_history()  # the same input copied by a second committed transaction
    h.append(txn("txn-chain|t2", "committed", [(0, "0|0|t2|in|k0|0")], {0: 1}, topic="chaos-eos-out"))
    final["out"][0].append((1, "0|0|t2|in|k0|0"))
    assert txn_anomalies(txn_workload.check(h, final)) == ["eos_duplicates"]
    h, final = txn_history()
    final["in"][0].append((1, "in|k0|1"))
    final["group"] = {0: 2, 1: 1}
    assert txn_anomalies(txn_workload.check(h, final)) == ["eos_skipped"]
    h, final = txn_history()
    final["group"] = {0: 1}  # the committed transaction's offset of partition 1 is gone
    r = txn_workload.check(h, final)
    assert txn_anomalies(r) == ["txn_offsets_lost"]
    h, final = txn_history()
    final["hanging"] = {"chaos-txn/0": [3, 5]}
    final["stalled"] = {"behind": {0: [1, 2]}}
    assert txn_anomalies(txn_workload.check(h, final)) == ["txn_hanging", "eos_stalled"]
