"""SIGTERM under load: exit 0, 'shutdown complete', and a restart that needs no recovery
and still holds every acknowledged record."""
import threading
import time

from confluent_kafka import Producer

from clients import create_topic, produce_and_confirm, producer, read_all


def test_sigterm_while_producing(broker):
    topic = "graceful"
    create_topic(broker.bootstrap, topic, 4)
    acked = []
    lock = threading.Lock()
    stop = threading.Event()

    def on_delivery(err, msg):
        if err is None:
            with lock:
                acked.append((msg.partition(), msg.offset(), msg.value()))

    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 2,
                  "message.timeout.ms": 3000, "reconnect.backoff.max.ms": 200})

    def run():
        seq = 0
        while not stop.is_set():
            try:
                p.produce(topic, key=f"k{seq % 11}", value=str(seq).encode(), on_delivery=on_delivery)
                seq += 1
            except BufferError:
                pass
            p.poll(0.001)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with lock:
            if len(acked) >= 2000:
                break
        time.sleep(0.02)
    t0 = time.monotonic()
    broker.stop()  # asserts exit code 0 and 'shutdown complete'
    assert time.monotonic() - t0 < 10, "shutdown under load took too long"
    stop.set()
    t.join(timeout=10)
    p.flush(5)
    with lock:
        acked_now = list(acked)
    assert len(acked_now) >= 500

    broker.restart()
    log = broker.log_text()
    assert "not shut down cleanly" not in log, log
    assert "recovered segment" not in log, log
    got = read_all(broker.bootstrap, topic, 4)
    stored = {(pt, m.offset()): m.value() for pt, msgs in got.items() for m in msgs}
    lost = [a for a in acked_now if stored.get((a[0], a[1])) != a[2]]
    assert not lost, f"{len(lost)} acknowledged records missing after a clean restart, e.g. {lost[:5]}"
    # And the restarted broker accepts writes.
    reports = produce_and_confirm(producer(broker.bootstrap), topic, [{"value": b"after", "partition": 0}])
    assert reports[0].offset() == len(got[0])


def test_sigterm_idle_and_sigint(broker):
    broker.stop()
    broker.restart()
    assert "not shut down cleanly" not in broker.log_text()
    import signal
    broker.proc.send_signal(signal.SIGINT)
    assert broker.proc.wait(timeout=20) == 0
    assert "shutdown complete" in broker.log_text()


def test_sigterm_with_parked_fetches_and_rebalance_waits(broker):
    """Long polls and a JoinGroup waiting for a rebalance are answered at once by a stop, which
    then ends quickly and cleanly (once it waited out the drain and crashed at teardown)."""
    import kafka_wire as kw
    topic = "parked"
    create_topic(broker.bootstrap, topic, 4)
    conns = []
    try:
        # Fetches at the log end with a two-minute max wait: each parks in the purgatory.
        for i in range(400):
            c = kw.Connection(broker.port)
            conns.append(c)
            body = (kw.i32(-1) + kw.i32(120000) + kw.i32(1) + kw.i32(1 << 20) + kw.i8(0) +
                    kw.array([topic], lambda t: kw.string(t) + kw.array(
                        [i % 4], lambda p: kw.i32(p) + kw.i64(0) + kw.i64(-1) + kw.i32(1 << 20))))
            c.send(kw.API_FETCH, 5, body)
        # A group of two: the first member is in, the second's JoinGroup waits for it to rejoin
        # (up to its two-minute rebalance timeout).
        first = kw.Connection(broker.port, timeout=30)
        conns.append(first)
        kw.join_group_request(first, "parked-group")
        err, generation, member = kw.join_group_response(first)
        assert err == 0 and generation == 1
        second = kw.Connection(broker.port, timeout=30)
        conns.append(second)
        kw.join_group_request(second, "parked-group")
        time.sleep(1.0)  # everything parked
        t0 = time.monotonic()
        broker.stop()  # asserts exit code 0 and 'shutdown complete'
        took = time.monotonic() - t0
        print(f"stop with 400 parked fetches and a rebalance wait: {took:.3f}s")
        assert took < 5, f"stop took {took:.1f}s"
        log = broker.log_text()
        assert "exiting without teardown" not in log, log
        # The waits were answered, not cut: each connection got its response.
        answered = 0
        for c in conns[:400]:
            c.sock.settimeout(5)
            try:
                c.recv_frame()
                answered += 1
            except (ConnectionError, OSError):
                pass
        assert answered == 400, f"only {answered} of 400 parked fetches were answered"
    finally:
        for c in conns:
            c.close()
    broker.restart()
    assert "not shut down cleanly" not in broker.log_text()
