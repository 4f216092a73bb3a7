#!/usr/bin/python3
"""One node at deployment scale: creates N topics of P partitions (CreateTopics of 500), then
reports creation time, RSS while creating (peak) and after, descriptors and memory maps held,
the time of a first produce and fetch to partitions untouched since start, and clean and
unclean stop and start times.

    bench/cluster/partitions_bench.py --brokerd build/src/app/brokerd [--topics 100000]
        [--partitions 1] [--budget N]

--budget sets log.open.files.max (default: derived from the open files limit); --preload runs
brokerd with another malloc (LD_PRELOAD: jemalloc, mimalloc). Prints one
line per figure. Not a test: run it by hand (100,000 topics take a few minutes and about
2 GB of disk for the empty segments' directories).
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

from clients import create_topics_in_batches  # noqa: E402


def status_mib(pid, key="VmRSS:"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return 0.0


def held(pid):
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/maps") as f:
        maps = sum(1 for _ in f)
    return fds, maps


class RssSampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0.0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, status_mib(self.pid))
            except OSError:
                return
            time.sleep(0.2)


def timed_start(broker, timeout=900):
    t0 = time.monotonic()
    broker.start(timeout=timeout)
    return time.monotonic() - t0


def timed_stop(broker, sig, timeout=900):
    t0 = time.monotonic()
    broker.proc.send_signal(sig)
    broker.proc.wait(timeout=timeout)
    return time.monotonic() - t0


def first_use(broker, topics, partitions, count=5):
    """Milliseconds of a produce and then a fetch, each to a partition not touched since start."""
    from kafka_wire import Connection, fetch, produce, record_batch
    out = []
    with Connection(broker.port, timeout=60) as conn:
        for t in random.Random(7).sample(topics, count):
            p = random.Random(t).randrange(partitions)
            t0 = time.monotonic()
            r = produce(conn, t, p, record_batch([(b"k", b"v" * 1000)]))
            t1 = time.monotonic()
            f = fetch(conn, t, p, max(r["base_offset"], 0))
            t2 = time.monotonic()
            assert r["error"] == 0 and f["error"] == 0, (t, r["error"], f["error"])
            out.append(((t1 - t0) * 1000, (t2 - t1) * 1000))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--topics", type=int, default=100000)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--preload", default=None, help="a malloc to run brokerd with (LD_PRELOAD), e.g. "
                    "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    if args.preload:
        os.environ["LD_PRELOAD"] = args.preload  # for the brokerd processes started below
    from brokerd_harness import Broker

    work = Path(tempfile.mkdtemp(prefix="brokerd-partitions-bench-"))
    overrides = {"offsets.topic.num.partitions": "1", "log.cleaner.enable": "false"}
    if args.budget:
        overrides["log.open.files.max"] = str(args.budget)
    broker = Broker(work / "node", overrides=overrides)
    broker.start()
    try:
        print(f"idle node: rss {status_mib(broker.pid):.0f} MiB")
        sampler = RssSampler(broker.pid)
        sampler.start()
        names = [f"t{i:06d}" for i in range(args.topics)]
        t0 = time.monotonic()
        create_topics_in_batches(broker.bootstrap, names, args.partitions)
        created = time.monotonic() - t0
        time.sleep(2)
        sampler.stop.set()
        total = args.topics * args.partitions
        rss = status_mib(broker.pid)
        fds, maps = held(broker.pid)
        print(f"created {args.topics} topics x {args.partitions} partitions in {created:.1f} s "
              f"({total / created:.0f} partitions/s)")
        print(f"rss: peak while creating {sampler.peak:.0f} MiB, after {rss:.0f} MiB "
              f"({rss * 1024 * 1024 / total:.0f} B per partition)")
        print(f"held: {fds} descriptors, {maps} memory maps")
        uses = first_use(broker, names, args.partitions)
        print("first produce / fetch to untouched partitions (ms): " +
              ", ".join(f"{p:.1f}/{f:.1f}" for p, f in uses))

        print(f"clean stop: {timed_stop(broker, signal.SIGTERM):.1f} s")
        print(f"clean start (to serving): {timed_start(broker):.1f} s; rss {status_mib(broker.pid):.0f} MiB")
        uses = first_use(broker, names, args.partitions)
        print("after a clean start, first produce / fetch (ms): " + ", ".join(f"{p:.1f}/{f:.1f}" for p, f in uses))
        print(f"kill -9 (unclean stop): {timed_stop(broker, signal.SIGKILL):.1f} s")
        print(f"unclean start (to serving): {timed_start(broker):.1f} s; rss {status_mib(broker.pid):.0f} MiB")
        uses = first_use(broker, names, args.partitions)
        print("after an unclean start, first produce / fetch (ms): " +
              ", ".join(f"{p:.1f}/{f:.1f}" for p, f in uses))
        broker.stop(timeout=900)
    finally:
        broker.kill()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
