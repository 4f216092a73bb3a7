"""The load tool against a live broker, and the systemd unit under systemd-analyze."""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from brokerd_harness import brokerd_binary

REPO = Path(__file__).resolve().parents[2]


def load_tool():
    # BROKERD_BIN is <build>/src/app/brokerd; the tool is <build>/bench/loadgen/brokerd-load.
    path = Path(brokerd_binary()).resolve().parents[2] / "bench" / "loadgen" / "brokerd-load"
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} not built (needs librdkafka-dev and BROKERD_BENCH=ON)")
    return str(path)


def run_load(broker, *flags, timeout=120):
    cmd = [load_tool(), "--bootstrap", broker.bootstrap, "--json", "--quiet", *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)


def test_produce_and_consume_report_sane_figures(broker):
    rate, seconds = 500, 3
    out = run_load(broker, "--workload", str(REPO / "bench/workloads/1kb-6p-rate.yaml"),
                   "--topic", "load-test", "--rate", str(rate), "--duration", str(seconds),
                   "--warmup", "0", "--record-size", "512", "--keys", "100")
    assert out["workload"] == "1kb-6p-rate"
    assert out["partitions"] == 6 and out["acks"] == "all" and out["failures"] == []
    produced, consumed = out["produce"], out["consume"]
    # Paced: about rate * seconds records, every one acknowledged and read back.
    assert 0.7 * rate * seconds <= produced["records"] <= 1.1 * rate * seconds
    assert produced["errors"] == 0 and consumed["errors"] == 0
    assert consumed["records"] == produced["records"]
    # Bytes count values and keys ("k0" .. "k99").
    assert produced["records"] * 514 <= produced["bytes"] <= produced["records"] * 515
    assert 0.5 * rate <= produced["records_per_s"] <= 1.2 * rate
    for lat in (produced["latency_ms"], consumed["e2e_latency_ms"]):
        assert lat["count"] > 0
        assert 0 < lat["p50"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]
        # Generous: a loaded CI machine, but a local broker answers well within seconds.
        assert lat["p50"] < 1000 and lat["max"] < 10000
    # The topic was created with the workload's partition count.
    assert (broker.partition_dir("load-test", 5)).is_dir()


def test_records_stops_producing_after_that_many(broker):
    # Unthrottled, two producers sharing an odd count; --duration only bounds the run.
    out = run_load(broker, "--topic", "load-records", "--mode", "produce", "--producers", "2",
                   "--records", "2001", "--duration", "60", "--record-size", "100", "--keys", "10")
    produced = out["produce"]
    assert out["failures"] == [] and produced["errors"] == 0
    assert produced["records"] == 2001
    assert produced["seconds"] < 30


def test_workload_flags_are_checked(broker):
    proc = subprocess.run([load_tool(), "--bootstrap", broker.bootstrap, "--acks", "2"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "--acks=2" in proc.stderr


def test_systemd_unit_verifies(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # verify checks that ExecStart's binary exists: point a copy at the built one.
    unit = (REPO / "config/brokerd.service").read_text()
    assert "ExecStart=/usr/bin/brokerd --config /etc/brokerd/brokerd.yaml" in unit
    unit = unit.replace("/usr/bin/brokerd", str(Path(brokerd_binary()).resolve()))
    unit = unit.replace("/etc/brokerd/brokerd.yaml", str(REPO / "config/brokerd.yaml"))
    path = tmp_path / "brokerd.service"
    path.write_text(unit)
    proc = subprocess.run([analyze, "verify", str(path)], capture_output=True, text=True, timeout=60)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    # Unknown keys and bad values are only warnings to systemd; refuse them here.
    assert "brokerd.service" not in output, output


def test_consume_from_beginning_counts_records_written_before_the_run(broker):
    # A replay: the records were stamped before the consuming run started, and still count
    # (warm-up is the first seconds of the run by the consumer's clock, not the stamp's age).
    written = run_load(broker, "--topic", "load-replay", "--partitions", "3", "--mode", "produce",
                       "--rate", "1000", "--duration", "2", "--record-size", "1024")
    assert written["failures"] == [] and written["produce"]["errors"] == 0
    records = written["produce"]["records"]
    assert records > 1000
    time.sleep(1.5)
    out = run_load(broker, "--topic", "load-replay", "--mode", "consume", "--from-beginning",
                   "--duration", "4")
    consumed = out["consume"]
    assert consumed["records"] == records, consumed
    assert consumed["errors"] == 0 and out["failures"] == []
    # Nothing was sent during the run, so there is no end-to-end latency to report; the rate
    # is over the time records arrived, not the idle rest of the run.
    assert consumed["e2e_latency_ms"]["count"] == 0
    assert 0 < consumed["seconds"] < 4
