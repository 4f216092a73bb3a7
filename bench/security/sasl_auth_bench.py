#!/usr/bin/python3
"""The broker's cost of authenticating a connection: N fresh connections each run ApiVersions
and a SASL exchange (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) against one node, one after
another; prints connections per second and the broker's CPU microseconds per authentication
(from /proc), with PLAINTEXT connections (ApiVersions only) as the baseline.

    bench/security/sasl_auth_bench.py --brokerd build/src/app/brokerd [--connections 2000]

The client side of SCRAM (PBKDF2 over the iterations) runs in this process and is excluded
from the broker's figure; it is computed once per mechanism, as a client library caches it.
Not a test: run it by hand.
"""
import argparse
import base64
import hashlib
import hmac
import os
import secrets
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

import kafka_wire as kw  # noqa: E402
from brokerd_harness import Broker, brokerctl_binary, free_port  # noqa: E402

PASSWORD = "bench-secret"
ITERATIONS = 4096


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def authenticate(conn, token):
    r = conn.request(36, 1, kw.nbytes(token))
    error, message, answer = r.i16(), r.string(), r.nbytes()
    if error:
        raise SystemExit(f"authentication refused: {error} {message}")
    return answer


def scram(conn, digest, salted):
    nonce = base64.b64encode(secrets.token_bytes(24)).decode()
    first_bare = f"n=bench,r={nonce}"
    server_first = authenticate(conn, ("n,," + first_bare).encode()).decode()
    attrs = dict(kv.split("=", 1) for kv in server_first.split(","))
    without_proof = f"c=biws,r={attrs['r']}"
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    client_key = hmac.new(salted[attrs["s"]], b"Client Key", digest).digest()
    signature = hmac.new(digest(client_key).digest(), auth_message, digest).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    authenticate(conn, f"{without_proof},p={base64.b64encode(proof).decode()}".encode())


def run(broker, port, mechanism, n):
    digest = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
    salted = {}  # salt (base64) -> salted password, as a client caches it

    class Cache(dict):
        def __missing__(self, salt_b64):
            v = hashlib.pbkdf2_hmac(digest().name, PASSWORD.encode(), base64.b64decode(salt_b64), ITERATIONS)
            self[salt_b64] = v
            return v

    salted = Cache()
    cpu0, t0 = cpu_seconds(broker.pid), time.monotonic()
    for _ in range(n):
        with kw.Connection(port) as c:
            kw.api_versions(c)
            if mechanism is None:
                continue
            r = c.request(17, 1, kw.string(mechanism))
            if r.i16():
                raise SystemExit(f"{mechanism} not offered")
            if mechanism == "PLAIN":
                authenticate(c, b"\0bench\0" + PASSWORD.encode())
            else:
                scram(c, digest, salted)
    wall, cpu = time.monotonic() - t0, cpu_seconds(broker.pid) - cpu0
    return n / wall, cpu / n * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--connections", type=int, default=2000)
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        sasl_port = free_port()
        b = Broker(tmp, overrides={
            "listeners": f"PLAINTEXT://127.0.0.1:{{port}},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                f'x required user_bench="{PASSWORD}";',
        })
        b.overrides["listeners"] = b.overrides["listeners"].replace("{port}", str(b.port))
        b.start()
        try:
            for m in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                subprocess.run([brokerctl_binary(), "--bootstrap-server", b.bootstrap, "users", "create", "bench",
                                "--mechanism", m, "--password", PASSWORD, "--iterations", str(ITERATIONS)],
                               check=True, capture_output=True, timeout=30)
            print(f"{'connection':<16}{'conn/s':>10}{'broker CPU us/conn':>22}")
            for label, port, m in (("PLAINTEXT", b.port, None), ("PLAIN", sasl_port, "PLAIN"),
                                   ("SCRAM-SHA-256", sasl_port, "SCRAM-SHA-256"),
                                   ("SCRAM-SHA-512", sasl_port, "SCRAM-SHA-512")):
                rate, cpu_us = run(b, port, m, args.connections)
                print(f"{label:<16}{rate:>10.0f}{cpu_us:>22.1f}")
        finally:
            b.kill()


if __name__ == "__main__":
    main()
