"""A brokerd cluster whose nodes each run in a network namespace of their own, joined by veth
links to one bridge that exists only on this machine; the campaign (clients included) stays in
the root namespace and reaches every node through the bridge. Cuts are blackhole routes
inside a node's namespace: `cut(a, b)` stops what a sends to b (one way); cutting both ways
separates them; cutting a node from the bridge's own address cuts it from the clients.

Needs root and iproute2 (ip netns, ip link, ip route). Every namespace, link and bridge it
creates is named after the campaign's pid and removed by tear_down(). A blackhole route for
the subnet, under the bridge's own, outlives them until the process exits: clients that still
reconnect after the tear-down (librdkafka does until it is destroyed) reach nothing, and no
packet for the subnet leaves this machine by the default route."""
import atexit
import os
import socket
import subprocess
import time

from brokerd_harness import Broker
from cluster_harness import QuorumCluster


def ip(*args, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + ["ip"] + list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def available():
    """Whether this process may build namespaces (root, iproute2 with netns and bridges)."""
    if os.geteuid() != 0:
        return False
    try:
        return subprocess.run(["ip", "netns", "list"], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


_guards = []  # the subnets' blackhole routes still in place


def drop_subnet_guards():
    """Removes the blackhole routes: call once no client of the campaign is left (at exit)."""
    while _guards:
        ip("route", "del", "blackhole", _guards.pop(), "metric", "4000", check=False)


atexit.register(drop_subnet_guards)


def _free_subnet():
    used = ip("-4", "route").stdout + ip("-4", "addr").stdout
    for third in range(os.getpid() % 200, os.getpid() % 200 + 200):
        net = f"10.213.{third % 250}."
        if net not in used:
            return net
    raise RuntimeError("no free 10.213.x.0/24 subnet for the campaign's bridge")


class NsBroker(Broker):
    """A Broker whose process runs inside namespace `ns` and listens on `host`."""

    def __init__(self, workdir, ns, host, overrides=None, port=9092):
        super().__init__(workdir, overrides=overrides, port=port)
        self.ns = ns
        self.host = host

    @property
    def bootstrap(self):
        return f"{self.host}:{self.port}"

    def command(self):
        return ["ip", "netns", "exec", self.ns] + super().command()

    def wait_until_serving(self, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                raise RuntimeError(f"brokerd exited with {rc} during start:\n{self.log_text()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"brokerd did not answer on {self.bootstrap} within {timeout}s:\n{self.log_text()}")


class NetnsCluster(QuorumCluster):
    """A QuorumCluster whose nodes live in namespaces; adds cut() and heal()."""

    CLIENT_PORT = 9092
    CONTROLLER_PORT = 9093

    def __init__(self, workdir, voters=3, overrides=None, per_node=None):
        self.tag = f"ch{os.getpid()}"
        self.subnet = _free_subnet()
        self.bridge = f"{self.tag}br"
        self.gateway = self.subnet + "254"
        self.cuts = set()
        self.namespaces = {}
        self.created = False
        ids = range(1, voters + 1)
        self.addresses = {i: self.subnet + str(i) for i in ids}
        voters_spec = ",".join(f"{i}@{self.addresses[i]}:{self.CONTROLLER_PORT}" for i in ids)
        self.nodes = {}
        for i in ids:
            props = {
                "node.id": str(i),
                "listeners": f"PLAINTEXT://{self.addresses[i]}:{self.CLIENT_PORT},"
                             f"CONTROLLER://{self.addresses[i]}:{self.CONTROLLER_PORT}",
                "controller.quorum.voters": voters_spec,
            }
            props.update(overrides or {})
            props.update((per_node or {}).get(i, {}))
            self.namespaces[i] = f"{self.tag}n{i}"
            self.nodes[i] = NsBroker(workdir / f"node{i}", self.namespaces[i], self.addresses[i], overrides=props,
                                     port=self.CLIENT_PORT)

    def _build(self):
        self.created = True
        ip("route", "add", "blackhole", f"{self.subnet}0/24", "metric", "4000")
        _guards.append(f"{self.subnet}0/24")
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i, ns in self.namespaces.items():
            outer, inner = f"{self.tag}v{i}", f"{self.tag}p{i}"
            ip("netns", "add", ns)
            ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            ip("link", "set", inner, "netns", ns)
            ip("link", "set", outer, "master", self.bridge)
            ip("link", "set", outer, "up")
            ip("addr", "add", f"{self.addresses[i]}/24", "dev", inner, ns=ns)
            ip("link", "set", inner, "up", ns=ns)
            ip("link", "set", "lo", "up", ns=ns)

    def start(self):
        self._build()
        return super().start()

    # -- cuts -----------------------------------------------------------------------------

    def _target(self, b):
        return self.gateway if b == "clients" else self.addresses[b]

    def cut(self, a, b):
        """Node a can no longer send to b (a node id, or "clients")."""
        if (a, b) in self.cuts:
            return
        ip("route", "add", "blackhole", f"{self._target(b)}/32", ns=self.namespaces[a])
        self.cuts.add((a, b))

    def heal(self):
        for a, b in sorted(self.cuts, key=str):
            ip("route", "del", "blackhole", f"{self._target(b)}/32", ns=self.namespaces[a], check=False)
        self.cuts.clear()

    # -- the end --------------------------------------------------------------------------

    def tear_down(self):
        """Every node killed, then the namespaces, links and bridge removed."""
        self.resume_all()
        self.kill_all()
        if not self.created:
            return
        for i, ns in self.namespaces.items():
            ip("link", "del", f"{self.tag}v{i}", check=False)
            ip("netns", "del", ns, check=False)
        ip("link", "del", self.bridge, check=False)
