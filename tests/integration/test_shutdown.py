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
