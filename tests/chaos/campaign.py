#!/usr/bin/python3
"""A fault campaign against a real brokerd cluster on this machine.

  campaign.py --brokerd PATH --nodes 3|5 --duration SECONDS --seed N \
              --nemesis kill,pause,restart-all,rolling-restart \
              --workload idempotent,acks-all,acks1,acks0,group,admin,compacted,retention,transactional,http --out DIR

Starts the nodes (each in its own rack; RF 3, min.insync.replicas 2), runs the workloads
against one topic (the compacted and retention workloads against topics of their own:
kept_workloads.py; the transactional one against three: txn_workload.py), injects faults on the seed's schedule while watching for nodes that die on
their own (crashes.py), heals everything, lets the cluster settle, requires every replica back
in its ISR, reads every partition back and checks the history (checker.py). Writes
DIR/history.jsonl (every operation), DIR/summary.json, DIR/report.md and keeps every node's
logs under DIR/nodes. Exits 0 when no anomaly was found, 1 when one was, 2 when the campaign
itself could not run. Every process it starts is stopped by pid before it exits.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "utils"))

import checker  # noqa: E402
import http_workload as http_load  # noqa: E402
import kept_workloads as kept  # noqa: E402
import replicas  # noqa: E402
import report  # noqa: E402
import txn_workload as txn  # noqa: E402
from admin_workload import AdminWorkload, check_admin, describe_admin_topics  # noqa: E402
from crashes import CrashWatch  # noqa: E402
from nemesis import NEMESES, Nemesis  # noqa: E402
from workloads import PROMISES, WORKLOADS, GroupConsumers, Recorder, Tailer, make_writer  # noqa: E402

TOPIC = "chaos"
RACKS = ("zone-a", "zone-b", "zone-c")
SESSION_TIMEOUT_MS = 3000


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--brokerd", required=True, help="the brokerd binary")
    p.add_argument("--nodes", type=int, choices=(3, 5), default=3)
    p.add_argument("--duration", type=float, default=120.0, help="seconds of faults")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--nemesis", default="kill,pause", help=f"any of {','.join(NEMESES)}")
    p.add_argument("--workload", default="idempotent,acks1",
                   help=f"any of {','.join(WORKLOADS + kept.KEPT_WORKLOADS + ('transactional',))}")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--rate", type=float, default=200.0, help="records/s of each writer")
    p.add_argument("--out", required=True)
    p.add_argument("--disk-mb", type=int, default=1024,
                   help="with the full-disk nemesis: the size of each node's file system (a tmpfs)")
    p.add_argument("--broker-config", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra setting for every node (repeatable)")
    p.add_argument("--expect-anomaly", metavar="NAME[/NAME...]",
                   help="succeed only if the check finds this anomaly, or one of these (for brokers built to misbehave)")
    p.add_argument("--settle-timeout", type=float, default=90.0,
                   help="seconds the healed cluster has to bring every replica back into its ISR")
    p.add_argument("--attempts", type=int, default=1,
                   help="with --expect-anomaly: campaigns to run, from --seed on, until one finds it")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not args.expect_anomaly:
        return run(args)
    # A broker built to misbehave: the seed fixes the faults, not the timing of what they hit,
    # so the next seeds are tried (each in a folder of its own) until the anomaly shows.
    out = args.out
    for attempt in range(args.attempts):
        args.out = out if attempt == 0 else f"{out}.seed{args.seed}"
        rc = run(args)
        if rc != 1:
            return rc
        args.seed += 1
    return 1


def bounded(what, fn, seconds, log):
    """Runs fn() in a thread of its own for at most `seconds`. A client library can hang in its
    own shutdown (librdkafka 2.0.2 waiting forever on a broker thread once the cluster forgot
    the topic it wrote to): the campaign logs it, leaves that client behind and goes on."""
    import threading
    t = threading.Thread(target=fn, name=f"stop-{what}", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        log(f"{what} did not stop within {seconds:.0f}s; left behind")


def run(args):
    os.environ["BROKERD_BIN"] = str(Path(args.brokerd).resolve())
    from brokerd_harness import free_port
    from cluster_harness import QuorumCluster  # reads BROKERD_BIN

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "nodes", ignore_errors=True)  # an earlier campaign's nodes, in the same folder
    log_file = open(out / "campaign.log", "w")

    def log(msg):
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    overrides = {"min.insync.replicas": "2", "default.replication.factor": "3",
                 "offsets.topic.replication.factor": "3", "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
                 "auto.create.topics.enable": "false"}
    workloads = [k for k in args.workload.split(",") if k]
    kept_kinds = [k for k in workloads if k in kept.KEPT_WORKLOADS]
    for k in kept_kinds:
        overrides.update(kept.BROKER_SETTINGS[k])
    # The campaign's topics: every replica of each must be back in its ISR after the faults.
    topics = [TOPIC] + [kept.TOPIC_OF[k] for k in kept_kinds]
    if "http" in workloads:
        overrides.update(http_load.BROKER_SETTINGS)
    transactional = "transactional" in workloads
    if transactional:
        overrides.update(txn.BROKER_SETTINGS)
        topics += list(txn.TOPICS)
    for kv in args.broker_config:
        k, _, v = kv.partition("=")
        overrides[k] = v
    per_node = {i: {"broker.rack": RACKS[(i - 1) % len(RACKS)]} for i in range(1, args.nodes + 1)}
    kinds = [k for k in args.nemesis.split(",") if k]
    if "partition" in kinds:
        import netns
        if not netns.available():
            print("the partition nemesis needs root and iproute2 (network namespaces)", file=sys.stderr)
            return 2
        cluster = netns.NetnsCluster(out / "nodes", voters=args.nodes, overrides=overrides, per_node=per_node)
    else:
        cluster = QuorumCluster(out / "nodes", voters=args.nodes, overrides=overrides, per_node=per_node)
    http_addresses = http_load.listen(cluster, free_port) if "http" in workloads else {}
    mounts = []
    if "full-disk" in kinds:
        # Each node's data directory on a file system of its own that the nemesis can fill.
        for n in cluster.nodes.values():
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.disk_mb}m", "tmpfs", str(n.data_dir)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"the full-disk nemesis needs root to mount a tmpfs: {r.stderr.strip()}", file=sys.stderr)
                unmount(mounts)
                return 2
            mounts.append(n.data_dir)
    # SIGTERM/SIGINT of the campaign still cleans up its nodes.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    recorder = Recorder(out / "history.jsonl")
    writers, kept_writers, tailer, nemesis, group, admin, sampler = [], [], None, None, None, None, None
    txn_load = None
    watch = CrashWatch(cluster, recorder, log)
    started = time.monotonic()
    try:
        cluster.start()
        watch.start()
        bootstrap = ",".join(n.bootstrap for n in cluster.nodes.values())
        def partitions_of(topic):
            if topic in txn.TOPICS:
                return txn.PARTITIONS
            return args.partitions if topic == TOPIC else kept.PARTITIONS

        for topic in topics:
            create_topic(bootstrap, partitions_of(topic), topic, kept.TOPIC_CONFIGS.get(topic))
        log(f"{args.nodes} nodes up, topics {', '.join(topics)} with {args.partitions} partitions (RF 3, min ISR 2)")

        def leader_of(r):
            return leaders(bootstrap).get(r % args.partitions)

        def settle(timeout=args.settle_timeout):
            t0 = time.monotonic()
            deadline = t0 + timeout
            while time.monotonic() < deadline:
                if all(in_sync(bootstrap, partitions_of(topic), 3, topic) for topic in topics):
                    return time.monotonic() - t0
                if time.monotonic() - t0 > 15 and topic_exists(bootstrap) is False:
                    log(f"topic {TOPIC} no longer exists")
                    return time.monotonic() - t0
                time.sleep(0.25)
            log(f"not every replica back in sync within {timeout}s")
            return time.monotonic() - t0

        for kind in workloads:
            kept_rate = min(args.rate, kept.MAX_RATE)
            if kind == "compacted":
                kept_writers.append(kept.CompactedWriter(recorder, kept_rate, bootstrap).start())
            elif kind == "retention":
                kept_writers.append(kept.RetainedWriters(recorder, kept_rate, bootstrap).start())
                sampler = kept.WatermarkSampler(recorder, cluster, kept.RETAINED, kept.PARTITIONS).start()
            elif kind == "admin":
                admin = AdminWorkload(recorder, bootstrap, random.Random(args.seed * 7919 + 2)).start()
            elif kind == "transactional":
                txn_load = txn.TransactionalWorkload(recorder, bootstrap, args.seed).start()
            elif kind == "http":
                writers.append(http_load.HttpWriter(recorder, TOPIC, args.rate, http_addresses, args.seed).start())
            elif kind == "group":
                group = GroupConsumers(recorder, TOPIC, bootstrap, random.Random(args.seed * 7919 + 1)).start()
            else:
                writers.append(make_writer(kind, recorder, TOPIC, args.rate, bootstrap).start())
        tailer = Tailer(recorder, TOPIC, args.partitions, bootstrap).start()
        time.sleep(3.0)

        def replicas_of(r):
            m = describe(bootstrap).get(r % args.partitions)
            return (m.leader, list(m.replicas), list(m.isrs)) if m is not None else (None, [], [])

        nemesis = Nemesis(cluster, recorder, kinds, args.seed, SESSION_TIMEOUT_MS / 1000.0, leader_of,
                          lambda: controller(cluster), settle, log,
                          racks={i: props["broker.rack"] for i, props in per_node.items()},
                          replicas_of=replicas_of, lag_s=int(overrides.get("replica.lag.time.max.ms", 10000)) / 1000.0,
                          coordinators=txn.Coordinators(cluster.nodes.values(), txn_load.commits)
                          if txn_load else None)
        nemesis.run(time.monotonic() + args.duration)
        log("healing")
        nemesis.heal_everything()
        settled = settle()
        log(f"settled after {settled:.1f}s; letting writes run 3s more")
        short_isr = {topic: not_in_sync(bootstrap, partitions_of(topic), 3, topic) for topic in topics}
        short_isr = {t: parts for t, parts in short_isr.items() if parts}
        time.sleep(3.0)
        for w in writers + kept_writers:
            bounded(f"writer {w.name}", lambda w=w: w.stop(flush_timeout=60.0), 90, log)
        if sampler:
            bounded("watermark sampler", sampler.stop, 30, log)
        bounded("tailer", tailer.stop, 30, log)
        if group:
            bounded("group", group.stop, 150, log)
            recorder.record({"type": "group-committed", "offsets": group.committed()})
        if admin:
            bounded("admin", admin.stop, 60, log)
        if txn_load:
            bounded("transactional", lambda: txn_load.stop(log), 420, log)
        final = read_back(bootstrap, args.partitions, log)
        txn_final = txn_load.final() if txn_load else None
        admin_final = describe_admin_topics(bootstrap) if admin else {}
        compacted_final = read_compacted(bootstrap, kept.PARTITIONS, cluster) if "compacted" in kept_kinds else None
        watch.stop()
        recorder.close()
        result = checker.check(recorder.events(), final, {w.name: PROMISES[w.name] for w in writers})
        if compacted_final is not None:
            result.update(kept.check_compacted(recorder.events(), *compacted_final))
        if txn_final is not None:
            result.update(txn.check(recorder.events(), txn_final))
        if "http" in workloads:
            result.update(http_load.check(recorder.events(), args.partitions))
        if "retention" in kept_kinds:
            result.update(kept.check_retained(recorder.events()))
            result["retention_samples"] = sampler.samples
        # A replica that never came back into its ISR is a copy the partition lost.
        result["isr_not_restored"] = short_isr
        result["crashed"] = watch.crashes
        if admin:
            result.update(check_admin(recorder.events(), admin_final))
            result["ok"] = result["ok"] and not any(result[k] for k in ("admin_lost", "admin_partitions", "admin_config"))
        ends = {p: (records[-1][0] + 1 if records else 0) for p, records in final.items()}
        compared = replicas.divergence({i: n.data_dir for i, n in cluster.nodes.items()}, TOPIC, args.partitions, ends)
        result["diverged"] = [c for c in compared if c["kind"] == "diverged"]
        result["behind"] = [c for c in compared if c["kind"] == "behind"]
        result["ok"] = result["ok"] and not result["diverged"]
        # A writer whose thread died stopped exercising the cluster: the campaign proves less.
        result["writers_crashed"] = {w.name: w.crashed for w in writers + kept_writers + ([admin] if admin else [])
                                     + ([txn_load] if txn_load else []) if w.crashed}
        result["ok"] = result["ok"] and not any(result.get(k) for k in checker.ANOMALIES)
    except KeyboardInterrupt:
        log("interrupted")
        return 2
    except Exception as e:  # the campaign itself failed: say so, keep the logs
        import traceback
        log(f"campaign could not finish: {type(e).__name__}: {e}\n{traceback.format_exc()}")
        return 2
    finally:
        cluster.resume_all()
        if hasattr(cluster, "cut"):
            cluster.tear_down()  # processes, then namespaces, links and bridge
        else:
            cluster.kill_all()
        unmount(mounts)
    # A sanitizer build's reports are anomalies too.
    result["sanitizer"] = [line for n in cluster.nodes.values() for line in n.sanitizer_reports()][:50]
    result["ok"] = result["ok"] and not result["sanitizer"]

    summary = {
        "seed": args.seed, "nodes": args.nodes, "duration_s": args.duration, "partitions": args.partitions,
        "nemesis": args.nemesis.split(","), "workload": args.workload.split(","),
        "wall_s": round(time.monotonic() - started, 1),
        "faults": len(nemesis.injected),
        "operations": recorder.counts,
        "unanswered": {w.name: w.unanswered for w in writers + kept_writers + ([txn_load] if txn_load else [])},
        "client_restarts": {w.name: getattr(w, "restarts", 0) for w in writers + ([txn_load] if txn_load else [])
                            if getattr(w, "restarts", 0)},
        "tailer_read": tailer.read,
        "ok": result["ok"],
        "anomalies": checker.named_anomalies(result),
        "result": result,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "report.md").write_text(report.markdown(summary, nemesis.injected))
    verdict = "ok" if result["ok"] else "ANOMALIES: " + ", ".join(summary["anomalies"])
    log(f"{verdict}; {summary['faults']} faults, {result['acknowledged']} acknowledged, "
        f"{len(result['lost'])} lost, {result['lost_unsafe']} lost by acks<all writers; report in {out}/report.md")
    if args.expect_anomaly:
        found = any(a in summary["anomalies"] for a in args.expect_anomaly.split("/"))
        log(f"expected anomaly '{args.expect_anomaly}': {'found' if found else 'NOT found'}")
        return 0 if found else 1
    return 0 if result["ok"] else 1


def unmount(paths):
    for path in paths:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def create_topic(bootstrap, partitions, topic=TOPIC, config=None):
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": bootstrap})
    a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=3, config=config or {})],
                    operation_timeout=30)[topic].result(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if in_sync(bootstrap, partitions, 3, topic):
            return
        time.sleep(0.2)
    raise TimeoutError(f"the partitions of {topic} did not get leaders")


def describe(bootstrap, topic=TOPIC):
    from confluent_kafka.admin import AdminClient
    try:
        md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic=topic, timeout=5)
        t = md.topics.get(topic)
        return t.partitions if t is not None and t.error is None else {}
    except Exception:
        return {}


def controller(cluster):
    """The metadata quorum's leader as DescribeQuorum reports it (asked of a running node's
    client listener; brokers forward it), or None. Metadata's controller_id names a live
    broker, not the controller."""
    from cluster_harness import describe_quorum
    for node in cluster.nodes.values():
        if not node.running():
            continue
        try:
            q = describe_quorum(node.bootstrap, timeout_ms=2000, wait_s=10)
        except (subprocess.SubprocessError, ValueError):
            continue
        if q and q.get("leader", -1) >= 0:
            return q["leader"]
    return None


def leaders(bootstrap):
    return {p: m.leader for p, m in describe(bootstrap).items() if m.leader >= 0}


def in_sync(bootstrap, partitions, rf, topic=TOPIC):
    parts = describe(bootstrap, topic)
    return len(parts) == partitions and all(m.leader >= 0 and len(m.isrs) == rf for m in parts.values())


def not_in_sync(bootstrap, partitions, rf, topic):
    """The partitions of `topic` without a leader or with fewer than `rf` replicas in sync:
    {partition: {"leader", "isr"}} (every partition when the topic cannot be described)."""
    parts = describe(bootstrap, topic)
    if len(parts) != partitions:
        return {p: {"leader": None, "isr": None} for p in range(partitions)}
    return {p: {"leader": m.leader, "isr": sorted(m.isrs)} for p, m in parts.items()
            if m.leader < 0 or len(m.isrs) < rf}


def read_compacted(bootstrap, partitions, cluster, attempts=5):
    """The compacted topic read back through a client ({partition: [(offset, key, value)]}) and
    each replica's latest record of every key below the end of that read, from its segment
    files ({partition: {node: {key: (offset, value)}}}). A cleaner swapping segments while the
    files are read makes the read start again."""
    import clients
    got = clients.read_all(bootstrap, kept.COMPACTED, partitions, timeout=120)
    final = {p: [(m.offset(), m.key().decode(errors="replace") if m.key() is not None else None,
                  m.value().decode(errors="replace") if m.value() is not None else None) for m in msgs]
             for p, msgs in got.items()}
    on_disk = {}
    for p, records in final.items():
        end = records[-1][0] + 1 if records else 0
        for attempt in range(attempts):
            try:
                on_disk[p] = {i: kept.latest_per_key_on_disk(n.data_dir / f"{kept.COMPACTED}-{p}", end)
                              for i, n in cluster.nodes.items()}
                break
            except (FileNotFoundError, ValueError):
                if attempt == attempts - 1:
                    raise
                time.sleep(0.5)
    return final, on_disk


def topic_exists(bootstrap):
    """Whether the cluster still names the campaign's topic (None: no answer)."""
    from confluent_kafka.admin import AdminClient
    try:
        md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    except Exception:
        return None
    return TOPIC in md.topics


