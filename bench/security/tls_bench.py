#!/usr/bin/python3
"""What TLS costs: brokerd-load produces and consumes 1 KB records as fast as it can against
one node, over its PLAINTEXT listener and then its SSL listener (TLS 1.3, ECDSA P-256, the
suite OpenSSL picks), alternating for --rounds rounds; prints each run's produce and consume
MB/s, p99 produce latency and the broker's CPU seconds per GB moved (produced + consumed),
then the medians and the SSL/PLAINTEXT ratios. Also times fresh TLS handshakes (connections
per second, broker CPU per handshake).

    bench/security/tls_bench.py --brokerd build/src/app/brokerd --load build/bench/loadgen/brokerd-load

The client encrypts and decrypts too, on the same cores: on a small machine the ratio is the
client's as much as the broker's; the CPU per GB is the broker's alone. Not a test.
"""
import argparse
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "utils"))

from brokerd_harness import Broker, free_port  # noqa: E402
from pki import Authority  # noqa: E402


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_run(args, broker, bootstrap, topic, props):
    cmd = [args.load, "--workload", str(ROOT / "bench" / "workloads" / "1kb-6p-max.yaml"), "--bootstrap", bootstrap,
           "--topic", topic, "--duration", str(args.duration), "--warmup", "2", "--json", "--quiet",
           "--from-beginning", "--drain", "20"]
    for k, v in props.items():
        cmd += ["--client-prop", f"{k}={v}"]
    cpu0 = cpu_seconds(broker.pid)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 120)
    cpu = cpu_seconds(broker.pid) - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"brokerd-load failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    produced = out["produce"]["bytes"]
    consumed = out["consume"]["bytes"]
    return {"produce_mb_s": out["produce"]["mb_per_s"], "consume_mb_s": out["consume"]["mb_per_s"],
            "p99_ms": out["produce"]["latency_ms"]["p99"],
            "cpu_s_per_gb": cpu / max((produced + consumed) / 1e9, 1e-9)}


def handshakes(broker, port, ca_file, n):
    ctx = ssl.create_default_context(cafile=str(ca_file))
    cpu0, t0 = cpu_seconds(broker.pid), time.monotonic()
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1"):
                pass
    wall, cpu = time.monotonic() - t0, cpu_seconds(broker.pid) - cpu0
    return n / wall, cpu / n * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brokerd", default=str(ROOT / "build" / "src" / "app" / "brokerd"))
    ap.add_argument("--load", default=str(ROOT / "build" / "bench" / "loadgen" / "brokerd-load"))
    ap.add_argument("--duration", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--handshakes", type=int, default=500)
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = args.brokerd

    with tempfile.TemporaryDirectory(prefix="tls-bench-") as tmp:
        ca = Authority(Path(tmp) / "pki")
        server = ca.issue("server", "127.0.0.1", server=True)
        ssl_port = free_port()
        broker = Broker(Path(tmp) / "node")
        broker.overrides.update({"listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SSL://127.0.0.1:{ssl_port}",
                                 "ssl.keystore.location": str(server["pem"])})
        broker.start()
        try:
            tls_props = {"security.protocol": "SSL", "ssl.ca.location": str(ca.ca_file)}
            results = {"PLAINTEXT": [], "SSL": []}
            for r in range(args.rounds):
                for name, bootstrap, props in (("PLAINTEXT", broker.bootstrap, {}),
                                               ("SSL", f"127.0.0.1:{ssl_port}", tls_props)):
                    res = load_run(args, broker, bootstrap, f"tls-bench-{name.lower()}-{r}", props)
                    results[name].append(res)
                    print(f"round {r + 1} {name:9}: produce {res['produce_mb_s']:7.1f} MB/s, consume "
                          f"{res['consume_mb_s']:7.1f} MB/s, produce p99 {res['p99_ms']:7.1f} ms, broker "
                          f"{res['cpu_s_per_gb']:5.2f} CPU s/GB", flush=True)
            med = {n: {k: statistics.median(x[k] for x in v) for k in v[0]} for n, v in results.items()}
            for n, m in med.items():
                print(f"median {n:9}: produce {m['produce_mb_s']:7.1f} MB/s, consume {m['consume_mb_s']:7.1f} MB/s, "
                      f"p99 {m['p99_ms']:7.1f} ms, {m['cpu_s_per_gb']:5.2f} CPU s/GB")
            p, s = med["PLAINTEXT"], med["SSL"]
            print(f"SSL/PLAINTEXT: produce {s['produce_mb_s'] / p['produce_mb_s']:.2f}x, consume "
                  f"{s['consume_mb_s'] / p['consume_mb_s']:.2f}x, broker CPU per GB "
                  f"{s['cpu_s_per_gb'] / p['cpu_s_per_gb']:.2f}x")
            rate, us = handshakes(broker, ssl_port, ca.ca_file, args.handshakes)
            print(f"TLS handshakes: {rate:.0f}/s one after another, broker {us:.0f} CPU us each")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
