"""A fault-injecting Kafka TCP proxy for the integration tests.

Each client connection gets its own upstream connection to the broker. Requests are
forwarded as they come; responses are parsed frame by frame. Every `drop_every`-th Produce
request (counted over all connections) is marked: it is forwarded, the broker processes it,
and when its response comes back the proxy closes both sides instead of forwarding it. The
client sees a broken connection for a write that did happen (and for any requests it had
pipelined behind it), so it must retry them: exactly the case idempotence exists for.

The broker must advertise the proxy's address (advertised.listeners), so clients that learn
addresses from Metadata keep coming back through the proxy.
"""
import socket
import struct
import threading

PRODUCE = 0


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _read_frame(sock):
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    body = _recv_exact(sock, size)
    if body is None:
        return None
    return head + body


class FaultyProxy:
    def __init__(self, listen_port, upstream_port, drop_every=0, host="127.0.0.1"):
        self.host = host
        self.listen_port = listen_port
        self.upstream_port = upstream_port
        self.drop_every = drop_every  # 0: never drop
        self.lock = threading.Lock()
        self.produce_requests = 0
        self.dropped = 0
        self.connections = 0
        self._closing = False
        self._server = None
        self._threads = []
        self._socks = set()

    def start(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.listen_port))
        s.listen(64)
        s.settimeout(0.2)
        self._server = s
        t = threading.Thread(target=self._accept_loop, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def stop(self):
        self._closing = True
        if self._server:
            self._server.close()
        with self.lock:
            socks = list(self._socks)
        for s in socks:
            _close(s)
        for t in self._threads:
            t.join(timeout=5)

    def stats(self):
        with self.lock:
            return {"produce_requests": self.produce_requests, "dropped": self.dropped,
                    "connections": self.connections}

    def _accept_loop(self):
        while not self._closing:
            try:
                client, _ = self._server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection((self.host, self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)  # broker down: the client sees a refused/closed connection
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(self, client, upstream)
            with self.lock:
                self.connections += 1
                self._socks.update((client, upstream))
            for target in (conn.requests, conn.responses):
                t = threading.Thread(target=target, daemon=True)
                t.start()

    def _should_drop(self):
        with self.lock:
            self.produce_requests += 1
            return self.drop_every > 0 and self.produce_requests % self.drop_every == 0


class _Conn:
    def __init__(self, proxy, client, upstream):
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        self.drop_lock = threading.Lock()
        self.drop_ids = set()  # correlation ids whose responses must not reach the client

    def requests(self):
        try:
            while True:
                frame = _read_frame(self.client)
                if frame is None:
                    break
                api_key, _version, correlation_id = struct.unpack(">hhi", frame[4:12])
                if api_key == PRODUCE and self.proxy._should_drop():
                    with self.drop_lock:
                        self.drop_ids.add(correlation_id)
                self.upstream.sendall(frame)
        except OSError:
            pass
        self.close()

    def responses(self):
        try:
            while True:
                frame = _read_frame(self.upstream)
                if frame is None:
                    break
                (correlation_id,) = struct.unpack(">i", frame[4:8])
                with self.drop_lock:
                    drop = correlation_id in self.drop_ids
                if drop:
                    # The broker has written it; the client never hears so.
                    with self.proxy.lock:
                        self.proxy.dropped += 1
                    break
                self.client.sendall(frame)
        except OSError:
            pass
        self.close()

    def close(self):
        for s in (self.client, self.upstream):
            _close(s)
        with self.proxy.lock:
            self.proxy._socks.discard(self.client)
            self.proxy._socks.discard(self.upstream)


def _close(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
