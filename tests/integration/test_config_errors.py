"""Unknown or invalid settings are refused at start: non-zero exit, promptly, with one
stderr line that names the offending key."""
import subprocess

import pytest

from brokerd_harness import brokerd_binary, free_port, port_answers


@pytest.mark.parametrize("override,key", [
    ("no.such.key=1", "no.such.key"),
    ("num.partitions=abc", "num.partitions"),
    ("num.partitions=0", "num.partitions"),
    ("log.segment.bytes=-5", "log.segment.bytes"),
    ("log.message.timestamp.type=Sometimes", "log.message.timestamp.type"),
    ("auto.create.topics.enable=maybe", "auto.create.topics.enable"),
    ("message.max.bytes=99999999999999", "message.max.bytes"),
    ("max.connections=-1", "max.connections"),
    ("max.connections.per.ip=many", "max.connections.per.ip"),
    ("max.connection.creation.rate=-5", "max.connection.creation.rate"),
    ("max.connections.per.ip.overrides=127.0.0.1", "max.connections.per.ip.overrides"),
    ("max.connections.per.ip.overrides=127.0.0.1:5,:3", "max.connections.per.ip.overrides"),
    ("max.connections.per.ip.overrides=127.0.0.1:-2", "max.connections.per.ip.overrides"),
])
def test_bad_setting_refused(tmp_path, override, key):
    port = free_port()
    cmd = [brokerd_binary(), "--override", f"log.dirs={tmp_path / 'data'}",
           "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}", "--override", override]
    proc = subprocess.run(cmd, capture_output=True, timeout=10)
    assert proc.returncode != 0, "brokerd accepted a bad setting"
    lines = [l for l in proc.stderr.decode().splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one stderr line, got {lines}"
    assert key in lines[0], lines[0]
    assert not port_answers(port)
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir()), \
        "a refused configuration must not touch the data directory"


def test_malformed_override_refused(tmp_path):
    proc = subprocess.run([brokerd_binary(), "--override", "no-equals-sign"], capture_output=True, timeout=10)
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.decode().splitlines() if l.strip()]
    assert len(lines) == 1 and "no-equals-sign" in lines[0], lines


def test_unknown_argument_refused(tmp_path):
    proc = subprocess.run([brokerd_binary(), "--bogus-flag"], capture_output=True, timeout=10)
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.decode().splitlines() if l.strip()]
    assert len(lines) == 1 and "--bogus-flag" in lines[0], lines
