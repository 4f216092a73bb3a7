"""Bounded waits for tests."""
import time


def wait_until(cond, timeout, what):
    """Polls cond() every 50 ms; raises AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def eventually(check, timeout=10.0, interval=0.1):
    """Polls check() until it is true or `timeout` seconds pass; returns its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    return check()
