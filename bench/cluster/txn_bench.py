#!/usr/bin/python3
"""What transactions cost, on three local nodes: a topic of 6 partitions at RF 3
(min.insync.replicas 2), 1 KB records, one brokerd-load producer with the same settings
(acks=all, idempotent, linger 5 ms, batch.size 1 MB), unthrottled.

1. Throughput: idempotent and transactional (a commit every --commit-interval-ms) rounds
   alternate, --rounds of each, on one cluster; records/s and MB/s of every round, the
   medians and the ratio transactional/idempotent (the target is at least 0.85), and the
   median of each round's own ratio (its two runs back to back, under the same background
   load). Then one paced round of each mode (--paced-rate): an unthrottled producer's commit
   waits for the flush of its whole queue, a paced one's is the broker's commit path.
2. The same on a fresh cluster started with transaction.partition.verification.enable=false
   (brokerd reads it at start only): what KIP-890's verification costs.
3. Memory, on a third fresh cluster: the nodes' resident size (VmRSS and RssAnon of
   /proc/PID/status) before, after half and after all of --ids transactional ids are created
   (init_transactions, then the producer closed: the id stays, Empty), then after half and
   all of them have an ongoing transaction holding one record; bytes per id and per ongoing
   transaction, over the three nodes (each coordinates about a third of the ids).

    bench/cluster/txn_bench.py --brokerd build/src/app/brokerd --load build/bench/loadgen/brokerd-load
        [--rounds 3] [--duration 25] [--warmup 5] [--ids 2000] [--skip throughput,verification,memory] [--keep DIR]

Not a test: run it by hand (about 11 minutes with the defaults). Every node it starts is
killed by pid at the end of its part, every brokerd-load run is bounded by a timeout.
"""
import argparse
import concurrent.futures
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

import clients  # noqa: E402
from brokerd_harness import sanitized  # noqa: E402
from cluster_harness import QuorumCluster  # noqa: E402
from waiting import wait_until  # noqa: E402

TOPIC = "txn-bench"
PARTITIONS = 6
RECORD_SIZE = 1024
# Retention keeps the disk bounded over many unthrottled rounds (3 replicas each).
TOPIC_CONFIG = {"retention.bytes": str(256 << 20), "segment.bytes": str(64 << 20)}
BROKER_OVERRIDES = {"min.insync.replicas": "2", "log.retention.check.interval.ms": "5000"}
TXN_TIMEOUT_MS = 900000  # transaction.max.timeout.ms: the memory part's transactions stay open


def start_cluster(workdir, extra=None):
    cluster = QuorumCluster(workdir, overrides={**BROKER_OVERRIDES, **(extra or {})})
    try:
        cluster.start()
        from confluent_kafka.admin import NewTopic
        a = clients.admin(cluster.bootstrap())
        a.create_topics([NewTopic(TOPIC, num_partitions=PARTITIONS, replication_factor=3, config=TOPIC_CONFIG)],
                        operation_timeout=30)[TOPIC].result(timeout=30)

        def whole():
            try:
                md = clients.admin(cluster.bootstrap()).list_topics(topic=TOPIC, timeout=5).topics.get(TOPIC)
            except Exception:
                return False
            return bool(md) and md.error is None and len(md.partitions) == PARTITIONS and all(
                p.leader >= 0 and sorted(p.isrs) == [1, 2, 3] for p in md.partitions.values())
        wait_until(whole, 60, "the topic's ISRs")
    except BaseException:
        cluster.tear_down()
        raise
    if any(sanitized(n.pid) for n in cluster.nodes.values()):
        print("warning: brokerd is built with a sanitizer: its figures say little", flush=True)
    return cluster


