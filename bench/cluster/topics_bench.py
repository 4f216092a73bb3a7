#!/usr/bin/python3
"""Many topics through the metadata quorum: creates N topics in batches of CreateTopics, then
reports the time to create them, the metadata log and snapshot sizes, each node's RSS, a full
Metadata request's latency, how long a restarted node takes to serve again, and (three nodes)
the ISR shrinks and expands the leaders made while the topics were created.

    bench/cluster/topics_bench.py --brokerd build/src/app/brokerd [--topics 10000] [--batch 100]
        [--nodes 1|3] [--partitions 1] [--rf 1] [--snapshot-bytes N]

With --nodes 3 the topics are created on a quorum of three local voters (three racks); each
node hosts the replicas placed on it, so keep topics x partitions x rf / nodes within the
open-file limit (about three files per hosted partition). Prints one line per figure. Not a
test: run it by hand.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    """User and system CPU time the process has used."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def log_bytes(path):
    """Bytes of the metadata log's segments (index files are preallocated, so not counted)."""
    return sum(p.stat().st_size for p in Path(path).glob("*.log"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--topics", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=1, choices=[1, 3])
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--rf", type=int, default=1)
    ap.add_argument("--snapshot-bytes", type=int, default=None,
                    help="metadata.log.max.record.bytes.between.snapshots (default: the broker's)")
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    from brokerd_harness import Broker, free_port
    from cluster_harness import QuorumCluster

    work = Path(tempfile.mkdtemp(prefix="brokerd-topics-bench-"))
    overrides = {"log.cleaner.enable": "false", "offsets.topic.num.partitions": "1"}
    if args.snapshot_bytes:
        overrides["metadata.log.max.record.bytes.between.snapshots"] = str(args.snapshot_bytes)
    if args.nodes == 1:
        nodes = {1: Broker(work / "node1", overrides=overrides).start()}
        controller = nodes[1]
    else:
        racks = {i: {"broker.rack": f"zone-{'abc'[i - 1]}", "metrics.listener": f"127.0.0.1:{free_port()}"}
                 for i in (1, 2, 3)}
        cluster = QuorumCluster(work, overrides=overrides, per_node=racks)
        nodes = cluster.nodes
    try:
        if args.nodes == 3:
            cluster.start()
            leader, _ = cluster.wait_for_leader()
            controller = nodes[leader]
        admin = AdminClient({"bootstrap.servers": controller.bootstrap})
        names = [f"t{i:06d}" for i in range(args.topics)]
        t0 = time.monotonic()
        peak = {i: 0.0 for i in nodes}
        for at in range(0, len(names), args.batch):
            batch = [NewTopic(n, num_partitions=args.partitions, replication_factor=args.rf)
                     for n in names[at:at + args.batch]]
            for f in admin.create_topics(batch, operation_timeout=60, request_timeout=120).values():
                f.result(timeout=120)
            for i, n in nodes.items():
                peak[i] = max(peak[i], rss_mib(n.pid))
            done = at + args.batch
            if done % max(args.topics // 10, args.batch) < args.batch:
                print(f"  {done} topics after {time.monotonic() - t0:.1f} s, RSS "
                      + ", ".join(f"{rss_mib(n.pid):.0f}" for n in nodes.values()) + " MiB", flush=True)
        created = time.monotonic() - t0
        print(f"created {args.topics} topics of {args.partitions} partition(s), RF {args.rf}, in batches of "
              f"{args.batch}: {created:.1f} s ({args.topics / created:.0f} topics/s)")
        for i, n in nodes.items():
            meta = n.data_dir / "__cluster_metadata-0"
            snaps = sorted(meta.glob("0*-*.checkpoint"))
            snap = f"{snaps[-1].stat().st_size / 1e6:.2f} MB" if snaps else "none"
            print(f"node {i}: RSS {rss_mib(n.pid):.0f} MiB (peak while creating {peak[i]:.0f} MiB), "
                  f"metadata log {log_bytes(meta) / 1e6:.2f} MB, latest snapshot {snap}")
        # What the nodes cost while nothing happens: heartbeats, fetch sessions, shard ticks.
        before = {i: cpu_seconds(n.pid) for i, n in nodes.items()}
        time.sleep(10)
        print("idle CPU over 10 s: " + ", ".join(f"node {i} {(cpu_seconds(n.pid) - before[i]) / 10 * 100:.0f}%"
                                                 for i, n in nodes.items()))
        if args.nodes == 3:
            from prometheus_text import scrape, value
            for i, n in nodes.items():
                m = scrape(int(n.overrides["metrics.listener"].rsplit(":", 1)[1]))[0]
                print(f"node {i}: ISR shrinks {value(m, 'brokerd_isr_shrinks_total'):.0f}, expands "
                      f"{value(m, 'brokerd_isr_expands_total'):.0f}, fetch session partitions "
                      f"{value(m, 'brokerd_fetch_session_partitions'):.0f}")
        lat = []
        for _ in range(10):
            t = time.monotonic()
            md = AdminClient({"bootstrap.servers": controller.bootstrap}).list_topics(timeout=60)
            lat.append(time.monotonic() - t)
            assert len(md.topics) >= args.topics
        print(f"full Metadata request ({len(md.topics)} topics): median {statistics.median(lat) * 1000:.0f} ms, "
              f"worst {max(lat) * 1000:.0f} ms")
        victim = next(i for i, n in nodes.items() if n is not controller) if len(nodes) > 1 else 1
        nodes[victim].stop()
        t = time.monotonic()
        nodes[victim].start(timeout=300)
        print(f"node {victim} restarted and serving again in {time.monotonic() - t:.1f} s")
    finally:
        for n in nodes.values():
            n.kill()


if __name__ == "__main__":
    main()
