#!/usr/bin/python3
"""Failover time on three local nodes in three racks, with the shipped defaults: an idempotent
acks=all producer writes keyed records to a topic of RF 3 (min.insync.replicas 2) while the
leader of one partition after another is killed (kill -9). For each kill, the time from the
kill to the first acknowledgement of that partition after it (written by the new leader),
and whether the victim was also the active controller. After each kill the victim restarts,
every partition's ISR becomes whole again, a preferred-leader election gives the victim its
partitions back, and the producer writes to every leader before the next kill (its
connection to the restarted broker is up, not waiting out librdkafka's reconnect backoff,
which grows to reconnect.backoff.max.ms while a broker is down). At the end every
acknowledged record is read back (lost must be 0).

    bench/cluster/failover_bench.py --brokerd build/src/app/brokerd [--kills 20] [--partitions 3] [--keep DIR]

Prints one line per kill, then the median and worst. Not a test: run it by hand (about ten
seconds per kill).
"""
import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

import clients  # noqa: E402
from brokerd_harness import brokerctl_binary  # noqa: E402
from cluster_harness import QuorumCluster  # noqa: E402
from keyed_workload import KeyedWriter, check_read_back  # noqa: E402
from waiting import wait_until  # noqa: E402

RACKS = {1: "zone-a", 2: "zone-b", 3: "zone-c"}
TOPIC = "failover"



def view(cluster):
    """{partition: (leader, sorted ISR)}, or None while it cannot be read."""
    try:
        md = clients.admin(cluster.bootstrap()).list_topics(topic=TOPIC, timeout=5).topics.get(TOPIC)
    except Exception:
        return None
    if not md or md.error is not None:
        return None
    return {p.id: (p.leader, sorted(p.isrs)) for p in md.partitions.values()}



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--settle", type=float, default=2.0, help="seconds of steady writes before each kill")
    ap.add_argument("--keep", metavar="DIR", help="run in DIR and keep the nodes' data and logs there")
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())  # brokerctl is found beside it

    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory(prefix="brokerd-failover-")) as tmp:
        Path(tmp).mkdir(parents=True, exist_ok=True)
        cluster = QuorumCluster(Path(tmp), overrides={"min.insync.replicas": "2"},
                                per_node={i: {"broker.rack": r} for i, r in RACKS.items()})
        try:
            cluster.start()
            from confluent_kafka.admin import NewTopic
            a = clients.admin(cluster.bootstrap())
            a.create_topics([NewTopic(TOPIC, num_partitions=args.partitions, replication_factor=3)],
                            operation_timeout=30)[TOPIC].result(timeout=30)
            whole = lambda: (v := view(cluster)) and len(v) == args.partitions and all(  # noqa: E731
                leader >= 0 and isr == [1, 2, 3] for leader, isr in v.values())
            wait_until(whole, 60, "the topic's ISRs")
            writer = KeyedWriter(cluster.bootstrap(), TOPIC, keys=4 * args.partitions).start()
            times = []
            for k in range(args.kills):
                time.sleep(args.settle)
                partition = k % args.partitions
                victim = view(cluster)[partition][0]
                controller = cluster.wait_for_leader()[0]
                killed_at, killed_wall = time.monotonic(), time.time()
                cluster.nodes[victim].kill()
                # Acknowledgements the victim sent just before dying arrive within microseconds.
                wait_until(lambda: writer.acked_after(killed_at + 0.02, partition) is not None, 60,
                           f"no acknowledgement of partition {partition} after killing node {victim}")
                took = writer.acked_after(killed_at + 0.02, partition) + 0.02
                times.append(took)
                print(f"kill {k + 1} at {killed_wall:.3f}: partition {partition}, leader {victim}"
                      f"{' (also the active controller)' if victim == controller else ''}: "
                      f"first acknowledgement after {took:.3f} s", flush=True)
                cluster.nodes[victim].start(timeout=120)
                wait_until(whole, 120, "the ISRs after the restart")
                # As after a rolling restart: leaders back on their preferred replicas, and the
                # producer writing to each of them again, so that the next kill does not also
                # measure the client's reconnect backoff to a broker it saw die earlier.
                subprocess.run([brokerctl_binary(), "--bootstrap-server", cluster.bootstrap(), "partitions",
                                "elect-leaders", "--topic", TOPIC], capture_output=True, timeout=60, check=False)
                elected = time.monotonic()
                wait_until(lambda: all(writer.acked_after(elected, p) is not None for p in range(args.partitions)),
                           60, "acknowledgements from every partition's leader")
            writer.stop()
            acked, read, lost, dups, reorders = check_read_back(cluster.bootstrap(), writer, args.partitions)
            print(f"records: acknowledged {acked}, read back {read}, lost {len(lost)}, duplicates {dups}, "
                  f"reordered {reorders}, failed (not acknowledged) {len(writer.failed)}")
            print(f"failover over {len(times)} kills: median {statistics.median(times):.3f} s, "
                  f"worst {max(times):.3f} s, best {min(times):.3f} s")
        finally:
            cluster.tear_down()


if __name__ == "__main__":
    main()