def load(args, cluster, duration, warmup, txn_id=None, rate=0):
    """One brokerd-load run; its --json result (a dict)."""
    cmd = [args.load, "--bootstrap", cluster.bootstrap(), "--topic", TOPIC, "--partitions", str(PARTITIONS),
           "--replication-factor", "3", "--mode", "produce", "--producers", "1", "--record-size", str(RECORD_SIZE),
           "--acks", "all", "--producer-prop", "enable.idempotence=true", "--linger-ms", "5",
           "--batch-size", "1048576", "--max-in-flight", "5", "--rate", str(rate),
           "--duration", str(duration), "--warmup", str(warmup), "--json", "--quiet"]
    # A commit flushes everything the client holds: a bounded queue (the same in both modes)
    # lets it commit every --commit-interval-ms instead of once per flush of 100,000 records.
    if args.queue_kbytes > 0:
        cmd += ["--producer-prop", f"queue.buffering.max.kbytes={args.queue_kbytes}"]
    if txn_id:
        cmd += ["--transactional-id", txn_id, "--commit-interval-ms", str(args.commit_interval_ms)]
    # run() kills the child (by its pid) when the timeout expires.
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 180)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"brokerd-load exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-3000:]}")
    r = json.loads(lines[-1])
    for f in r["failures"] + r.get("abort_reasons", []):
        print(f"    brokerd-load: {f}", flush=True)
    return r


def describe(r):
    p = r["produce"]
    s = (f"{p['records_per_s']:>9,.0f} records/s {p['mb_per_s']:7.1f} MB/s  produce p50 {p['latency_ms']['p50']:6.1f} "
         f"p99 {p['latency_ms']['p99']:7.1f} ms")
    t = r.get("transactions")
    if t:
        c = t["commit_latency_ms"]
        s += (f"  commits {t['commits']} ({t['commits_per_s']:.1f}/s), aborted {t['aborts']}, "
              f"commit p50 {c['p50']:.1f} p99 {c['p99']:.1f} p99.9 {c['p99_9']:.1f} ms")
    if r["produce"]["errors"]:
        s += f"  errors {r['produce']['errors']}"
    return s


def throughput(args, cluster, label):
    """Alternating rounds; returns the figures for the summary."""
    print(f"== {label}: warm-up (not counted)", flush=True)
    # The first transactional producer makes the cluster create __transaction_state.
    load(args, cluster, 10, 0, txn_id=f"{label}-warm")
    load(args, cluster, 5, 0)
    rounds = {"idempotent": [], "transactional": []}
    for k in range(args.rounds):
        order = ["idempotent", "transactional"] if k % 2 == 0 else ["transactional", "idempotent"]
        for mode in order:
            r = load(args, cluster, args.duration, args.warmup,
                     txn_id=f"{label}-r{k}" if mode == "transactional" else None)
            rounds[mode].append(r)
            print(f"{label} round {k + 1} {mode:<13} {describe(r)}", flush=True)
    med = {m: statistics.median(r["produce"]["records_per_s"] for r in rs) for m, rs in rounds.items()}
    med_mb = {m: statistics.median(r["produce"]["mb_per_s"] for r in rs) for m, rs in rounds.items()}
    commit = [r["transactions"]["commit_latency_ms"] for r in rounds["transactional"]]
    # Each round's pair (the two modes run back to back) under the same background load: the
    # median of their ratios is steadier than the ratio of the medians on a shared machine.
    pairs = [t["produce"]["records_per_s"] / i["produce"]["records_per_s"]
             for i, t in zip(rounds["idempotent"], rounds["transactional"]) if i["produce"]["records_per_s"]]
    out = {
        "pair_ratios": pairs, "pair_ratio": statistics.median(pairs) if pairs else 0.0,
        "idem_rps": med["idempotent"], "txn_rps": med["transactional"],
        "idem_mb": med_mb["idempotent"], "txn_mb": med_mb["transactional"],
        "ratio": med["transactional"] / med["idempotent"] if med["idempotent"] else 0.0,
        "commit_p50": statistics.median(c["p50"] for c in commit),
        "commit_p99": statistics.median(c["p99"] for c in commit),
        "aborts": sum(r["transactions"]["aborts"] for r in rounds["transactional"]),
        "errors": sum(r["produce"]["errors"] for rs in rounds.values() for r in rs),
    }
    print(f"{label}: median idempotent {out['idem_rps']:,.0f} records/s {out['idem_mb']:.1f} MB/s, "
          f"transactional {out['txn_rps']:,.0f} records/s {out['txn_mb']:.1f} MB/s, ratio {out['ratio']:.3f} "
          f"(per round {', '.join(f'{x:.2f}' for x in pairs)}: median {out['pair_ratio']:.3f}); "
          f"commit p50 {out['commit_p50']:.1f} ms, p99 {out['commit_p99']:.1f} ms (medians of the rounds)", flush=True)
    if args.paced_rate > 0:
        paced = {}
        for mode in ("idempotent", "transactional"):
            r = load(args, cluster, args.duration, args.warmup, rate=args.paced_rate,
                     txn_id=f"{label}-paced" if mode == "transactional" else None)
            paced[mode] = r
            print(f"{label} paced {args.paced_rate:,}/s {mode:<13} {describe(r)}", flush=True)
        c = paced["transactional"]["transactions"]["commit_latency_ms"]
        out.update(paced_commit_p50=c["p50"], paced_commit_p99=c["p99"],
                   paced_idem_p50=paced["idempotent"]["produce"]["latency_ms"]["p50"],
                   paced_txn_p50=paced["transactional"]["produce"]["latency_ms"]["p50"],
                   paced_idem_p99=paced["idempotent"]["produce"]["latency_ms"]["p99"],
                   paced_txn_p99=paced["transactional"]["produce"]["latency_ms"]["p99"])
    return out


