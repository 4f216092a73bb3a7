#!/usr/bin/python3
"""Controller failover as an operator's tools see it, on three local voters in three racks
with the shipped defaults. Each round asks an admin client (made before the kill, and
bootstrapped from the quorum's leader alone, so the leader is the node it knows best) to
list the cluster, kills the leader (kill -9), and times three things from the kill:

  election   a surviving voter names a new leader (DescribeQuorum through brokerctl)
  admin      the admin client's CreateTopics succeeds (forwarded to the new controller)
  fenced     the dead broker drops out of Metadata (its session timed out)

Then the victim restarts and the next round waits until every broker is listed again.

    bench/cluster/controller_failover_bench.py --brokerd build/src/app/brokerd [--kills 10] [--keep DIR]

Prints one line per kill, then the median and worst of each. Not a test: run it by hand
(about ten seconds per kill).
"""
import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "utils"))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from cluster_harness import QuorumCluster  # noqa: E402
from waiting import wait_until  # noqa: E402

RACKS = {1: "zone-a", 2: "zone-b", 3: "zone-c"}


def listed_brokers(bootstrap):
    try:
        return sorted(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=5).brokers)
    except Exception:  # noqa: BLE001 - a node may be starting
        return None


def one_kill(cluster, round_no):
    leader, _ = cluster.wait_for_leader()
    admin = AdminClient({"bootstrap.servers": cluster.nodes[leader].bootstrap})
    admin.list_topics(timeout=10)
    others = [i for i in cluster.nodes if i != leader]
    seen = {}

    def watch_election():
        # The first DescribeQuorum after the kill that names another leader (an upper bound).
        try:
            seen["elected"] = (cluster.wait_for_leader(among=others, excluding=(leader,), timeout=30), time.monotonic())
        except TimeoutError:
            pass

    def watch_fencing():
        # Another node's Metadata stops listing the victim once its session timed out.
        try:
            seen["fenced"] = wait_until(lambda: listed_brokers(cluster.nodes[others[0]].bootstrap) == others, 30,
                                        "fencing", interval=0.02)
        except AssertionError:
            pass

    cluster.nodes[leader].kill()
    t0 = time.monotonic()
    watchers = [threading.Thread(target=fn, daemon=True) for fn in (watch_election, watch_fencing)]
    for w in watchers:
        w.start()
    name = f"after-kill-{round_no}"
    f = admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=2)],
                            operation_timeout=30, request_timeout=30)
    f[name].result(timeout=40)
    admin_s = time.monotonic() - t0
    for w in watchers:
        w.join(35)
    nan = float("nan")
    successor, election_s = (seen["elected"][0][0], seen["elected"][1] - t0) if "elected" in seen else (None, nan)
    fenced_s = seen["fenced"] - t0 if "fenced" in seen else nan
    cluster.restart(leader)
    wait_until(lambda: listed_brokers(cluster.nodes[others[0]].bootstrap) == sorted(cluster.nodes), 30, "rejoin")
    return leader, successor, election_s, admin_s, fenced_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokerd", required=True)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--keep", metavar="DIR", help="run in DIR and keep the nodes' data and logs there")
    args = ap.parse_args()
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())  # brokerctl is found beside it

    with (contextlib.nullcontext(args.keep) if args.keep else
          tempfile.TemporaryDirectory(prefix="brokerd-controller-failover-")) as tmp:
        Path(tmp).mkdir(parents=True, exist_ok=True)
        cluster = QuorumCluster(Path(tmp), per_node={i: {"broker.rack": r} for i, r in RACKS.items()})
        elections, admin_times, fenced_times = [], [], []
        try:
            cluster.start()
            wait_until(lambda: listed_brokers(cluster.bootstrap()) == [1, 2, 3], 30, "three brokers")
            for k in range(1, args.kills + 1):
                victim, successor, election_s, admin_s, fenced_s = one_kill(cluster, k)
                elections.append(election_s)
                admin_times.append(admin_s)
                fenced_times.append(fenced_s)
                print(f"kill {k}: controller {victim} -> {successor} after {election_s:.2f}s; CreateTopics answered "
                      f"after {admin_s:.2f}s; broker {victim} fenced after {fenced_s:.2f}s", flush=True)
        finally:
            cluster.tear_down()

    def line(what, xs):
        xs = [x for x in xs if x == x]  # without NaN (not seen)
        if xs:
            print(f"{what}: median {statistics.median(xs):.2f}s, worst {max(xs):.2f}s, best {min(xs):.2f}s "
                  f"({len(xs)} kills)")

    line("a new controller named", elections)
    line("CreateTopics through an admin client made before the kill", admin_times)
    line("the dead controller's broker fenced", fenced_times)


if __name__ == "__main__":
    main()
