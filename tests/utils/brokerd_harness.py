"""Start, stop, kill and restart a real brokerd process for integration tests.

Each Broker owns a data directory and a port; every start appends the process's
output to its own numbered log file so a restart's log can be inspected alone.
"""
import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path

DEFAULT_START_TIMEOUT_S = 20.0
DEFAULT_STOP_TIMEOUT_S = 20.0
# Sanitizer builds (ASan, UBSan, LSan, TSan) report into the process's output; any report
# fails the test that ran the broker.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")


def brokerd_binary():
    path = os.environ.get("BROKERD_BIN")
    if not path:
        raise RuntimeError("BROKERD_BIN must name the brokerd binary to test")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"BROKERD_BIN={path} is not an executable file")
    return path


def brokerctl_binary():
    """brokerctl from BROKERCTL_BIN, or beside BROKERD_BIN in the build tree."""
    path = os.environ.get("BROKERCTL_BIN")
    if not path:
        path = str(Path(brokerd_binary()).resolve().parent.parent / "brokerctl" / "brokerctl")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"brokerctl not found at {path} (build the brokerctl target)")
    return path


_handed_out = set()


def free_port():
    """A port that is free now, below the kernel's ephemeral range (the kernel gives ports of
    that range to outgoing connections, so one of them could hold a port picked there when a
    node restarts on it), and never one this process was given before: a cluster takes all
    its ports before its first node binds any."""
    low, _ = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    for _ in range(200):
        port = random.randrange(10000, max(low, 10001))
        if port in _handed_out:
            continue
        _handed_out.add(port)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_answers(port, timeout=0.5):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def sanitized(pid):
    """Whether the process runs under AddressSanitizer, whose quarantine holds freed memory
    back: its resident size says little about what a release build keeps."""
    with open(f"/proc/{pid}/maps") as f:
        return "libasan" in f.read()


def rss_kib(pid):
    """Resident set size of a process in KiB, from /proc/<pid>/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Broker:
    def __init__(self, workdir, overrides=None, port=None, preexec_fn=None):
        self.workdir = Path(workdir)
        self.preexec_fn = preexec_fn  # run in the child before exec (limits, credentials)
        self.data_dir = self.workdir / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.overrides = dict(overrides or {})
        self.proc = None
        self.starts = 0
        self.log_paths = []

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self):
        return self.proc.pid

    @property
    def log_path(self):
        return self.log_paths[-1]

    def command(self):
        props = {
            "log.dirs": str(self.data_dir),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            # Off unless a test asks: the default port would collide between brokers.
            "metrics.listener": "",
        }
        props.update(self.overrides)
        cmd = [brokerd_binary()]
        for k, v in props.items():
            cmd += ["--override", f"{k}={v}"]
        return cmd

    def start(self, timeout=DEFAULT_START_TIMEOUT_S, wait=True):
        """Starts the process; with wait, returns once its client port answers (a node of a
        quorum serves only once the quorum has a leader: start the others with wait=False
        first, then wait_until_serving())."""
        assert not self.running(), "broker already running"
        self.starts += 1
        log_path = self.workdir / f"brokerd.{self.starts}.log"
        self.log_paths.append(log_path)
        log = open(log_path, "wb")
        try:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, preexec_fn=self.preexec_fn)
        finally:
            log.close()
        if wait:
            self.wait_until_serving(timeout)
        return self

    def wait_until_serving(self, timeout=DEFAULT_START_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                raise RuntimeError(f"brokerd exited with {rc} during start:\n{self.log_text()}")
            if port_answers(self.port):
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"brokerd did not answer on port {self.port} within {timeout}s:\n{self.log_text()}")

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def alive(self):
        """The process runs and its port still accepts connections."""
        return self.running() and port_answers(self.port, timeout=2.0)

    def stop(self, timeout=DEFAULT_STOP_TIMEOUT_S):
        """Graceful stop: SIGTERM, then require exit code 0 and 'shutdown complete' in the log."""
        assert self.running(), f"broker is not running:\n{self.log_text()}"
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"brokerd did not exit within {timeout}s of SIGTERM:\n{self.log_text()}")
        self.assert_no_sanitizer_reports()
        assert rc == 0, f"brokerd exited with {rc} after SIGTERM:\n{self.log_text()}"
        assert "shutdown complete" in self.log_text(), f"no 'shutdown complete' logged:\n{self.log_text()}"
        return rc

    def kill(self):
        """SIGKILL, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=DEFAULT_STOP_TIMEOUT_S)

    def restart(self, timeout=DEFAULT_START_TIMEOUT_S):
        return self.start(timeout=timeout)

    def log_text(self, index=-1):
        if not self.log_paths:
            return ""
        try:
            return self.log_paths[index].read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def sanitizer_reports(self):
        """Lines of sanitizer reports in any of this broker's logs."""
        found = []
        for i in range(len(self.log_paths)):
            for line in self.log_text(i).splitlines():
                if any(m in line for m in SANITIZER_MARKERS):
                    found.append(f"{self.log_paths[i].name}: {line}")
        return found

    def assert_no_sanitizer_reports(self):
        reports = self.sanitizer_reports()
        assert not reports, "sanitizer reports:\n" + "\n".join(reports[:20]) + "\n" + self.all_logs()

    def all_logs(self):
        out = []
        for i, p in enumerate(self.log_paths):
            out.append(f"----- {p.name} -----\n{self.log_text(i)}")
        return "\n".join(out)

    def partition_dir(self, topic, partition):
        return self.data_dir / f"{topic}-{partition}"

    def segment_files(self, topic, partition, suffix=".log"):
        d = self.partition_dir(topic, partition)
        return sorted(p for p in d.iterdir() if p.name.endswith(suffix) and p.name[:-len(suffix)].isdigit())


def module_broker(tmp_path_factory, name, overrides=None, setup=None):
    """The body of a module-scoped fixture (`yield from module_broker(...)`): one broker for
    every test of a module, set up by `setup(broker)`. It must still be running when the
    module is done; if anything failed, its logs are printed."""
    import sys
    b = Broker(tmp_path_factory.mktemp(name), overrides=overrides)
    b.start()
    try:
        if setup:
            setup(b)
        yield b
        assert b.running(), f"brokerd died:\n{b.all_logs()}"
        b.stop()
        b.assert_no_sanitizer_reports()
    except BaseException:
        sys.stderr.write(f"\n===== brokerd output ({b.workdir}) =====\n{b.all_logs()}\n")
        raise
    finally:
        b.kill()
