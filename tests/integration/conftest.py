"""Shared fixtures: a brokerd factory that kills every broker it started and prints
their logs when a test fails."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "utils"))

from brokerd_harness import Broker  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture
def broker_factory(request, tmp_path):
    """broker_factory(overrides=None, start=True, workdir=None, preexec_fn=None) -> a Broker (started
    unless start=False); each gets its own port and data dir."""
    brokers = []

    def make(overrides=None, start=True, workdir=None, preexec_fn=None):
        b = Broker(workdir or tmp_path / f"broker{len(brokers)}", overrides=overrides, preexec_fn=preexec_fn)
        brokers.append(b)
        if start:
            b.start()
        return b

    yield make
    failed = any(getattr(request.node, "rep_" + w, None) is not None and getattr(request.node, "rep_" + w).failed
                 for w in ("setup", "call"))
    for b in brokers:
        b.kill()
        if failed:
            sys.stderr.write(f"\n===== brokerd output ({b.workdir}) =====\n{b.all_logs()}\n")
    if not failed:
        for b in brokers:
            b.assert_no_sanitizer_reports()


@pytest.fixture
def broker(broker_factory):
    return broker_factory()


JS_DIR = Path(__file__).resolve().parent / "js"


@pytest.fixture(scope="session")
def node():
    """The node binary, with KafkaJS installed under js/ (npm ci on first use)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "node and npm are required for the KafkaJS tests"
    if not (JS_DIR / "node_modules" / "kafkajs").is_dir():
        cmd = [npm, "ci" if (JS_DIR / "package-lock.json").exists() else "install", "--no-audit", "--no-fund"]
        proc = subprocess.run(cmd, cwd=JS_DIR, capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr.decode()
    return node
