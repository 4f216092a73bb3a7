"""report.md: what a campaign did and what held, for a reader who was not there."""


def _fmt(x):
    return "-" if x is None else f"{x:.2f}"


def markdown(summary, faults):
    r = summary["result"]
    lines = [
        f"# Campaign: seed {summary['seed']}, {summary['nodes']} nodes, {summary['duration_s']:.0f} s of faults",
        "",
        f"Verdict: **{'ok' if summary['ok'] else 'ANOMALIES: ' + ', '.join(summary['anomalies'])}**",
        "",
        f"- nemeses: {', '.join(summary['nemesis'])}; workloads: {', '.join(summary['workload'])}; "
        f"{summary['partitions']} partitions, RF 3, min.insync.replicas 2",
        f"- wall time {summary['wall_s']} s, faults injected {summary['faults']}",
        f"- operations: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["operations"].items())),
        f"- records acknowledged {r['acknowledged']}, read back {r['read']}, read while running "
        f"{summary['tailer_read']}, unanswered at the end {sum(summary['unanswered'].values())}",
        f"- producers restarted after a client fatal error (librdkafka < 2.3.0, its issue #4438): "
        f"{sum(summary.get('client_restarts', {}).values())}",
        f"- consumer group: {r.get('group_consumed', 0)} records consumed, {r.get('group_commits', 0)} commits "
        f"acknowledged",
        f"- transactions: " + (", ".join(f"{k} {v}" for k, v in sorted(r["transactions"].items())) +
                               f"; {r['txn_records_visible']} transactional records visible at read_committed, "
                               f"{r['chain_copied']} input records copied by the chain, {r['txn_tailer_read']} read "
                               f"by the read_committed tailer" if "transactions" in r else "none"),
        "",
        "| anomaly | count |",
        "|---|---|",
        f"| acknowledged (acks=all) and lost | {len(r['lost'])} |",
        f"| duplicates (idempotent writers) | {len(r['duplicates'])} |",
        f"| per-key reorders (idempotent writers) | {len(r['reordered'])} |",
        f"| read but never sent | {len(r['unexpected'])} |",
        f"| read at another offset than acknowledged | {len(r['moved'])} |",
        f"| offset holding another value than read earlier | {len(r['offset_changed'])} |",
        f"| replicas differing below the high watermark | {len(r.get('diverged', []))} |",
        f"| group: a member started below an acknowledged commit | {len(r.get('group_rewound', []))} |",
        f"| group: an acknowledged commit missing at the end | {len(r.get('commit_lost', []))} |",
        f"| group: a record below the committed offset never consumed | {len(r.get('group_skipped', []))} |",
        f"| sanitizer reports (sanitizer builds) | {len(r.get('sanitizer', []))} |",
        f"| transactions: a committed one invisible | {len(r.get('lost_commits', []))} |",
        f"| transactions: one partly visible | {len(r.get('torn_transactions', []))} |",
        f"| transactions: an aborted record read at read_committed | {len(r.get('aborted_reads', []))} |",
        f"| exactly-once: a record or an input copied twice | {len(r.get('eos_duplicates', []))} |",
        f"| exactly-once: an input below the committed offsets never copied | {len(r.get('eos_skipped', []))} |",
        f"| exactly-once: committed offsets behind a committed transaction | {len(r.get('txn_offsets_lost', []))} |",
        f"| transactions: a record no transaction wrote | {len(r.get('txn_unexpected', []))} |",
        f"| transactions: left open at the end | {len(r.get('txn_hanging', []))} |",
        f"| exactly-once: the chain did not catch up | {len(r.get('eos_stalled', []))} |",
        f"| lost by acks=1/acks=0 writers (allowed) | {r['lost_unsafe']} |",
        f"| duplicates by non-idempotent writers (allowed) | {r['duplicates_unsafe']} |",
        "",
        "## Availability: the longest a partition went without a durable acknowledgement after each fault (s)",
        "",
        "| fault | count | p50 | p99 | max | never resumed |",
        "|---|---|---|---|---|---|",
    ]
    for kind, a in sorted(r["availability"].items()):
        lines.append(f"| {kind} | {a['faults']} | {_fmt(a['p50_s'])} | {_fmt(a['p99_s'])} | {_fmt(a['max_s'])} | "
                     f"{a['never_resumed']} |")
    lines += ["", "## Timeline", "", "| t (s) | fault | target |", "|---|---|---|"]
    for f in faults:
        extra = f" ({f['seconds']} s)" if "seconds" in f else ""
        lines.append(f"| {f['t']:.1f} | {f['kind']}{extra} | {f['target']} |")
    for kind in ("lost", "duplicates", "reordered", "unexpected", "moved", "offset_changed", "diverged", "behind",
                 "group_rewound", "commit_lost", "group_skipped", "sanitizer", "lost_commits", "torn_transactions",
                 "aborted_reads", "eos_duplicates", "eos_skipped", "txn_offsets_lost", "txn_unexpected",
                 "txn_hanging", "eos_stalled"):
        if r.get(kind):
            lines += ["", f"## {kind} (first 20)", "", "```"] + [str(x) for x in r[kind][:20]] + ["```"]
    return "\n".join(lines) + "\n"
