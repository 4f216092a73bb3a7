"""Several brokerd processes on loopback forming one metadata quorum: each node gets a
client listener and a controller listener on free ports, and every node is told the same
controller.quorum.voters."""
import json
import signal
import subprocess
import time

import kafka_wire
from brokerd_harness import Broker, brokerctl_binary, free_port


def describe_quorum(address, timeout_ms=1000, brokerctl_args=(), wait_s=30):
    """DescribeQuorum through brokerctl, asked of `address` (a controller listener, or a broker
    listener, which forwards it; brokerctl follows a follower's answer to the leader), as a
    dict; None when it fails. brokerctl itself is given `wait_s` seconds."""
    proc = subprocess.run([brokerctl_binary(), "cluster", "quorum", "--bootstrap-controller", address,
                           "--output", "json", "--timeout-ms", str(timeout_ms), *brokerctl_args],
                          capture_output=True, text=True, timeout=wait_s)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


class QuorumCluster:
    brokerctl_args = ()  # extra brokerctl arguments, e.g. --command-config for a SASL controller listener

    def __init__(self, workdir, voters=3, overrides=None, per_node=None, brokerctl_args=()):
        self.workdir = workdir
        self.brokerctl_args = tuple(brokerctl_args)
        self.controller_ports = {i: free_port() for i in range(1, voters + 1)}
        self.voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in self.controller_ports.items())
        self.nodes = {}
        for i, cport in self.controller_ports.items():
            port = free_port()
            props = {
                "node.id": str(i),
                "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
                "controller.quorum.voters": self.voters,
            }
            props.update(overrides or {})
            props.update((per_node or {}).get(i, {}))
            self.nodes[i] = Broker(workdir / f"node{i}", overrides=props, port=port)

    # A node serves once the quorum has a leader, it has replayed the metadata and the
    # controller has unfenced it; a registration left by its own previous process must
    # expire first (broker.session.timeout.ms). Generous for sanitizer builds.
    START_TIMEOUT_S = 60.0

    def start(self):
        for n in self.nodes.values():
            n.start(wait=False)
        for n in self.nodes.values():
            n.wait_until_serving(self.START_TIMEOUT_S)
        self.wait_until_every_broker_listed(self.START_TIMEOUT_S)
        return self

    def bootstrap(self):
        """bootstrap.servers naming every running node."""
        return ",".join(n.bootstrap for n in self.nodes.values() if n.running())

    def broker_nodes(self):
        return {i: n for i, n in self.nodes.items()
                if n.overrides.get("process.roles", "broker,controller") != "controller"}

    def wait_until_every_broker_listed(self, timeout):
        """A node serves once it sees itself unfenced; the others may replay that a moment
        later. Waits until every broker's Metadata answer lists every broker."""
        want = sorted(self.broker_nodes())
        deadline = time.monotonic() + timeout
        pending = dict(self.broker_nodes())
        while pending and time.monotonic() < deadline:
            for i, n in list(pending.items()):
                try:
                    with kafka_wire.Connection(n.port, host=getattr(n, "host", "127.0.0.1"), timeout=2.0) as c:
                        if kafka_wire.broker_ids(c) == want:
                            del pending[i]
                except (OSError, ValueError):
                    pass
            if pending:
                time.sleep(0.05)
        if pending:
            raise TimeoutError(f"brokers {sorted(pending)} do not list all of {want} within {timeout}s")

    def restart(self, node_id):
        return self.nodes[node_id].start(timeout=self.START_TIMEOUT_S)

    def kill_all(self):
        for n in self.nodes.values():
            n.kill()

    def resume_all(self):
        """SIGCONT to every running node (any a test or campaign paused)."""
        for n in self.nodes.values():
            if n.proc is not None and n.proc.poll() is None:
                try:
                    n.proc.send_signal(signal.SIGCONT)
                except ProcessLookupError:
                    pass

    def tear_down(self):
        """The end of every test with a cluster: resumes any node a test paused (SIGSTOP), kills
        every node it started, by pid, and fails on any sanitizer report in their logs."""
        self.resume_all()
        self.kill_all()
        for n in self.nodes.values():
            n.assert_no_sanitizer_reports()

    def controller(self, node_id):
        return f"127.0.0.1:{self.controller_ports[node_id]}"

    def quorum(self, node_id, timeout_ms=1000):
        """DescribeQuorum asked of one node's controller listener; None when it fails."""
        return describe_quorum(self.controller(node_id), timeout_ms, self.brokerctl_args)

    def wait_for_leader(self, among=None, excluding=(), timeout=20.0):
        """(leader id, epoch) once a live node reports a leader that is not excluded."""
        among = among or [i for i, n in self.nodes.items() if n.running()]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i in among:
                q = self.quorum(i, timeout_ms=300)
                if q and q["leader"] >= 0 and q["leader"] not in excluding:
                    return q["leader"], q["epoch"]
            time.sleep(0.02)
        raise TimeoutError(f"no leader among {among} (excluding {excluding}) within {timeout}s")

    def quorum_state_files(self):
        """Each node's quorum-state file as written on disk."""
        out = {}
        for i, n in self.nodes.items():
            p = n.data_dir / "__cluster_metadata-0" / "quorum-state"
            if p.exists():
                out[i] = json.loads(p.read_text())
        return out


class SplitCluster(QuorumCluster):
    """Dedicated controllers (process.roles=controller, ids 1..controllers, a controller
    listener only) and broker-only nodes (process.roles=broker, the ids after them, a client
    listener only), all told the same controller.quorum.voters."""

    def __init__(self, workdir, controllers=3, brokers=2, overrides=None, per_node=None):
        self.workdir = workdir
        self.controller_ports = {i: free_port() for i in range(1, controllers + 1)}
        self.voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in self.controller_ports.items())
        self.nodes = {}
        for i, cport in self.controller_ports.items():
            props = {"node.id": str(i), "process.roles": "controller",
                     "listeners": f"CONTROLLER://127.0.0.1:{cport}", "controller.quorum.voters": self.voters}
            props.update(overrides or {})
            props.update((per_node or {}).get(i, {}))
            self.nodes[i] = Broker(workdir / f"controller{i}", overrides=props, port=cport)
        self.broker_ids = list(range(controllers + 1, controllers + brokers + 1))
        for i in self.broker_ids:
            port = free_port()
            props = {"node.id": str(i), "process.roles": "broker",
                     "listeners": f"PLAINTEXT://127.0.0.1:{port}", "controller.quorum.voters": self.voters}
            props.update(overrides or {})
            props.update((per_node or {}).get(i, {}))
            self.nodes[i] = Broker(workdir / f"broker{i}", overrides=props, port=port)

    def wait_for_leader(self, among=None, excluding=(), timeout=20.0):
        among = among or [i for i in self.controller_ports if self.nodes[i].running()]
        return super().wait_for_leader(among=among, excluding=excluding, timeout=timeout)
