"""Faults on a schedule fixed by the seed. Each fault is injected, lasts, is healed, and the
campaign then waits for the cluster to settle (every replica back in its ISR) before the next
quiet period: faults come one at a time, the case in which acks=all with
min.insync.replicas=2 promises that nothing acknowledged is lost.

  kill             kill -9 of a node (a random one, the controller, or the leader of a
                   partition), restarted a few seconds later
  pause            SIGSTOP, then SIGCONT: shorter or longer than the session timeout
  restart-all      every node at once, cleanly (SIGTERM) or not (kill -9), then all started
  power-loss       every node killed at once (kill -9) and started again as after a power cut:
                   each node's metadata log keeps only what a real fsync covered (test builds,
                   BROKERD_INJECT_BUGS; a broker without that option keeps everything). The
                   partitions keep what they wrote: on a power loss of every replica their
                   durability is flush.ms, a stated window, not a promise the checker holds
  rolling-restart  each node in turn, cleanly, waiting for its return
  lagging-kill     two faults at once: a follower of a partition is paused until it has left
                   the ISR (replica.lag.time.max.ms), then the partition's leader is killed
                   while it is still paused (the one election where an out-of-sync replica
                   is alive and must not be chosen; it comes first in the replica order, so
                   the election must skip it)
  stranded-leader  every follower of a partition is paused for less than the session timeout
                   (they stay in the ISR and in the cluster), the leader keeps taking writes it
                   cannot replicate, and is killed just before they resume: nothing it took
                   in that window may have been acknowledged (acks=all), and when it returns
                   it must cut what it alone wrote
  partition        a network cut for a while (clusters in network namespaces only): a node cut
                   from everyone, the leader of a partition cut from the other nodes but not
                   from its clients, a zone (rack) cut from the others, a majority/minority
                   split, or a one-way cut from one node to another
  coordinator-kill kill -9 of the transaction coordinator of one of the transactional workload's
                   ids (another node when it has none), restarted a few seconds later: its
                   successor loads __transaction_state and finishes what it had prepared. Half
                   the time the kill waits for a commit to be acknowledged, and every other
                   node is paused at that moment, for a few tenths of a second around the
                   kill: the markers cannot be written, so the successor finds the commit
                   prepared and must complete it
  full-disk        a node's file system (a small tmpfs the campaign mounts on each node's data
                   directory) filled to the last byte or nearly, for 1-3x the session timeout,
                   then freed; a node that died meanwhile is a crash (an anomaly), started
                   again so that the run goes on
"""
import os
import random
import signal
import time

NEMESES = ("kill", "pause", "restart-all", "power-loss", "rolling-restart", "partition", "lagging-kill",
           "stranded-leader", "full-disk", "coordinator-kill")
BALLAST = ".nemesis-ballast"
# Asks a test build's metadata log to drop what was never synced at its next open
# (raft/disk_log.h).
POWER_LOSS_MARKER = "raft-power-loss"
METADATA_LOG_DIR = "__cluster_metadata-0"


def fill(directory, keep):
    """Fills the file system holding `directory` but `keep` bytes; returns the ballast's path."""
    path = os.path.join(directory, BALLAST)
    st = os.statvfs(directory)
    size = max(0, st.f_bavail * st.f_frsize - keep)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError:
            pass  # the broker wrote meanwhile: what was allocated stays
        # What the broker freed while allocating, and what is left: taken too.
        chunk = b"\0" * (64 << 10)
        while os.statvfs(directory).f_bavail * st.f_frsize > keep:
            try:
                os.write(fd, chunk[: max(1, min(len(chunk), os.statvfs(directory).f_bavail * st.f_frsize - keep))])
            except OSError:
                break
    finally:
        os.close(fd)
    return path


