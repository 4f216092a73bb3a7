"""Every served API at every served version: a valid request gets a response that decodes
with the generated codec of that version, under the right header version, and the
connection stays open for a second request.

The requests are built and the responses checked by brokerd-api-matrix (api_matrix.cc),
which uses the generated codecs; this file starts the broker and runs it.
"""
import os
import subprocess

MATRIX_TIMEOUT_S = 300


def matrix_binary():
    path = os.environ.get("BROKERD_API_MATRIX_BIN")
    assert path, "BROKERD_API_MATRIX_BIN must name the brokerd-api-matrix binary"
    assert os.access(path, os.X_OK), f"BROKERD_API_MATRIX_BIN={path} is not an executable file"
    return path


def test_every_api_at_every_served_version(broker_factory):
    # No initial rebalance delay: the matrix joins many one-member groups. An authorizer, with
    # the matrix's principal a super user: without one the ACL APIs answer SECURITY_DISABLED.
    broker = broker_factory({"group.initial.rebalance.delay.ms": 0,
                             "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                             "super.users": "User:ANONYMOUS"})
    proc = subprocess.run([matrix_binary(), "127.0.0.1", str(broker.port)], capture_output=True,
                          text=True, timeout=MATRIX_TIMEOUT_S)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    summary = [line for line in out.splitlines() if line.startswith("matrix: ")]
    assert summary and summary[-1].endswith(" 0 failures"), out
    assert broker.alive(), broker.log_text()
    # The broker closed no connection because a response failed to encode.
    closed = [line for line in broker.log_text().splitlines() if "; closing" in line]
    assert not closed, "\n".join(closed)