def read_back(bootstrap, partitions, log):
    """Each partition's records in offset order, one per offset. A position the broker calls
    out of range fails the read (a reset to the earliest offset would hand every record
    again, which looks like duplicates). A client handed an offset twice otherwise re-fetched
    it: that is the reader's repeat, not a record written twice, and is logged. One offset
    with two values fails the campaign. A topic the cluster no longer knows (its creation
    lost from the metadata) reads as empty: every record acknowledged in it is lost."""
    import clients
    if topic_exists(bootstrap) is False:
        log(f"topic {TOPIC} no longer exists: its records are read as none")
        return {p: [] for p in range(partitions)}
    got = clients.read_all(bootstrap, TOPIC, partitions, timeout=120, auto_offset_reset="error")
    out = {}
    for p, msgs in got.items():
        by_offset = {}
        repeats = 0
        for m in msgs:
            value = m.value().decode(errors="replace")
            if m.offset() in by_offset:
                if by_offset[m.offset()] != value:
                    raise RuntimeError(f"partition {p} offset {m.offset()} read as {by_offset[m.offset()]!r} "
                                       f"and {value!r}")
                repeats += 1
            by_offset[m.offset()] = value
        if repeats:
            log(f"the final read was handed {repeats} records of partition {p} a second time (same offsets)")
        out[p] = sorted(by_offset.items())
    return out


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    if "netns" in sys.modules:
        sys.modules["netns"].drop_subnet_guards()  # this process's clients end with it, just below
    # Without the interpreter's teardown: a client left behind by bounded() would hang it.
    os._exit(code if isinstance(code, int) else 1)