class Nemesis:
    def __init__(self, cluster, recorder, kinds, seed, session_timeout_s, leader_of, controller, settle, log,
                 racks=None, replicas_of=None, lag_s=10.0, coordinators=None):
        for k in kinds:
            if k not in NEMESES:
                raise ValueError(f"unknown nemesis {k!r} (known: {', '.join(NEMESES)})")
        if "partition" in kinds and not hasattr(cluster, "cut"):
            raise ValueError("the partition nemesis needs a cluster in network namespaces")
        self.racks = racks or {}
        self.replicas_of = replicas_of  # a number -> (leader, replicas, isr) of one partition
        self.lag_s = lag_s              # replica.lag.time.max.ms, in seconds
        self.coordinators = coordinators  # txn_workload.Coordinators, with the transactional workload
        self.cluster = cluster
        self.recorder = recorder
        self.kinds = list(kinds)
        self.rng = random.Random(seed)
        self.session_s = session_timeout_s
        self.leader_of = leader_of    # a number -> the leader of one partition (or None)
        self.controller = controller  # () -> the controller's id (or None)
        self.settle = settle          # waits until every replica is back in sync; returns seconds
        self.log = log
        self.injected = []

    def run(self, until):
        """Faults until the monotonic time `until` (the one in progress finishes)."""
        while time.monotonic() < until:
            quiet = self.rng.uniform(2.0, 5.0)
            time.sleep(min(quiet, max(0.0, until - time.monotonic())))
            if time.monotonic() >= until:
                break
            kind = self.rng.choice(self.kinds)
            getattr(self, kind.replace("-", "_"))()
            settled = self.settle()
            self.log(f"settled after {settled:.1f}s")

    # -- faults ---------------------------------------------------------------------------

    def _fault(self, kind, target, **extra):
        event = {"type": "fault", "kind": kind, "target": target}
        event.update(extra)
        self.recorder.record(event)
        self.injected.append(event)
        self.log(f"fault {kind} on {target}")
        return event

    def _healed(self, event):
        self.recorder.record({"type": "heal", "kind": event["kind"], "target": event["target"]})

    def _running(self):
        return sorted(i for i, n in self.cluster.nodes.items() if n.running())

    def _pick(self):
        how = self.rng.choice(("random", "controller", "leader"))
        running = self._running()
        choice = self.rng.choice(running)  # drawn every time, so the schedule does not depend on the cluster
        if how == "controller":
            c = self.controller()
            if c in running:
                return how, c
        elif how == "leader":
            leader = self.leader_of(self.rng.randrange(1 << 16))
            if leader in running:
                return how, leader
        return "random", choice

    def kill(self):
        how, node = self._pick()
        down_s = self.rng.uniform(1.0, 6.0)
        event = self._fault(f"kill-{how}", node)
        self.cluster.nodes[node].kill()
        time.sleep(down_s)
        self.cluster.nodes[node].start(timeout=self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def coordinator_kill(self):
        running = self._running()
        choice = self.rng.choice(running)
        r = self.rng.randrange(1 << 16)
        down_s = self.rng.uniform(1.0, 5.0)
        prepared = self.rng.random() < 0.5
        node, paused = None, []
        if self.coordinators and prepared:
            node = self.coordinators.after_next_commit(timeout=10.0)
            if node in running:
                paused = [self.cluster.nodes[i].proc for i in running if i != node]
                for p in paused:
                    p.send_signal(signal.SIGSTOP)
        elif self.coordinators:
            node = self.coordinators.of(r)
        kind = ("kill-coordinator-prepared" if paused else "kill-coordinator") if node in running else "kill-random"
        event = self._fault(kind, node if node in running else choice)
        node = event["target"]
        try:
            self.cluster.nodes[node].kill()
            if paused:
                time.sleep(0.3)
        finally:
            for p in paused:
                p.send_signal(signal.SIGCONT)
        time.sleep(down_s)
        self.cluster.nodes[node].start(timeout=self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def pause(self):
        how, node = self._pick()
        long = self.rng.random() < 0.5
        paused_s = self.session_s * (self.rng.uniform(1.5, 3.0) if long else self.rng.uniform(0.2, 0.7))
        event = self._fault("pause-long" if long else "pause-short", node, seconds=round(paused_s, 2))
        proc = self.cluster.nodes[node].proc
        proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(paused_s)
        finally:
            proc.send_signal(signal.SIGCONT)
        self._healed(event)

    def lagging_kill(self):
        # A partition whose leader and paused follower are not the controller: the ISR change
        # has to reach the controller while the follower is paused.
        start = self.rng.randrange(1 << 16)
        c = self.controller()
        running = self._running()
        leader = follower = chosen = None
        for r in range(start, start + 64):
            lead, replicas, _ = self.replicas_of(r)
            followers = [x for x in replicas if x != lead]
            # The first follower in the replica order: the one an election that ignored the
            # ISR would pick (what the fault is there to catch).
            if lead in running and lead != c and followers and followers[0] != c and followers[0] in running:
                leader, follower, chosen = lead, followers[0], r
                break
        if leader is None:
            return self.kill()
        event = self._fault("lagging-kill", f"{follower}/{leader}")
        slow = self.cluster.nodes[follower].proc
        paused_at = time.monotonic()
        slow.send_signal(signal.SIGSTOP)
        try:
            # The leader drops it from the ISR after the lag time, and the controller commits
            # that: waited for, but not past the session timeout (the follower stays live).
            time.sleep(self.lag_s)
            while time.monotonic() - paused_at < self.session_s - 0.7:
                if follower not in self.replicas_of(chosen)[2]:
                    break
                time.sleep(0.1)
            self.cluster.nodes[leader].kill()
            time.sleep(0.3)
        finally:
            slow.send_signal(signal.SIGCONT)
        time.sleep(self.rng.uniform(2.0, 5.0))
        self.cluster.nodes[leader].start(timeout=self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def stranded_leader(self):
        start = self.rng.randrange(1 << 16)
        window_s = self.session_s * self.rng.uniform(0.3, 0.5)
        running = self._running()
        leader, followers = None, []
        for r in range(start, start + 64):
            lead, replicas, _ = self.replicas_of(r)
            rest = [x for x in replicas if x != lead]
            if lead in running and rest and all(x in running for x in rest):
                leader, followers = lead, rest
                break
        if leader is None:
            return self.kill()
        event = self._fault("stranded-leader", f"{leader}/{','.join(map(str, followers))}",
                            seconds=round(window_s, 2))
        procs = [self.cluster.nodes[f].proc for f in followers]
        for p in procs:
            p.send_signal(signal.SIGSTOP)
        try:
            time.sleep(window_s)
            self.cluster.nodes[leader].kill()
        finally:
            for p in procs:
                p.send_signal(signal.SIGCONT)
        time.sleep(self.rng.uniform(2.0, 5.0))
        self.cluster.nodes[leader].start(timeout=self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def restart_all(self):
        clean = self.rng.random() < 0.5
        event = self._fault("restart-all-clean" if clean else "restart-all-unclean", "all")
        for n in self.cluster.nodes.values():
            if not n.running():
                continue
            if clean:
                n.proc.send_signal(signal.SIGTERM)
            else:
                n.kill()
        for n in self.cluster.nodes.values():
            if n.proc is not None:
                try:
                    n.proc.wait(timeout=30)
                except Exception:
                    n.kill()
        for n in self.cluster.nodes.values():
            n.start(wait=False)
        for n in self.cluster.nodes.values():
            n.wait_until_serving(self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def power_loss(self):
        event = self._fault("power-loss", "all")
        for n in self.cluster.nodes.values():
            if n.running():
                n.proc.send_signal(signal.SIGKILL)
        for n in self.cluster.nodes.values():
            if n.proc is not None:
                n.proc.wait(timeout=30)
        for n in self.cluster.nodes.values():
            meta = os.path.join(str(n.data_dir), METADATA_LOG_DIR)
            if os.path.isdir(meta):
                with open(os.path.join(meta, POWER_LOSS_MARKER), "w") as f:
                    f.write("\n")
        time.sleep(self.rng.uniform(1.0, 3.0))
        for n in self.cluster.nodes.values():
            n.start(wait=False)
        for n in self.cluster.nodes.values():
            n.wait_until_serving(self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def rolling_restart(self):
        event = self._fault("rolling-restart", "all")
        for i in sorted(self.cluster.nodes):
            n = self.cluster.nodes[i]
            if n.running():
                n.proc.send_signal(signal.SIGTERM)
                n.proc.wait(timeout=30)
            n.start(timeout=self.cluster.START_TIMEOUT_S)
            self.settle()
        self._healed(event)

    def partition(self):
        ids = sorted(self.cluster.nodes)
        how = self.rng.choice(("isolate", "isolate-leader", "zone", "split", "one-way"))
        cut_s = self.session_s * self.rng.uniform(0.5, 3.0)
        pick = self.rng.choice(ids)
        other = self.rng.choice([i for i in ids if i != pick])
        minority = self.rng.sample(ids, (len(ids) - 1) // 2)
        if how == "isolate-leader":
            leader = self.leader_of(self.rng.randrange(1 << 16))
            pick = leader if leader in ids else pick
        cuts = []
        if how in ("isolate", "isolate-leader"):
            side = [pick]
            cuts = [(a, b) for a in side for b in ids if b not in side]
            if how == "isolate":
                cuts += [(pick, "clients")]
            target = pick
        elif how == "zone":
            rack = self.racks[pick]
            side = [i for i in ids if self.racks[i] == rack]
            target = rack
        elif how == "split":
            side = minority
            target = "+".join(map(str, sorted(side)))
        else:
            cuts = [(pick, other)]
            target = f"{pick}->{other}"
        if how in ("zone", "split"):
            cuts = [(a, b) for a in side for b in ids if b not in side]
        if how != "one-way":
            cuts += [(b, a) for a, b in cuts if b != "clients"]
        event = self._fault(f"partition-{how}", target, seconds=round(cut_s, 2))
        try:
            for a, b in cuts:
                self.cluster.cut(a, b)
            time.sleep(cut_s)
        finally:
            self.cluster.heal()
        self._healed(event)

    def full_disk(self):
        how, node = self._pick()
        keep = self.rng.choice((0, 0, 4096, 256 << 10))  # full, or room for a batch or a few
        full_s = self.session_s * self.rng.uniform(1.0, 3.0)
        n = self.cluster.nodes[node]
        event = self._fault(f"full-disk-{how}", node, seconds=round(full_s, 2), keep=keep)
        ballast = None
        try:
            ballast = fill(str(n.data_dir), keep)
            time.sleep(full_s)
        finally:
            if ballast and os.path.exists(ballast):
                os.unlink(ballast)
        if not n.running():
            # The node died on its full disk: a crash (crashes.py reports it as an anomaly),
            # recorded here too, and started again so that the run goes on.
            event["exited"] = n.proc.returncode if n.proc is not None else None
            self.log(f"node {node} exited during the full disk ({event['exited']}), a crash; starting it")
            n.start(timeout=self.cluster.START_TIMEOUT_S)
        self._healed(event)

    def heal_everything(self):
        """The end of a run: every cut healed, every paused node resumed, every stopped node
        started."""
        if hasattr(self.cluster, "heal"):
            self.cluster.heal()
        for n in self.cluster.nodes.values():
            if n.running():
                n.proc.send_signal(signal.SIGCONT)
        for n in self.cluster.nodes.values():
            if not n.running():
                n.start(wait=False)
        for n in self.cluster.nodes.values():
            n.wait_until_serving(self.cluster.START_TIMEOUT_S)
