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
