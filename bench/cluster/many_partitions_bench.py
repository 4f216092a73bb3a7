#!/usr/bin/python3
"""Requests that span many partitions, on one node holding N topics of P partitions (default
4,000 x 5 = 20,000, one consumer's whole assignment): the time of one request and per
partition, with request and response sizes, for

  - Metadata of every topic,
  - ListOffsets (latest) of every partition,
  - Produce of one small batch to each of 1,000 partitions (acks=1),
  - Fetch of every partition with nothing new: a full fetch (no session) against an
    incremental fetch of a session holding them all (KIP-227).

    bench/cluster/many_partitions_bench.py --brokerd build/src/app/brokerd [--topics 4000]
        [--partitions 5] [--rounds 20]

Requests are encoded before the clock starts; a round trip is from the first byte sent to
the last byte received, on loopback. Prints one line per figure. Not a test: run it by hand.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

import kafka_wire as kw  # noqa: E402
from clients import create_topics_in_batches  # noqa: E402


def round_trip(conn, api_key, version, body):
    frame = conn.header(api_key, version) + body
    t0 = time.perf_counter()
    conn.send_frame(frame)
    resp = conn.recv_frame()
    return time.perf_counter() - t0, len(frame) + 4, len(resp) + 4


def measure(name, conn, api_key, version, bodies, partitions):
    """bodies: one request body per round (or a callable giving the body of round i)."""
    times, sent, got = [], 0, 0
    for body in bodies:
        t, sent, got = round_trip(conn, api_key, version, body)
        times.append(t * 1000)
    times.sort()
    med = statistics.median(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{name}: {partitions} partitions, median {med:.1f} ms, p99 {p99:.1f} ms "
          f"({med * 1000 / partitions:.2f} us per partition), request {sent / 1024:.0f} KiB, "
          f"response {got / 1024:.0f} KiB")


def fetch_body(session_id, epoch, topics, partitions):
    """Fetch v11, every partition at offset 0 (nothing to read: the topics are empty)."""
    part = kw.i32(-1)  # current leader epoch
    per_topic = lambda t: kw.string(t) + kw.array(list(range(partitions)), lambda p: (
        kw.i32(p) + part + kw.i64(0) + kw.i64(-1) + kw.i32(1 << 20)))
    return (kw.i32(-1) + kw.i32(0) + kw.i32(0) + kw.i32(50 << 20) + kw.i8(0) + kw.i32(session_id) + kw.i32(epoch) +
            kw.array(topics, per_topic) + kw.array([], None) + kw.string(""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--topics", type=int, default=4000)
    ap.add_argument("--partitions", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    from brokerd_harness import Broker

    work = Path(tempfile.mkdtemp(prefix="brokerd-many-partitions-bench-"))
    broker = Broker(work / "node", overrides={"offsets.topic.num.partitions": "1", "log.cleaner.enable": "false"})
    broker.start()
    try:
        names = [f"m{i:05d}" for i in range(args.topics)]
        t0 = time.monotonic()
        create_topics_in_batches(broker.bootstrap, names, args.partitions)
        total = args.topics * args.partitions
        print(f"created {args.topics} topics x {args.partitions} partitions in {time.monotonic() - t0:.1f} s")
        rounds = args.rounds
        with kw.Connection(broker.port, timeout=120) as conn:
            measure("metadata (all topics, v1)", conn, kw.API_METADATA, 1, [kw.i32(-1)] * rounds, total)

            lo = kw.i32(-1) + kw.array(names, lambda t: kw.string(t) + kw.array(
                list(range(args.partitions)), lambda p: kw.i32(p) + kw.i64(kw.LATEST)))
            measure("list offsets (latest, v1)", conn, kw.API_LIST_OFFSETS, 1, [lo] * rounds, total)

            batch = kw.record_batch([(b"k", b"v" * 100)])
            # Every partition of the first topics (a quarter of them at most, so that the rest
            # stay empty for the fetches below).
            targets = [(names[i // args.partitions], i % args.partitions) for i in range(min(1000, total // 4))]
            by_topic = {}
            for t, p in targets:
                by_topic.setdefault(t, []).append(p)
            produce = kw.string(None) + kw.i16(1) + kw.i32(30000) + kw.array(
                list(by_topic.items()), lambda tp: kw.string(tp[0]) + kw.array(tp[1], lambda p: kw.i32(p) + kw.nbytes(batch)))
            measure("produce (1 batch each, acks=1, v3)", conn, kw.API_PRODUCE, 3, [produce] * rounds, len(targets))

            # Fetch at each partition's end: nothing new anywhere.
            empty = [n for n in names if n not in by_topic]
            full = fetch_body(0, -1, empty, args.partitions)
            measure("fetch, full, nothing new (v11)", conn, kw.API_FETCH, 11, [full] * rounds, len(empty) * args.partitions)
            # The session id is in the answer (after correlation id, throttle and error code).
            conn.send_frame(conn.header(kw.API_FETCH, 11) + fetch_body(0, 0, empty, args.partitions))
            r = kw.Reader(conn.recv_frame())
            r.i32(), r.i32(), r.i16()
            session = r.i32()
            assert session != 0, "the node gave no fetch session"
            bodies = [fetch_body(session, epoch, [], args.partitions) for epoch in range(1, rounds + 1)]
            measure("fetch, incremental session, nothing new (v11)", conn, kw.API_FETCH, 11, bodies,
                    len(empty) * args.partitions)
        broker.stop(timeout=300)
    finally:
        broker.kill()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
