"""The campaign's checker: from the recorded history of a run and a final read of every
partition, what held and what did not.

Every value a workload writes is unique and names its writer, its key and its sequence
number within that key: "<writer>|<key>|<seq>". The history is a list of events (dicts):

  {"type": "send", "t": T, "writer": W, "value": V}
  {"type": "ack",  "t": T, "writer": W, "value": V, "partition": P, "offset": O}
  {"type": "fail", "t": T, "writer": W, "value": V, "error": E}
  {"type": "read", "t": T, "reader": R, "partition": P, "offset": O, "value": V}
  {"type": "fault", "t": T, "kind": K, "target": X}
  {"type": "assign", "t": T, "member": M, "partitions": [P, ...]}        (consumer group)
  {"type": "consume", "t": T, "member": M, "partition": P, "first": O1, "last": O2}
  {"type": "commit", "t": T, "member": M, "partition": P, "offset": O}   (acknowledged)
  {"type": "group-committed", "t": T, "offsets": {P: O}}   (the group's offsets at the end)

Events with a "topic" field belong to the kept-data workloads (kept_workloads.py) and are
checked there.

`writers` maps each writer to what it promises: {"durable": bool, "idempotent": bool}.
A durable writer (acks=all with min.insync.replicas >= 2) must lose nothing it was told was
acknowledged; an idempotent writer must write nothing twice and keep each key's order.
Other writers' losses and duplicates are counted and reported, never failed.

The final read maps each partition to its records in offset order: [(offset, value), ...].
"""
import bisect
from collections import defaultdict


def parse_value(v):
    """(writer, key, seq) of a campaign value, or None for anything else."""
    try:
        writer, key, seq = v.split("|")
        return writer, key, int(seq)
    except (ValueError, AttributeError):
        return None


