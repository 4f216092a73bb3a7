"""Replicas compared on disk: below the high watermark every replica of a partition must hold
the same batches (same offsets, same CRC). Read straight from each node's segment files once
the writers have stopped and every replica is back in sync."""
import struct
from pathlib import Path


def whole_batches(partition_dir):
    """(base offset, the batch's bytes from its first header byte) of every whole batch in a
    partition's segment files, in offset order; preallocated zeros or a torn tail end a segment."""
    d = Path(partition_dir)
    if not d.is_dir():
        return
    for seg in sorted(p for p in d.iterdir() if p.suffix == ".log" and p.stem.isdigit()):
        data = seg.read_bytes()
        pos = 0
        while pos + 27 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0 or pos + 12 + length > len(data):
                break
            yield base, memoryview(data)[pos:pos + 12 + length]
            pos += 12 + length


def batches(partition_dir):
    """[(base offset, last offset, crc)] of every whole batch in a partition's segments."""
    out = []
    for base, batch in whole_batches(partition_dir):
        crc, = struct.unpack_from(">I", batch, 17)
        last_delta, = struct.unpack_from(">i", batch, 23)
        out.append((base, base + last_delta, crc))
    return out


def divergence(nodes, topic, partitions, ends):
    """Replicas that disagree below ends[p]: [{partition, nodes, first_offset, end, kind}],
    kind "diverged" (a batch differs: an anomaly) or "behind" (one holds a prefix of the
    other: a replica not caught up, reported only). `nodes` maps node id to data directory."""
    found = []
    for p in range(partitions):
        end = ends.get(p, 0)
        views = {}
        for node, data_dir in nodes.items():
            d = Path(data_dir) / f"{topic}-{p}"
            if d.is_dir():
                views[node] = [b for b in batches(d) if b[1] < end]
        if len(views) < 2:
            continue
        reference_node = min(views)
        reference = views[reference_node]
        for node, view in views.items():
            if view == reference:
                continue
            at = next((min(a[0], b[0]) for a, b in zip(view, reference) if a != b), None)
            kind = "diverged"
            if at is None:  # one holds a prefix of the other
                shorter = view if len(view) < len(reference) else reference
                at = shorter[-1][1] + 1 if shorter else 0
                kind = "behind"
            found.append({"partition": p, "nodes": [reference_node, node], "first_offset": at, "end": end,
                          "kind": kind})
    return found
