#!/usr/bin/python3
"""Mirror links on this machine: two single-node clusters, A (source) and B (destination).

1. Throughput: A is filled by brokerd-load at its full rate (1 KB records, acks=all); then a
   link on B copies everything. Prints A's produce rate, B's copy rate (MB/s) and the CPU
   seconds B spent per GB copied.
2. Recovery point: brokerd-load produces to A at half of the rate measured in 1 while the link
   runs; every 100 ms the link's time behind (the largest lag_ms over the mirror partitions,
   DescribeMirrorLinks through brokerctl) is sampled. Prints its p50, p99 and max.

    bench/cluster/mirror_bench.py --brokerd build/src/app/brokerd [--seconds 20] [--partitions 3]

Not a test: run it by hand; both clusters and the load run on the same cores.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

import clients  # noqa: E402
from brokerd_harness import Broker  # noqa: E402
from waiting import wait_until  # noqa: E402

TOPIC = "mirrored"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(tool, bootstrap, seconds, partitions, rate=0):
    out = subprocess.run([tool, "--bootstrap", bootstrap, "--topic", TOPIC, "--partitions", str(partitions),
                          "--mode", "produce", "--producers", "1", "--record-size", "1024", "--keys", "1000",
                          "--acks", "all", "--rate", str(rate), "--duration", str(seconds), "--warmup", "1",
                          "--json", "--quiet"], capture_output=True, text=True, timeout=seconds + 120)
    if out.returncode != 0:
        raise SystemExit(f"brokerd-load failed: {out.stderr}")
    return json.loads(out.stdout)["produce"]


def describe(ctl, bootstrap):
    out = subprocess.run([ctl, "--bootstrap-server", bootstrap, "links", "describe", "bench", "--output", "json"],
                         capture_output=True, text=True, timeout=30)
    return json.loads(out.stdout) if out.returncode == 0 else None


def ends(bootstrap, partitions):
    return [clients.watermarks(bootstrap, TOPIC, p)[1] for p in range(partitions)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--partitions", type=int, default=3)
    args = ap.parse_args()
    build = Path(args.brokerd).resolve().parents[2]
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    ctl = str(build / "src" / "brokerctl" / "brokerctl")
    tool = str(build / "bench" / "loadgen" / "brokerd-load")

    with tempfile.TemporaryDirectory(prefix="brokerd-mirror-bench-") as tmp:
        a = Broker(Path(tmp) / "a")
        b = Broker(Path(tmp) / "b", overrides={"mirror.metadata.refresh.interval.ms": "500"})
        a.start()
        b.start()
        try:
            produced = load(tool, a.bootstrap, args.seconds, args.partitions)
            total = sum(ends(a.bootstrap, args.partitions))
            size = sum(f.stat().st_size for f in Path(a.workdir).rglob(f"{TOPIC}-*/*.log"))
            print(f"source: {produced['records_per_s']:.0f} records/s, {produced['mb_per_s']:.1f} MB/s produced "
                  f"({total} records, {size / 1e6:.0f} MB on disk)")

            cpu0 = cpu_seconds(b.pid)
            t0 = time.monotonic()
            subprocess.run([ctl, "--bootstrap-server", b.bootstrap, "links", "create", "bench",
                            "--source-bootstrap-server", a.bootstrap, "--topic", TOPIC], check=True,
                           capture_output=True, timeout=30)
            want = ends(a.bootstrap, args.partitions)

            def caught_up():
                d = describe(ctl, b.bootstrap)
                got = {p["partition"]: p["mirrored_end_offset"] for t in (d or {}).get("mirror_topics", [])
                       for p in t["partitions"]}
                return all(got.get(p, -1) >= want[p] for p in range(args.partitions))
            wait_until(caught_up, 600, "the mirror to catch up")
            took = time.monotonic() - t0
            cpu = cpu_seconds(b.pid) - cpu0
            print(f"mirror: {size / 1e6 / took:.1f} MB/s ({total / took:.0f} records/s) copied in {took:.1f} s "
                  f"(including up to 0.5 s until the mirror topic exists); destination CPU "
                  f"{cpu / (size / 1e9):.2f} s per GB")

            rate = produced["records_per_s"] / 2
            samples, stop = [], threading.Event()

            def sample():
                while not stop.is_set():
                    d = describe(ctl, b.bootstrap)
                    if d:
                        lags = [p["lag_ms"] for t in d["mirror_topics"] for p in t["partitions"]]
                        if lags:
                            samples.append(max(lags))
                    time.sleep(0.1)
            th = threading.Thread(target=sample)
            th.start()
            half = load(tool, a.bootstrap, args.seconds, args.partitions, rate=int(rate))
            stop.set()
            th.join()
            samples.sort()
            p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
            print(f"recovery point at {half['records_per_s']:.0f} records/s ({half['mb_per_s']:.1f} MB/s, half of the "
                  f"maximum): time behind p50 {statistics.median(samples):.0f} ms, p99 {p99:.0f} ms, max {samples[-1]:.0f} ms "
                  f"({len(samples)} samples)")
        finally:
            a.kill()
            b.kill()


if __name__ == "__main__":
    main()
