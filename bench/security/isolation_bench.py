#!/usr/bin/python3
"""Isolation between teams on one node: team B produces at a modest rate (acks=all) and its
latency is measured alone, then while team A floods the node as fast as its client can go,
first at A's byte quota (producer_byte_rate on A's client id), then at a quota on the
reactor time of its requests (request_percentage), and then with no quota at all.

    bench/security/isolation_bench.py --brokerd build/src/app/brokerd [--seconds 10]
        [--b-rate 500] [--a-quota 20000000] [--a-request-percentage 20]

Prints B's p50/p99/p999 produce latency per phase, the ratio of B's p99 to its solo p99,
and A's acknowledged rate. Each team writes its own topic. Not a test: run it by hand.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

from brokerd_harness import Broker, brokerctl_binary  # noqa: E402

RECORD = 1000

TEAM_B = r'''
import json, sys, time
from confluent_kafka import Producer
bootstrap, seconds, rate = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "client.id": "team-b", "acks": "all", "linger.ms": 0})
lat = []
def done(err, msg, sent):
    if err is None: lat.append(time.perf_counter() - sent)
start = time.perf_counter()
n = 0
while time.perf_counter() - start < seconds:
    due = start + n / rate
    while time.perf_counter() < due: p.poll(0.0005)
    sent = time.perf_counter()
    p.produce("team-b", value=b"b" * 1000, on_delivery=lambda e, m, s=sent: done(e, m, s))
    p.poll(0)
    n += 1
p.flush(30)
lat.sort()
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1000 if lat else float("nan")
print(json.dumps({"n": len(lat), "p50": q(0.5), "p99": q(0.99), "p999": q(0.999)}))
'''

TEAM_A = r'''
import sys, time
from confluent_kafka import Producer
bootstrap, seconds, measure_from = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "client.id": "team-a", "acks": "1", "linger.ms": 5,
              "batch.size": 65536, "queue.buffering.max.kbytes": 65536})
acked = [0]
start = time.perf_counter()
def done(err, msg):
    if err is None and measure_from <= time.perf_counter() - start < seconds: acked[0] += len(msg.value())
value = b"a" * 1000
while time.perf_counter() - start < seconds:
    try:
        p.produce("team-a", value=value, on_delivery=done)
    except BufferError:
        p.poll(0.005)
    p.poll(0)
p.flush(0)  # what is still queued is not waited for: its acknowledgements would come late
print(acked[0] / (seconds - measure_from))
'''


def ctl(broker, *args):
    r = subprocess.run([brokerctl_binary(), "--bootstrap-server", broker.bootstrap] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)


def phase(broker, seconds, b_rate, flood, warmup=1.0):
    a = None
    if flood:
        # A floods from `warmup` seconds before B starts (long enough to spend the burst its
        # quota's window allows) to after B ends; its rate is measured while B runs.
        a = subprocess.Popen(["/usr/bin/python3", "-c", TEAM_A, broker.bootstrap, str(warmup + seconds),
                              str(warmup)], stdout=subprocess.PIPE, text=True)
        time.sleep(warmup)
    b = subprocess.run(["/usr/bin/python3", "-c", TEAM_B, broker.bootstrap, str(seconds), str(b_rate)],
                       capture_output=True, text=True, timeout=seconds + 60)
    out = json.loads(b.stdout.strip().splitlines()[-1])
    if a:
        a_rate = float(a.communicate(timeout=seconds + 60)[0].strip().splitlines()[-1])
        out["a_rate"] = a_rate
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--b-rate", type=int, default=500, help="team B's records per second (1 KB each)")
    ap.add_argument("--a-quota", type=int, default=20_000_000, help="team A's producer_byte_rate")
    ap.add_argument("--a-request-percentage", type=float, default=20,
                    help="team A's request_percentage (share of one reactor thread, in percent)")
    args = ap.parse_args()
    import os
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        broker = Broker(Path(tmp) / "node")
        broker.start()
        try:
            ctl(broker, "topics", "create", "team-a", "--partitions", 1, "--replication-factor", 1)
            ctl(broker, "topics", "create", "team-b", "--partitions", 1, "--replication-factor", 1)
            solo = phase(broker, args.seconds, args.b_rate, flood=False)
            ctl(broker, "quotas", "alter", "--client-id", "team-a", "--set", f"producer_byte_rate={args.a_quota}")
            time.sleep(1)
            at_quota = phase(broker, args.seconds, args.b_rate, flood=True, warmup=13.0)
            ctl(broker, "quotas", "alter", "--client-id", "team-a", "--delete", "producer_byte_rate",
                "--set", f"request_percentage={args.a_request_percentage:g}")
            time.sleep(1)
            at_time_quota = phase(broker, args.seconds, args.b_rate, flood=True, warmup=13.0)
            ctl(broker, "quotas", "alter", "--client-id", "team-a", "--delete", "request_percentage")
            time.sleep(1)
            unlimited = phase(broker, args.seconds, args.b_rate, flood=True)
        finally:
            broker.kill()
    print(f"team B: {args.b_rate} records/s of {RECORD} B, acks=all, {args.seconds:.0f} s per phase; "
          "A's rate measured while B runs (after 13 s of flooding at the quota: its burst is spent)")
    print(f"{'phase':<44}{'p50 ms':>8}{'p99 ms':>8}{'p999 ms':>9}{'p99/solo':>10}{'A MB/s':>9}")
    for name, r in (("B alone", solo), (f"A flooding at its quota ({args.a_quota / 1e6:.0f} MB/s)", at_quota),
                    (f"A flooding at request_percentage={args.a_request_percentage:g}", at_time_quota),
                    ("A flooding with no quota", unlimited)):
        a = f"{r['a_rate'] / 1e6:9.1f}" if "a_rate" in r else f"{'-':>9}"
        print(f"{name:<44}{r['p50']:8.2f}{r['p99']:8.2f}{r['p999']:9.2f}{r['p99'] / solo['p99']:10.2f}{a}")


if __name__ == "__main__":
    main()