def status_kib(pid):
    """VmRSS and RssAnon of a process, in KiB."""
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon"):
                got[key] = int(line.split()[1])
    return got["VmRSS"], got["RssAnon"]


def sample_rss(cluster, settle_s=3.0, samples=5):
    """{node: (VmRSS, RssAnon)} in KiB, each the median of a few samples after a settle."""
    time.sleep(settle_s)
    taken = {i: [] for i in cluster.nodes}
    for _ in range(samples):
        for i, n in cluster.nodes.items():
            taken[i].append(status_kib(n.pid))
        time.sleep(0.5)
    return {i: (statistics.median(v for v, _ in s), statistics.median(a for _, a in s)) for i, s in taken.items()}


def transactional_ids(args, cluster, prefix, indexes, ongoing):
    """Producers with transactional.id prefix-i for i in `indexes`, at most --clients at a
    time: each calls init_transactions and, with `ongoing`, begins a transaction and has one
    record acknowledged in it; then the producer is closed (librdkafka leaves the transaction
    open). Returns the seconds it took."""
    from confluent_kafka import Producer
    value = b"x" * RECORD_SIZE

    def one(i):
        p = Producer({"bootstrap.servers": cluster.bootstrap(), "transactional.id": f"{prefix}-{i}",
                      "transaction.timeout.ms": TXN_TIMEOUT_MS, "linger.ms": 0})
        p.init_transactions(30)
        if ongoing:
            p.begin_transaction()
            p.produce(TOPIC, value=value, partition=i % PARTITIONS)
            if p.flush(30) != 0:
                raise RuntimeError(f"{prefix}-{i}: the record was not delivered in 30 s")
        del p

    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.clients) as pool:
        for f in [pool.submit(one, i) for i in indexes]:
            f.result(timeout=300)
    return time.monotonic() - t


