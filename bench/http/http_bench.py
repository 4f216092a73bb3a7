#!/usr/bin/python3
"""The /v1 HTTP API against the Kafka protocol on one node: a fresh single node with an
http listener, a topic of 6 partitions, 1 KB records with keys, acks=all.

Rounds alternate (--rounds of each, --duration s): brokerd-load (librdkafka, 4 producers,
linger 5 ms, batch.size 1 MB) and brokerd-http-load (4 keep-alive connections POSTing 1,000
records each). For every round: records/s, MB/s and the broker's CPU seconds per GB of record
values (utime+stime of the brokerd process, /proc/PID/stat, over the round). Then reads of
what was written: brokerd-load consumers from the beginning against brokerd-http-load reads
(1 MiB per request), and the latency of single-record POSTs at a paced 500/s. Prints the
medians and the ratios HTTP/Kafka.

    bench/http/http_bench.py --brokerd build/src/app/brokerd --load build/bench/loadgen/brokerd-load \
        --http-load build/bench/http/brokerd-http-load [--rounds 3] [--duration 15]

Not a test: run it by hand. The node it starts is killed by pid at the end.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

from brokerd_harness import free_port  # noqa: E402

TOPIC = "http-bench"
SIZE = 1024


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(cmd, timeout):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {proc.stderr[-2000:]}")
    return proc.stdout


def kafka_round(args, bootstrap, mode):
    out = run([args.load, "--bootstrap", bootstrap, "--topic", TOPIC, "--mode", mode, "--producers", "4",
               "--consumers", "2", "--record-size", str(SIZE), "--keys", "1000", "--acks", "all",
               "--duration", str(args.duration), "--linger-ms", "5", "--batch-size", str(1 << 20), "--quiet",
               "--json"] + (["--from-beginning"] if mode == "consume" else []), args.duration + 120)
    import json
    figures = json.loads(out.strip().splitlines()[-1])
    part = figures["produce" if mode == "produce" else "consume"]
    return part["records"] / max(part.get("seconds", args.duration), 1e-9), part["records"]


def http_round(args, url, mode, rate=0):
    cmd = [args.http_load, "--url", url, "--topic", TOPIC, "--mode", mode, "--connections", "4",
           "--batch", "1000", "--size", str(SIZE), "--duration", str(args.duration)]
    if rate:
        cmd += ["--rate", str(rate), "--connections", "2"]
    out = run(cmd, args.duration + 120)
    m = re.search(r"(\d+) records/s ([\d.]+) MB/s .* p50 ([\d.]+) p99 ([\d.]+) p999 ([\d.]+) ms", out)
    return float(m.group(1)), out.strip()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--brokerd", required=True)
    p.add_argument("--load", required=True)
    p.add_argument("--http-load", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=float, default=15)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="http-bench-"))
    port, cport, hport = free_port(), free_port(), free_port()
    node = subprocess.Popen([args.brokerd, "--override", f"log.dirs={work}/data",
                             "--override", f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
                             "--override", f"http.listeners=http://127.0.0.1:{hport}", "--override", "metrics.listener=",
                             "--override", "log.retention.bytes=1073741824", "--override", "log.segment.bytes=134217728"],
                            stdout=open(work / "brokerd.log", "w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{hport}"
    bootstrap = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                req = urllib.request.Request(f"{url}/v1/topics", method="POST",
                                             data=f'{{"name": "{TOPIC}", "partitions": 6, "copies": 1}}'.encode())
                urllib.request.urlopen(req, timeout=10).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        figures = {"kafka": [], "http": []}
        for r in range(args.rounds + 1):  # the first pair warms up
            for kind in ("kafka", "http"):
                c0 = cpu_seconds(node.pid)
                if kind == "kafka":
                    rate, records = kafka_round(args, bootstrap, "produce")
                    line = f"{rate:,.0f} records/s"
                else:
                    rate, line = http_round(args, url, "produce")
                cpu = cpu_seconds(node.pid) - c0
                gb = rate * args.duration * SIZE / 1e9
                cpu_per_gb = cpu / gb if gb else float("nan")
                tag = "warm-up" if r == 0 else f"round {r}"
                print(f"{tag} {kind:5} produce {rate:>10,.0f} records/s {rate * SIZE / 1e6:7.1f} MB/s  "
                      f"brokerd {cpu_per_gb:.2f} CPU s/GB   [{line}]", flush=True)
                if r:
                    figures[kind].append((rate, cpu_per_gb))
        k = statistics.median(x for x, _ in figures["kafka"])
        h = statistics.median(x for x, _ in figures["http"])
        kc = statistics.median(c for _, c in figures["kafka"])
        hc = statistics.median(c for _, c in figures["http"])
        print(f"produce medians: kafka {k:,.0f} records/s ({kc:.2f} CPU s/GB), http {h:,.0f} records/s "
              f"({hc:.2f} CPU s/GB); ratio http/kafka {h / k:.2f}")
        c0 = cpu_seconds(node.pid)
        hr, line = http_round(args, url, "read")
        hcpu = cpu_seconds(node.pid) - c0
        print(f"http read {hr:,.0f} records/s, brokerd {hcpu / (hr * args.duration * SIZE / 1e9):.2f} CPU s/GB [{line}]")
        c0 = cpu_seconds(node.pid)
        kr, _ = kafka_round(args, bootstrap, "consume")
        kcpu = cpu_seconds(node.pid) - c0
        print(f"kafka read {kr:,.0f} records/s, brokerd {kcpu / (kr * args.duration * SIZE / 1e9):.2f} CPU s/GB; "
              f"ratio http/kafka {hr / kr:.2f}")
        _, line = http_round(args, url, "produce", rate=500)
        print(f"paced single-record POSTs: {line}")
    finally:
        node.kill()
        node.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
