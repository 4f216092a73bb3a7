"""A tiny, independent Kafka wire encoder/decoder for raw-protocol tests.

Only what the integration tests need: request header v1, record batches (magic 2)
and a legacy magic 1 message set, and a few non-flexible request versions
(ApiVersions v0, Produce v3/v8, Fetch v4/v5, ListOffsets v1, DeleteRecords v0).
"""
import socket
import struct
import time
import zlib

# ---------------------------------------------------------------- CRC-32C

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

# ---------------------------------------------------------------- primitives

def i8(v): return struct.pack(">b", v)
def i16(v): return struct.pack(">h", v)
def i32(v): return struct.pack(">i", v)
def i64(v): return struct.pack(">q", v)
def u32(v): return struct.pack(">I", v)


def string(s):
    if s is None:
        return i16(-1)
    b = s.encode() if isinstance(s, str) else s
    return i16(len(b)) + b


def nbytes(b):
    if b is None:
        return i32(-1)
    return i32(len(b)) + b


def array(items, enc):
    items = list(items)
    return i32(len(items)) + b"".join(enc(x) for x in items)


def varint(v):
    return uvarint((v << 1) ^ (v >> 63))  # zigzag


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ValueError(f"short read: need {n} at {self.pos} of {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self): return struct.unpack(">b", self.take(1))[0]
    def i16(self): return struct.unpack(">h", self.take(2))[0]
    def i32(self): return struct.unpack(">i", self.take(4))[0]
    def i64(self): return struct.unpack(">q", self.take(8))[0]
    def u32(self): return struct.unpack(">I", self.take(4))[0]

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def nbytes(self):
        n = self.i32()
        return None if n < 0 else self.take(n)

    def array(self, dec):
        n = self.i32()
        return None if n < 0 else [dec(self) for _ in range(n)]

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value

    def compact_string(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def compact_array(self, dec):
        n = self.uvarint()
        return None if n == 0 else [dec(self) for _ in range(n - 1)]

    def varint(self):
        shift = z = 0
        while True:
            b = self.take(1)[0]
            z |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return (z >> 1) ^ -(z & 1)

    def remaining(self):
        return len(self.data) - self.pos

# ---------------------------------------------------------------- record batches

def encode_record(offset_delta, ts_delta, key, value, headers=()):
    body = i8(0) + varint(ts_delta) + varint(offset_delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk + varint(len(hv)) + hv
    return varint(len(body)) + body


def record_batch(records, base_offset=0, base_timestamp=None, count=None, magic=2, attributes=0,
                 corrupt_crc=False, producer_id=-1, producer_epoch=-1, base_sequence=-1):
    """records: list of (key, value) or (key, value, timestamp_ms). Returns the encoded batch."""
    if base_timestamp is None:
        base_timestamp = int(time.time() * 1000)
    encoded = []
    max_ts = base_timestamp
    for i, r in enumerate(records):
        ts = r[2] if len(r) > 2 else base_timestamp
        max_ts = max(max_ts, ts)
        encoded.append(encode_record(i, ts - base_timestamp, r[0], r[1]))
    after_crc = (i16(attributes) + i32(len(records) - 1) + i64(base_timestamp) + i64(max_ts) +
                 i64(producer_id) + i16(producer_epoch) + i32(base_sequence) +
                 i32(len(records) if count is None else count) + b"".join(encoded))
    crc = crc32c(after_crc)
    if corrupt_crc:
        crc ^= 0xDEADBEEF
    after_len = i32(0) + i8(magic) + u32(crc) + after_crc  # partitionLeaderEpoch, magic, crc
    return i64(base_offset) + i32(len(after_len)) + after_len


def legacy_message_v1(key, value, timestamp=None, offset=0):
    """A magic 1 message set holding one message (pre-0.11 format, CRC-32)."""
    if timestamp is None:
        timestamp = int(time.time() * 1000)
    rest = i8(1) + i8(0) + i64(timestamp) + nbytes(key) + nbytes(value)
    msg = u32(zlib.crc32(rest) & 0xFFFFFFFF) + rest
    return i64(offset) + i32(len(msg)) + msg


def read_records(body, base_offset, base_ts, count):
    """[(offset, timestamp, key, value)] of `count` uncompressed v2 records read from `body`."""
    records = []
    for _ in range(count):
        body.varint()  # length
        body.i8()  # attributes
        ts_delta = body.varint()
        off_delta = body.varint()
        kl = body.varint()
        key = None if kl < 0 else body.take(kl)
        vl = body.varint()
        value = None if vl < 0 else body.take(vl)
        for _ in range(body.varint()):  # headers
            body.take(body.varint())
            body.take(body.varint())
        records.append((base_offset + off_delta, base_ts + ts_delta, key, value))
    return records


def parse_batches(data):
    """Decode stored v2 batches: yields dicts with base_offset, records [(offset, ts, key, value)]."""
    r = Reader(data)
    out = []
    while r.remaining() >= 12:
        base_offset = r.i64()
        length = r.i32()
        if r.remaining() < length:
            break  # a partial batch at the end of a fetch is normal
        body = Reader(r.take(length))
        body.i32()  # partition leader epoch
        magic = body.i8()
        crc = body.u32()
        rest = body.data[body.pos:]
        attributes = body.i16()
        body.i32()
        base_ts = body.i64()
        body.i64()
        body.take(8 + 2 + 4)
        count = body.i32()
        if magic != 2 or attributes & 0x7:
            raise ValueError("parse_batches handles uncompressed magic 2 batches only")
        records = read_records(body, base_offset, base_ts, count)
        out.append({"base_offset": base_offset, "crc_ok": crc32c(rest) == crc, "records": records})
    return out

# ---------------------------------------------------------------- connection

class Connection:
    def __init__(self, port, host="127.0.0.1", timeout=10.0, client_id="raw-test"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.client_id = client_id
        self.correlation = 0

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def header(self, api_key, version, correlation=None):
        if correlation is None:
            self.correlation += 1
            correlation = self.correlation
        return i16(api_key) + i16(version) + i32(correlation) + string(self.client_id)

    def send_raw(self, data):
        self.sock.sendall(data)

    def send_frame(self, payload):
        self.sock.sendall(i32(len(payload)) + payload)

    def send(self, api_key, version, body):
        self.send_frame(self.header(api_key, version) + body)
        return self.correlation

    def recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            buf += chunk
        return bytes(buf)

    def recv_frame(self):
        size = struct.unpack(">i", self.recv_exact(4))[0]
        return self.recv_exact(size)

    def request(self, api_key, version, body):
        """Send a request and return a Reader positioned after the (v0) response header."""
        corr = self.send(api_key, version, body)
        r = Reader(self.recv_frame())
        got = r.i32()
        assert got == corr, f"correlation id {got}, expected {corr}"
        return r

    def closed_by_peer(self, timeout=5.0):
        """True when the broker closes the connection (EOF or reset) within timeout."""
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        return False

# ---------------------------------------------------------------- requests

API_PRODUCE, API_FETCH, API_LIST_OFFSETS, API_METADATA = 0, 1, 2, 3
API_API_VERSIONS, API_DELETE_RECORDS = 18, 21
API_JOIN_GROUP, API_INIT_PRODUCER_ID = 11, 22
API_FIND_COORDINATOR = 10


def api_versions(conn, version=0):
    r = conn.request(API_API_VERSIONS, version, b"")
    error = r.i16()
    apis = r.array(lambda x: (x.i16(), x.i16(), x.i16()))
    return error, {k: (lo, hi) for k, lo, hi in (apis or [])}


def sasl_handshake(conn, mechanism):
    """SaslHandshake v1: (error, mechanisms offered)."""
    r = conn.request(17, 1, string(mechanism))
    return r.i16(), r.array(lambda rr: rr.string())


def sasl_authenticate(conn, token, version=1):
    """SaslAuthenticate v0/v1: (error, message, server token, session lifetime ms)."""
    r = conn.request(36, version, nbytes(token))
    error, message, auth = r.i16(), r.string(), r.nbytes()
    lifetime = r.i64() if version >= 1 else 0
    return error, message, auth, lifetime


def uvarint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def compact_string(s):
    if s is None:
        return uvarint(0)
    b = s.encode()
    return uvarint(len(b) + 1) + b


def flexible_request(conn, api_key, version, body):
    """A request of a flexible version (header v2); a Reader after the response header (v1)."""
    conn.send_frame(conn.header(api_key, version) + b"\x00" + body)
    r = Reader(conn.recv_frame())
    got = r.i32()
    assert got == conn.correlation, f"correlation id {got}, expected {conn.correlation}"
    r.varint()  # the header's tagged fields: none
    return r


def broker_ids(conn):
    """The broker ids a Metadata v1 answer (asking for no topics) lists."""
    r = conn.request(API_METADATA, 1, i32(0))
    brokers = r.array(lambda x: (x.i32(), x.string(), x.i32(), x.string()))
    return sorted(b[0] for b in brokers or [])


def find_coordinator(conn, key, key_type=0):
    """FindCoordinator v1 for a group (key type 0) or a transactional id (1): (error, node id)."""
    r = conn.request(API_FIND_COORDINATOR, 1, string(key) + i8(key_type))
    r.i32()  # throttle
    error = r.i16()
    r.string()  # message
    return error, r.i32()


def init_producer_id(conn):
    """A new idempotent producer id (InitProducerId v0); returns (error, producer_id, epoch)."""
    r = conn.request(API_INIT_PRODUCER_ID, 0, string(None) + i32(60000))
    r.i32()  # throttle
    return r.i16(), r.i64(), r.i16()


def join_group_request(conn, group, member_id="", session_timeout_ms=30000, rebalance_timeout_ms=120000):
    """Sends JoinGroup v2 (no member-id round trip) without waiting; returns the correlation id."""
    body = (string(group) + i32(session_timeout_ms) + i32(rebalance_timeout_ms) + string(member_id) +
            string("consumer") + array(["range"], lambda n: string(n) + nbytes(b"")))
    return conn.send(API_JOIN_GROUP, 2, body)


def join_group_response(conn):
    """Reads a JoinGroup v2 response: (error, generation, member_id)."""
    r = Reader(conn.recv_frame())
    r.i32()  # correlation
    r.i32()  # throttle
    error, generation = r.i16(), r.i32()
    r.string()  # protocol
    r.string()  # leader
    return error, generation, r.string()


def produce(conn, topic, partition, records_bytes, acks=-1, timeout_ms=10000, version=3):
    body = (string(None) + i16(acks) + i32(timeout_ms) +
            array([topic], lambda t: string(t) + array([partition], lambda p: i32(p) + nbytes(records_bytes))))
    r = conn.request(API_PRODUCE, version, body)

    def part(x):
        p = {"partition": x.i32(), "error": x.i16(), "base_offset": x.i64(), "log_append_time": x.i64()}
        if version >= 5:
            p["log_start_offset"] = x.i64()
        if version >= 8:
            p["record_errors"] = x.array(lambda y: (y.i32(), y.string()))
            p["error_message"] = x.string()
        return p

    topics = r.array(lambda x: (x.string(), x.array(part)))
    return topics[0][1][0]


def fetch(conn, topic, partition, offset, max_wait_ms=500, min_bytes=1, max_bytes=1 << 20, version=5):
    body = (i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(0) +
            array([topic], lambda t: string(t) + array([partition], lambda p: i32(p) + i64(offset) + (i64(-1) if version >= 5 else b"") +
                                                            i32(max_bytes))))
    r = conn.request(API_FETCH, version, body)
    r.i32()  # throttle

    def part(x):
        p = {"partition": x.i32(), "error": x.i16(), "high_watermark": x.i64(), "last_stable_offset": x.i64()}
        if version >= 5:
            p["log_start_offset"] = x.i64()
        x.array(lambda y: (y.i64(), y.i64()))
        p["records"] = x.nbytes() or b""
        return p

    topics = r.array(lambda x: (x.string(), x.array(part)))
    return topics[0][1][0]


EARLIEST, LATEST = -2, -1


def list_offsets(conn, topic, partition, timestamp, replica_id=-1):
    body = i32(replica_id) + array([topic], lambda t: string(t) + array([partition], lambda p: i32(p) + i64(timestamp)))
    r = conn.request(API_LIST_OFFSETS, 1, body)
    topics = r.array(lambda x: (x.string(), x.array(
        lambda y: {"partition": y.i32(), "error": y.i16(), "timestamp": y.i64(), "offset": y.i64()})))
    return topics[0][1][0]


def delete_records(conn, topic, partition, offset, timeout_ms=10000):
    body = array([topic], lambda t: string(t) + array([partition], lambda p: i32(p) + i64(offset))) + i32(timeout_ms)
    r = conn.request(API_DELETE_RECORDS, 0, body)
    r.i32()  # throttle
    topics = r.array(lambda x: (x.string(), x.array(
        lambda y: {"partition": y.i32(), "low_watermark": y.i64(), "error": y.i16()})))
    return topics[0][1][0]


def read_partition(port, topic, partition, start=0, end=None, deadline_s=20.0):
    """All records of a partition from start up to end (default: the high watermark), via raw fetches."""
    out = []
    offset = start
    stop_at = time.monotonic() + deadline_s
    with Connection(port) as conn:
        while time.monotonic() < stop_at:
            resp = fetch(conn, topic, partition, offset, max_wait_ms=100)
            if resp["error"]:
                raise RuntimeError(f"fetch error {resp['error']} at offset {offset}")
            target = resp["high_watermark"] if end is None else end
            if offset >= target:
                return out
            for b in parse_batches(resp["records"]):
                for rec in b["records"]:
                    if rec[0] >= offset:
                        out.append(rec)
                        offset = rec[0] + 1
    raise TimeoutError(f"could not read {topic}-{partition} up to its end in {deadline_s}s (at {offset})")
