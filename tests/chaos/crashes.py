"""Nodes that die on their own. The nemeses stop nodes only with SIGKILL (kill -9, power loss)
or SIGTERM (a clean stop, exit code 0); any other end of a node's process (another signal such
as SIGBUS or SIGSEGV, an abort, a non-zero exit code) is a crash no fault caused: the anomaly
"crashed", with the node, the time, how it ended and the last lines of its log."""
import signal
import threading

# How a nemesis ends a node: SIGKILL, or SIGTERM and a clean exit.
CAUSED_BY_NEMESIS = (0, -signal.SIGKILL)


def how_it_ended(rc):
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit code {rc}"


class CrashWatch:
    def __init__(self, cluster, recorder, log, interval=0.1, tail_lines=20):
        self.cluster = cluster
        self.recorder = recorder
        self.log = log
        self.interval = interval
        self.tail_lines = tail_lines
        self.crashes = []
        self._watched = {}  # id(proc) -> (node, proc, log path)
        self._ended = set()  # processes already looked at after their end (kept, so ids stay theirs)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="crash-watch", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Stops watching; a last look catches a process that ended just before."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._look()

    def _run(self):
        while not self._stop.wait(self.interval):
            self._look()

    def _look(self):
        for node, n in list(self.cluster.nodes.items()):
            proc = n.proc
            if proc is not None and id(proc) not in self._watched and proc not in self._ended and n.log_paths:
                self._watched[id(proc)] = (node, proc, n.log_paths[-1])
        for key, (node, proc, log_path) in list(self._watched.items()):
            rc = proc.poll()
            if rc is None:
                continue
            del self._watched[key]
            self._ended.add(proc)
            if rc in CAUSED_BY_NEMESIS:
                continue
            try:
                tail = log_path.read_text(errors="replace").splitlines()[-self.tail_lines:]
            except OSError:
                tail = []
            event = {"type": "crashed", "node": node, "pid": proc.pid, "ended": how_it_ended(rc),
                     "log": str(log_path), "last_lines": tail}
            self.recorder.record(event)
            self.crashes.append(event)
            self.log(f"node {node} (pid {proc.pid}) ended on its own: {how_it_ended(rc)}; see {log_path}")