def count_by_coordinator(args, cluster, state):
    """{node: ids in `state}` from brokerctl transactions list, or None without brokerctl."""
    if not args.brokerctl:
        return None
    proc = subprocess.run([args.brokerctl, "--bootstrap-server", cluster.bootstrap(), "transactions", "list",
                           "--state", state, "--output", "json"], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        print(f"    brokerctl transactions list: {proc.stderr.strip()[:500]}", flush=True)
        return None
    counts = {}
    for t in json.loads(proc.stdout):
        if t["transactional_id"].startswith("mem-"):
            counts[t["coordinator"]] = counts.get(t["coordinator"], 0) + 1
    return counts


def memory(args, cluster):
    """Resident size before, after half and after all of --ids transactional ids, then after
    half and all of them have an ongoing transaction. The warm-up runs as many clients at a
    time first, so the buffers of that many connections are in the baseline; the second half
    of each step (the marginal cost) shows whether what remains grows with the ids."""
    print("== memory", flush=True)
    n, half = args.ids, args.ids // 2
    transactional_ids(args, cluster, "memwarm", range(4 * args.clients), ongoing=True)
    before = sample_rss(cluster)
    took = transactional_ids(args, cluster, "mem", range(half), ongoing=False)
    half_ids = sample_rss(cluster)
    took += transactional_ids(args, cluster, "mem", range(half, n), ongoing=False)
    ids = sample_rss(cluster)
    empty = count_by_coordinator(args, cluster, "Empty")
    print(f"{n} transactional ids created in {took:.1f} s; coordinated per node: {empty}", flush=True)
    took = transactional_ids(args, cluster, "mem", range(half), ongoing=True)
    half_txns = sample_rss(cluster)
    took += transactional_ids(args, cluster, "mem", range(half, n), ongoing=True)
    txns = sample_rss(cluster)
    ongoing = count_by_coordinator(args, cluster, "Ongoing")
    print(f"{n} ongoing transactions opened in {took:.1f} s; ongoing per node: {ongoing}", flush=True)
    mib = lambda s, i, k: f"{s[i][k] / 1024:.1f}"  # noqa: E731
    for i in cluster.nodes:
        steps = (before, half_ids, ids, half_txns, txns)
        line = (f"node {i}: VmRSS {' -> '.join(mib(s, i, 0) for s in steps)} MiB, "
                f"RssAnon {' -> '.join(mib(s, i, 1) for s in steps)} MiB")
        if empty and empty.get(i):
            line += (f"; coordinating {empty[i]} ids: {(ids[i][0] - before[i][0]) * 1024 / empty[i]:.0f} B of VmRSS "
                     f"({(ids[i][1] - before[i][1]) * 1024 / empty[i]:.0f} B anonymous) per id it coordinates")
        print(line, flush=True)
    total = lambda s, k: sum(v[k] for v in s.values()) * 1024  # noqa: E731  bytes over the three nodes
    per = lambda a, b, k, count: (total(b, k) - total(a, k)) / count  # noqa: E731
    out = {
        "ids": n,
        "per_id_rss": per(before, ids, 0, n), "per_id_anon": per(before, ids, 1, n),
        "per_id_rss_2nd": per(half_ids, ids, 0, n - half), "per_id_anon_2nd": per(half_ids, ids, 1, n - half),
        "per_txn_rss": per(ids, txns, 0, n), "per_txn_anon": per(ids, txns, 1, n),
        "per_txn_rss_2nd": per(half_txns, txns, 0, n - half), "per_txn_anon_2nd": per(half_txns, txns, 1, n - half),
        "ongoing_seen": sum(ongoing.values()) if ongoing else None,
        "total_before_mib": total(before, 0) / 2**20,
    }
    print(f"memory, the three nodes together: per transactional id {out['per_id_rss']:.0f} B of VmRSS "
          f"({out['per_id_anon']:.0f} B anonymous; second half {out['per_id_rss_2nd']:.0f} / {out['per_id_anon_2nd']:.0f} B), "
          f"per ongoing transaction {out['per_txn_rss']:.0f} B ({out['per_txn_anon']:.0f} B anonymous; second half "
          f"{out['per_txn_rss_2nd']:.0f} / {out['per_txn_anon_2nd']:.0f} B)", flush=True)
    return out


def with_cluster(args, tmp, name, extra, body):
    workdir = Path(tmp) / name
    workdir.mkdir(parents=True, exist_ok=True)
    cluster = start_cluster(workdir, extra)
    try:
        return body(cluster)
    finally:
        cluster.tear_down()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)  # the data of unthrottled rounds is large


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--load", required=True, help="the brokerd-load binary")
    ap.add_argument("--brokerctl", help="brokerctl, to count ids per coordinator (default: beside brokerd, if built)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each mode")
    ap.add_argument("--duration", type=float, default=25, help="seconds of each round, warm-up included")
    ap.add_argument("--warmup", type=float, default=5)
    ap.add_argument("--commit-interval-ms", type=float, default=100)
    ap.add_argument("--queue-kbytes", type=int, default=16384,
                    help="the producer's queue.buffering.max.kbytes in both modes (0: librdkafka's default)")
    ap.add_argument("--paced-rate", type=int, default=30000, help="records/s of the paced rounds (0: none)")
    ap.add_argument("--ids", type=int, default=2000, help="transactional ids of the memory part")
    ap.add_argument("--clients", type=int, default=32, help="producers open at a time in the memory part")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: throughput, verification, memory")
    ap.add_argument("--keep", metavar="DIR", help="run in DIR and keep the nodes' data and logs there")
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    args.load = str(Path(args.load).resolve())
    if not args.brokerctl:
        guess = Path(args.brokerd).resolve().parent.parent / "brokerctl" / "brokerctl"
        args.brokerctl = str(guess) if os.access(guess, os.X_OK) else None
    skip = set(filter(None, args.skip.split(",")))

    results = {}
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory(prefix="brokerd-txn-")) as tmp:
        Path(tmp).mkdir(parents=True, exist_ok=True)
        if "throughput" not in skip:
            results["on"] = with_cluster(args, tmp, "verify-on", None, lambda c: throughput(args, c, "verify-on"))
        if "verification" not in skip:
            results["off"] = with_cluster(args, tmp, "verify-off", {"transaction.partition.verification.enable": "false"},
                                          lambda c: throughput(args, c, "verify-off"))
        if "memory" not in skip:
            results["mem"] = with_cluster(args, tmp, "memory", None, lambda c: memory(args, c))

    print("\n===== summary =====")
    print(f"3 local nodes, RF 3, min.insync.replicas 2, {PARTITIONS} partitions, {RECORD_SIZE} B records"
          + (f", one producer (acks=all, idempotent), {args.rounds} alternating rounds of {args.duration:g} s "
             f"({args.warmup:g} s warm-up), commit every {args.commit_interval_ms:g} ms"
             if "on" in results or "off" in results else ""))
    for key, label in (("on", "verification on (default)"), ("off", "verification off")):
        if key in results:
            r = results[key]
            print(f"{label:<26} idempotent {r['idem_rps']:>9,.0f} rec/s {r['idem_mb']:6.1f} MB/s | transactional "
                  f"{r['txn_rps']:>9,.0f} rec/s {r['txn_mb']:6.1f} MB/s | ratio {r['ratio']:.3f} "
                  f"({'meets' if r['ratio'] >= 0.85 else 'BELOW'} 0.85; per round median {r['pair_ratio']:.3f}) "
                  f"| commit p50 {r['commit_p50']:.1f} "
                  f"p99 {r['commit_p99']:.1f} ms | aborted {r['aborts']}, errors {r['errors']}")
            if "paced_commit_p50" in r:
                print(f"{'':<26} paced {args.paced_rate:,}/s: commit p50 {r['paced_commit_p50']:.1f} "
                      f"p99 {r['paced_commit_p99']:.1f} ms; produce p50/p99 idempotent {r['paced_idem_p50']:.1f}/"
                      f"{r['paced_idem_p99']:.1f} ms, transactional {r['paced_txn_p50']:.1f}/{r['paced_txn_p99']:.1f} ms")
    if "on" in results and "off" in results:
        print(f"verification off / on, transactional records/s: {results['off']['txn_rps'] / results['on']['txn_rps']:.3f} "
              "(two clusters one after the other: the background load differs)")
    if "mem" in results:
        m = results["mem"]
        print(f"memory ({m['ids']} ids, three nodes together, {m['total_before_mib']:.0f} MiB before): "
              f"{m['per_id_rss']:.0f} B per transactional id ({m['per_id_anon']:.0f} B anonymous; second half "
              f"{m['per_id_rss_2nd']:.0f} / {m['per_id_anon_2nd']:.0f}), {m['per_txn_rss']:.0f} B per ongoing "
              f"transaction ({m['per_txn_anon']:.0f} B anonymous; second half {m['per_txn_rss_2nd']:.0f} / "
              f"{m['per_txn_anon_2nd']:.0f})"
              + (f"; {m['ongoing_seen']} seen ongoing" if m["ongoing_seen"] is not None else ""))


if __name__ == "__main__":
    main()
