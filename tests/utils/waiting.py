"""Bounded waits for tests."""
import time


def wait_until(cond, timeout, what, interval=0.05):
    """Polls cond() every `interval` seconds; returns the monotonic time it first held, or
    raises AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return time.monotonic()
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def eventually(check, timeout=10.0, interval=0.1):
    """Polls check() until it is true or `timeout` seconds pass; returns its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    return check()