def percentile(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    i = min(len(xs) - 1, max(0, int(round(q / 100.0 * (len(xs) - 1)))))
    return xs[i]


def check(history, final, writers):
    """`history` is any iterable of events (read once: a list, or the lines of history.jsonl
    parsed one by one)."""
    sent = {}
    acked = {}
    reads = []
    faults = []
    assigns, consumes, commits, group_end = [], [], defaultdict(list), None
    ack_times = defaultdict(list)
    for e in history:
        kind = e["type"]
        if e.get("topic"):
            continue  # a kept-data workload's topic (kept_workloads.py), checked there
        if kind == "send":
            sent[e["value"]] = e["writer"]
        elif kind == "ack":
            acked[e["value"]] = (e["writer"], e["partition"], e["offset"])
            if writers.get(e["writer"], {}).get("durable"):
                ack_times[e["partition"]].append(e["t"])
        elif kind == "read":
            reads.append((e["partition"], e["offset"], e["value"]))
        elif kind == "fault":
            faults.append(e)
        elif kind == "assign":
            assigns.append(e)
        elif kind == "consume":
            consumes.append(e)
        elif kind == "commit":
            commits[e["partition"]].append((e["t"], e["offset"]))
        elif kind == "group-committed":
            group_end = {int(p): o for p, o in e["offsets"].items()}

    # Where each value sits in the final read.
    where = defaultdict(list)
    at = {}
    for p, records in final.items():
        for offset, value in records:
            where[value].append((p, offset))
            at[(p, offset)] = value

    out = {
        "acknowledged": len(acked),
        "read": sum(len(r) for r in final.values()),
        "lost": [],            # acknowledged by a durable writer, not in the final read
        "lost_unsafe": 0,      # the same for writers that promise no durability
        "duplicates": [],      # an idempotent writer's value read more than once
        "duplicates_unsafe": 0,
        "reordered": [],       # an idempotent writer's key read out of order
        "unexpected": [],      # read but never sent
        "moved": [],           # acknowledged at one offset, read at another
        "offset_changed": [],  # one offset seen holding two values across reads
    }

    for value, (writer, p, offset) in acked.items():
        promise = writers.get(writer, {})
        places = where.get(value, [])
        if not places:
            if promise.get("durable"):
                out["lost"].append(value)
            else:
                out["lost_unsafe"] += 1
        elif offset >= 0 and (p, offset) not in places:  # acks=0 learns no offset
            out["moved"].append({"value": value, "acknowledged": [p, offset], "read": places})

    for value, places in where.items():
        if value not in sent:
            out["unexpected"].append(value)
            continue
        if len(places) > 1:
            if writers.get(sent[value], {}).get("idempotent"):
                out["duplicates"].append({"value": value, "read": sorted(places)})
            else:
                out["duplicates_unsafe"] += 1

    # Per key, an idempotent writer's sequence numbers rise along each partition.
    for p, records in final.items():
        last = {}
        for offset, value in records:
            parsed = parse_value(value)
            if not parsed or not writers.get(parsed[0], {}).get("idempotent"):
                continue
            k = (parsed[0], parsed[1])
            if k in last and parsed[2] <= last[k]:
                out["reordered"].append({"partition": p, "offset": offset, "value": value})
            last[k] = max(parsed[2], last.get(k, -1))

    # Reads made while the run went on (below the high watermark) must agree with the final
    # read: an offset that later holds another value, or is gone, was not committed.
    for p, offset, value in reads:
        final_value = at.get((p, offset))
        if final_value != value:
            out["offset_changed"].append({"partition": p, "offset": offset, "then": value, "final": final_value})

    out.update(check_group(assigns, consumes, commits, group_end, final))
    out["availability"] = availability(faults, ack_times)
    out["ok"] = not any(out.get(k) for k in ANOMALIES)
    return out


def check_group(assigns, consumes, commits, group_end, final):
    """The consumer group: a member given a partition starts at or after every commit the
    broker acknowledged before the assignment (else "group_rewound"); the group's offsets at
    the end are at least every acknowledged commit ("commit_lost"); every record below them
    was consumed by some member ("group_skipped")."""
    out = {"group_rewound": [], "commit_lost": [], "group_skipped": [], "group_consumed": 0, "group_commits": 0}
    if not assigns and not consumes and not commits:
        return out
    out["group_commits"] = sum(len(c) for c in commits.values())
    by_member = defaultdict(list)
    for e in consumes:
        by_member[(e["member"], e["partition"])].append(e)
        out["group_consumed"] += e["last"] - e["first"] + 1
    for a in assigns:
        for p in a["partitions"]:
            later = [e for e in by_member.get((a["member"], p), []) if e["t"] >= a["t"]]
            if not later:
                continue
            first = min(later, key=lambda e: e["t"])["first"]
            before = [o for t, o in commits.get(p, []) if t < a["t"]]
            if before and first < max(before):
                out["group_rewound"].append({"partition": p, "member": a["member"], "started_at": first,
                                             "acknowledged_commit": max(before)})
    if group_end is not None:
        for p, cs in commits.items():
            highest = max(o for _, o in cs)
            if group_end.get(p, -1) < highest:
                out["commit_lost"].append({"partition": p, "acknowledged": highest, "at_end": group_end.get(p)})
        for p, end in group_end.items():
            spans = sorted((e["first"], e["last"]) for e in consumes if e["partition"] == p)
            covered, i = [], 0
            for first, last in spans:  # merge into disjoint runs
                if covered and first <= covered[-1][1] + 1:
                    covered[-1][1] = max(covered[-1][1], last)
                else:
                    covered.append([first, last])
            for offset, _ in final.get(p, []):
                if offset >= end:
                    break
                while i < len(covered) and covered[i][1] < offset:
                    i += 1
                if i == len(covered) or covered[i][0] > offset:
                    out["group_skipped"].append({"partition": p, "offset": offset})
    return out


def availability(faults, ack_times, end=None):
    """For each fault: the longest time any partition went without a durable acknowledgement
    between the fault's start and the next fault (or the end of the run): how long writes
    stopped. Partitions not yet acknowledging when the fault began are left out. Grouped by
    fault kind: count, p50, p99, max, and how many a partition never recovered from."""
    for ts in ack_times.values():
        ts.sort()
    if end is None:
        end = max((ts[-1] for ts in ack_times.values() if ts), default=0.0)
    starts = sorted(e["t"] for e in faults)
    gaps = defaultdict(list)
    unresolved = defaultdict(int)
    for e in faults:
        start = e["t"]
        i = bisect.bisect_right(starts, start)
        stop = starts[i] if i < len(starts) else end
        worst = 0.0
        resumed = True
        for ts in ack_times.values():
            if not ts or ts[0] > start:
                continue
            j = bisect.bisect_right(ts, start)
            if j == len(ts) or ts[j] > stop and stop == end:
                resumed = False
                break
            prev = start
            while j < len(ts) and ts[j] <= stop:
                worst = max(worst, ts[j] - prev)
                prev = ts[j]
                j += 1
            if j < len(ts) and prev < stop:  # the gap that runs past the next fault
                worst = max(worst, ts[j] - prev)
        if resumed:
            gaps[e["kind"]].append(round(worst, 3))
        else:
            unresolved[e["kind"]] += 1
    result = {}
    for kind in sorted(set(gaps) | set(unresolved)):
        xs = gaps.get(kind, [])
        result[kind] = {"faults": len(xs) + unresolved.get(kind, 0), "never_resumed": unresolved.get(kind, 0),
                        "p50_s": percentile(xs, 50), "p99_s": percentile(xs, 99), "max_s": max(xs) if xs else None}
    return result


# Added by the campaign: "diverged" from comparing the replicas on disk (replicas.py),
# "crashed" from watching the nodes (crashes.py), "isr_not_restored" from the healed cluster,
# the kept-data workloads' anomalies (kept_workloads.py) and the transactional workload's
# (txn_workload.py).
TXN_ANOMALIES = ("lost_commits", "torn_transactions", "aborted_reads", "eos_duplicates", "eos_skipped",
                 "txn_offsets_lost", "txn_unexpected", "txn_hanging", "eos_stalled")
ANOMALIES = ("lost", "duplicates", "reordered", "unexpected", "moved", "offset_changed", "diverged",
             "group_rewound", "commit_lost", "group_skipped", "sanitizer", "writers_crashed",
             "admin_lost", "admin_partitions", "admin_config", "crashed", "isr_not_restored",
             "compacted_lost", "compacted_diverged", "retention_past_hw", "http_misplaced") + TXN_ANOMALIES


def named_anomalies(result):
    """The anomaly kinds a result holds, for a one-line verdict."""
    return [k for k in ANOMALIES if result.get(k)]
