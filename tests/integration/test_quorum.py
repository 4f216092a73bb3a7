"""The metadata quorum across real brokerd processes: three voters elect one leader; kill -9
of the leader elects another; SIGSTOP of the leader past the election timeout, then
SIGCONT, leaves one leader (the old one steps down); a restarted node rejoins; bad
configurations stop the start with one line; malformed KRaft requests fail alone."""
import signal
import socket
import struct
import subprocess
import time

import pytest

import kafka_wire as kw
from brokerd_harness import Broker, free_port
from cluster_harness import QuorumCluster


@pytest.fixture
def cluster(tmp_path):
    c = QuorumCluster(tmp_path)
    try:
        yield c.start()
    finally:
        c.tear_down()


def test_three_voters_elect_one_leader_and_agree(cluster):
    leader, epoch = cluster.wait_for_leader()
    q = cluster.quorum(leader)
    assert q["leader"] == leader and q["epoch"] == epoch
    assert sorted(v["id"] for v in q["voters"]) == [1, 2, 3]
    # Every voter replicates the leader's epoch-start entry.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        q = cluster.quorum(leader)
        if q and all(v["log_end_offset"] >= q["high_watermark"] >= 1 for v in q["voters"]):
            break
        time.sleep(0.05)
    assert all(v["lag"] == 0 for v in q["voters"]), q
    # The quorum-state files agree on leader and epoch.
    states = cluster.quorum_state_files()
    assert {s["leaderId"] for s in states.values()} == {leader}, states
    assert {s["leaderEpoch"] for s in states.values()} == {epoch}, states


def test_killing_the_leader_elects_another_and_it_rejoins(cluster):
    times = []
    for _ in range(3):
        leader, epoch = cluster.wait_for_leader()
        cluster.nodes[leader].kill()
        t0 = time.monotonic()
        new_leader, new_epoch = cluster.wait_for_leader(excluding=(leader,))
        times.append(time.monotonic() - t0)
        assert new_leader != leader and new_epoch > epoch
        cluster.restart(leader)
        # The old leader comes back as a follower of the new epoch.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            q = cluster.quorum(leader)
            if q and q["leader"] == new_leader and q["epoch"] >= new_epoch:
                break
            time.sleep(0.05)
        assert q and q["leader"] == new_leader, q
    print("leader failover times (s):", ", ".join(f"{t:.2f}" for t in times))


def test_a_paused_leader_steps_down_without_split_brain(cluster):
    leader, epoch = cluster.wait_for_leader()
    node = cluster.nodes[leader]
    node.proc.send_signal(signal.SIGSTOP)
    try:
        new_leader, new_epoch = cluster.wait_for_leader(among=[i for i in cluster.nodes if i != leader],
                                                        excluding=(leader,))
    finally:
        node.proc.send_signal(signal.SIGCONT)
    assert new_epoch > epoch
    # Once resumed, the old leader learns the new epoch and follows; nobody else claims to lead.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        answers = {i: cluster.quorum(i) for i in cluster.nodes}
        if all(a and a["leader"] == new_leader and a["epoch"] == new_epoch for a in answers.values()):
            break
        time.sleep(0.1)
    assert all(a and a["leader"] == new_leader for a in answers.values()), answers
    states = cluster.quorum_state_files()
    assert states[leader]["leaderEpoch"] == new_epoch, states


def test_full_restart_keeps_the_epoch_moving_forward(cluster):
    leader, epoch = cluster.wait_for_leader()
    for n in cluster.nodes.values():
        n.stop()
    cluster.start()
    _, new_epoch = cluster.wait_for_leader()
    assert new_epoch > epoch


def raw_controller_request(port, api_key, version, body, flexible_header=True):
    header = struct.pack(">hhi", api_key, version, 7) + kw.string("raw-test")
    if flexible_header:
        header += b"\x00"  # no tagged fields
    frame = header + body
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        s.settimeout(5)
        try:
            data = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            data = b""
        return data


def test_malformed_kraft_requests_fail_alone(cluster):
    leader, _ = cluster.wait_for_leader()
    port = cluster.controller_ports[leader]
    for api_key, version in [(52, 2), (53, 1), (54, 1), (1, 17), (59, 1), (55, 2)]:
        # A body of garbage: the connection closes, nothing else happens.
        assert raw_controller_request(port, api_key, version, b"\xff\xff\xff\xff\x01\x02") == b""
    # A client API on the controller listener is not served there.
    assert raw_controller_request(port, 3, 1, b"\x00\x00\x00\x00", flexible_header=False) == b""
    # The leader still leads and answers.
    assert cluster.quorum(leader)["leader"] == leader
    for n in cluster.nodes.values():
        assert n.running()


@pytest.mark.parametrize("case", ["not_a_voter", "no_controller_listener", "port_mismatch", "voter_without_role",
                                  "duplicate_id", "malformed"])
def test_bad_quorum_configuration_stops_the_start_with_one_line(tmp_path, case):
    port, cport = free_port(), free_port()
    listeners = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}"
    props = {"node.id": "1", "listeners": listeners, "controller.quorum.voters": f"1@127.0.0.1:{cport},2@127.0.0.1:1"}
    expect = {
        "not_a_voter": "does not name this node",
        "no_controller_listener": "needs a CONTROLLER://host:port listener",
        "port_mismatch": "but its CONTROLLER listener is on",
        "voter_without_role": "process.roles has no controller role",
        "duplicate_id": "listed twice",
        "malformed": "is not id@host:port",
    }[case]
    if case == "not_a_voter":
        props["controller.quorum.voters"] = f"2@127.0.0.1:{cport},3@127.0.0.1:1"
    elif case == "no_controller_listener":
        props["listeners"] = f"PLAINTEXT://127.0.0.1:{port}"
    elif case == "port_mismatch":
        props["controller.quorum.voters"] = f"1@127.0.0.1:{cport + 1},2@127.0.0.1:1"
    elif case == "voter_without_role":
        props["process.roles"] = "broker"
    elif case == "duplicate_id":
        props["controller.quorum.voters"] = f"1@127.0.0.1:{cport},1@127.0.0.1:1"
    elif case == "malformed":
        props["controller.quorum.voters"] = "1@nowhere"
    b = Broker(tmp_path, overrides=props, port=port)
    with pytest.raises(RuntimeError) as err:
        b.start(timeout=10)
    text = str(err.value)
    assert "exited with 2" in text, text
    lines = [line for line in b.log_text().splitlines() if line.strip()]
    assert len(lines) == 1 and expect in lines[0], lines


def test_a_single_node_keeps_its_topics_alone_and_is_refused_by_a_quorum_of_several(tmp_path):
    # A node that ran alone is a quorum of one: with a controller listener of its own and
    # itself as the only voter, it starts from its metadata as before. Joining a quorum of
    # several is refused rather than risk starting from another log (and deleting partitions).
    from clients import create_topic, wait_for_topic
    alone = Broker(tmp_path)
    alone.start()
    try:
        create_topic(alone.bootstrap, "kept", 1)
        alone.stop()
        cport = free_port()
        alone.overrides.update({"node.id": "1", "listeners": f"PLAINTEXT://127.0.0.1:{alone.port},CONTROLLER://127.0.0.1:{cport}",
                                "controller.quorum.voters": f"1@127.0.0.1:{cport}"})
        alone.start()
        wait_for_topic(alone.bootstrap, "kept", 1)
        alone.stop()
        alone.overrides["controller.quorum.voters"] = f"1@127.0.0.1:{cport},2@127.0.0.1:{free_port()}"
        with pytest.raises(RuntimeError) as err:
            alone.start(timeout=10)
        assert "was written by a quorum of voters 1 but 1,2 are configured" in str(err.value)
        # Likewise a directory of the release before the quorum (no quorum-state file at all).
        (alone.data_dir / "__cluster_metadata-0" / "quorum-state").unlink()
        with pytest.raises(RuntimeError) as err:
            alone.start(timeout=10)
        assert "ran alone" in str(err.value)
        assert (alone.data_dir / "kept-0").is_dir()
    finally:
        alone.kill()


def brokers_seen_by(node, timeout=5):
    """Broker ids that Metadata from `node` lists."""
    from confluent_kafka.admin import AdminClient
    md = AdminClient({"bootstrap.servers": node.bootstrap}).list_topics(timeout=timeout)
    return sorted(md.brokers), md.controller_id


def wait_for_brokers(node, expected, timeout=20):
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        try:
            seen, _ = brokers_seen_by(node)
            if seen == expected:
                return time.monotonic()
        except Exception:  # noqa: BLE001 - a node may be restarting
            pass
        time.sleep(0.05)
    raise AssertionError(f"{node.bootstrap} lists brokers {seen}, expected {expected}")


def test_brokers_register_are_fenced_when_they_die_and_return(cluster):
    leader, _ = cluster.wait_for_leader()
    for n in cluster.nodes.values():
        wait_for_brokers(n, [1, 2, 3])
    # Metadata names the answering broker as the controller (it forwards admin requests).
    assert brokers_seen_by(cluster.nodes[1])[1] == 1
    # kill -9 of a broker that is not the controller: fenced after its session timeout.
    victim = next(i for i in cluster.nodes if i != leader)
    others = [i for i in cluster.nodes if i != victim]
    cluster.nodes[victim].kill()
    t0 = time.monotonic()
    fenced_at = wait_for_brokers(cluster.nodes[others[0]], others)
    print(f"broker {victim} fenced {fenced_at - t0:.2f}s after kill -9")
    assert fenced_at - t0 < 10
    cluster.restart(victim)
    wait_for_brokers(cluster.nodes[others[0]], [1, 2, 3])
    # A clean stop fences the broker at once (controlled shutdown).
    cluster.nodes[victim].stop()
    t0 = time.monotonic()
    gone_at = wait_for_brokers(cluster.nodes[others[0]], others)
    print(f"broker {victim} gone {gone_at - t0:.2f}s after SIGTERM")
    assert gone_at - t0 < 2.5


def test_a_killed_node_is_noticed_by_its_closed_connections_before_any_timeout(tmp_path):
    # Timeouts long enough that only the closed connections explain a quick reaction: the
    # heartbeat connection of a killed broker, and the refused address of a killed leader.
    slow = {"broker.session.timeout.ms": "10000", "controller.quorum.fetch.timeout.ms": "10000"}
    c = QuorumCluster(tmp_path, overrides=slow)
    try:
        c.start()
        leader, epoch = c.wait_for_leader()
        for n in c.nodes.values():
            wait_for_brokers(n, [1, 2, 3])
        victim = next(i for i in c.nodes if i != leader)
        others = [i for i in c.nodes if i != victim]
        c.nodes[victim].kill()
        t0 = time.monotonic()
        fenced = wait_for_brokers(c.nodes[leader], others, timeout=20) - t0
        print(f"broker {victim} fenced {fenced:.2f}s after kill -9")
        assert fenced < 5, "fenced by its session timeout, not by its closed heartbeat connection"
        assert f"broker {victim} sent no heartbeat within 1000 ms of losing its connection" in c.nodes[leader].all_logs()
        c.restart(victim)
        wait_for_brokers(c.nodes[leader], [1, 2, 3])

        # The controller itself: the others see its address refuse and elect at once; the new
        # controller gives the old one's broker only the grace.
        c.nodes[leader].kill()
        t0 = time.monotonic()
        new_leader, new_epoch = c.wait_for_leader(excluding=(leader,))
        elected = time.monotonic() - t0
        survivors = [i for i in c.nodes if i != leader]
        fenced = wait_for_brokers(c.nodes[new_leader], survivors, timeout=30) - t0
        print(f"controller {leader} killed: node {new_leader} elected after {elected:.2f}s, "
              f"broker {leader} fenced after {fenced:.2f}s")
        assert new_epoch > epoch
        assert elected < 5, "elected after the fetch timeout, not when the leader's address refused"
        assert fenced < 6, "fenced after a whole new session, not after the grace"
    finally:
        c.tear_down()


def test_an_admin_client_keeps_creating_topics_when_the_controller_it_knew_dies(cluster):
    # The admin client learns its controller from the quorum's leader, then that node is
    # killed. When Metadata named the quorum's leader, librdkafka waited for the dead node and
    # every CreateTopics timed out; any live broker forwards, so the next one must succeed.
    from confluent_kafka.admin import AdminClient, NewTopic
    leader, _ = cluster.wait_for_leader()
    admin = AdminClient({"bootstrap.servers": cluster.nodes[leader].bootstrap})
    # Once the leader's broker is unfenced, it names itself (before, another live broker).
    deadline = time.monotonic() + 15
    while admin.list_topics(timeout=10).controller_id != leader and time.monotonic() < deadline:
        time.sleep(0.1)
    assert admin.list_topics(timeout=10).controller_id == leader
    cluster.nodes[leader].kill()
    t0 = time.monotonic()
    f = admin.create_topics([NewTopic("after-the-kill", num_partitions=1, replication_factor=2)],
                            operation_timeout=30, request_timeout=30)
    f["after-the-kill"].result(timeout=40)
    took = time.monotonic() - t0
    print(f"CreateTopics through an admin client that knew the dead controller: {took:.2f}s")
    assert took < 20


def test_a_node_stops_at_once_while_a_forwarded_change_waits_for_a_lost_quorum(cluster):
    # Every node stopping at once leaves no quorum: a change forwarded to the controller
    # (here a CreateTopics; in a campaign an ISR change) waits up to the forwarding timeout
    # (30 s) for one. The stop must not wait with it.
    from confluent_kafka.admin import AdminClient, NewTopic
    leader, _ = cluster.wait_for_leader()
    node = next(i for i in cluster.nodes if i != leader)
    for i in cluster.nodes:
        if i != node:
            cluster.nodes[i].kill()
    admin = AdminClient({"bootstrap.servers": cluster.nodes[node].bootstrap})
    pending = admin.create_topics([NewTopic("never", num_partitions=1, replication_factor=1)],
                                  operation_timeout=60, request_timeout=60)
    time.sleep(1.5)  # the request is being forwarded, and retried, by now
    t0 = time.monotonic()
    cluster.nodes[node].stop(timeout=20)
    took = time.monotonic() - t0
    print(f"stopped {took:.2f}s after SIGTERM with a forwarded change waiting")
    assert took < 10
    assert not pending["never"].done() or pending["never"].exception() is not None  # never created


def test_a_node_stops_at_once_while_a_forwarded_change_waits_on_a_hung_controller(cluster):
    # A controller that stands still (SIGSTOP) keeps its connections open and answers
    # nothing: the change forwarded to it waits in a read bounded by the 30 s forwarding
    # timeout. The stop interrupts that read instead of waiting it out.
    from confluent_kafka.admin import AdminClient, NewTopic
    leader, _ = cluster.wait_for_leader()
    node, other = [i for i in cluster.nodes if i != leader]
    cluster.nodes[other].kill()  # no new quorum forms behind the hung controller's back
    cluster.nodes[leader].proc.send_signal(signal.SIGSTOP)
    try:
        admin = AdminClient({"bootstrap.servers": cluster.nodes[node].bootstrap})
        pending = admin.create_topics([NewTopic("never", num_partitions=1, replication_factor=1)],
                                      operation_timeout=60, request_timeout=60)
        time.sleep(1.0)  # forwarded by now, and waiting for the answer
        t0 = time.monotonic()
        cluster.nodes[node].stop(timeout=40)
        took = time.monotonic() - t0
        print(f"stopped {took:.2f}s after SIGTERM with a change forwarded to a hung controller")
        assert took < 10
        assert not pending["never"].done() or pending["never"].exception() is not None
    finally:
        cluster.nodes[leader].proc.send_signal(signal.SIGCONT)


def test_a_broker_only_node_joins_and_a_duplicate_id_is_refused(cluster, tmp_path):
    cluster.wait_for_leader()
    observer = Broker(tmp_path / "observer", overrides={"node.id": "4", "process.roles": "broker",
                                                        "controller.quorum.voters": cluster.voters})
    observer.start()
    try:
        wait_for_brokers(cluster.nodes[1], [1, 2, 3, 4])
        # The observer replays the metadata too: a topic created on the controller shows there.
        from clients import create_topic, wait_for_topic
        leader, _ = cluster.wait_for_leader()
        create_topic(cluster.nodes[leader].bootstrap, "seen-by-observer", 2)
        wait_for_topic(observer.bootstrap, "seen-by-observer", 2)
        twin = Broker(tmp_path / "twin", overrides={"node.id": "4", "process.roles": "broker",
                                                    "controller.quorum.voters": cluster.voters,
                                                    "broker.session.timeout.ms": "1000"})
        with pytest.raises(RuntimeError) as err:
            twin.start(timeout=30)
        assert "already registered by another live process" in str(err.value)
        assert observer.alive()
    finally:
        observer.kill()


def test_a_node_with_another_voter_list_is_refused_and_says_why(tmp_path):
    # Node 3 names node 1 by another host name: the voter lists differ, so node 3 derives
    # another cluster id. The others refuse its requests (INCONSISTENT_CLUSTER_ID) and it
    # says why instead of waiting silently; nodes 1 and 2 are a majority and serve.
    c = QuorumCluster(tmp_path)
    odd = c.voters.replace("1@127.0.0.1:", "1@localhost:")
    c.nodes[3].overrides["controller.quorum.voters"] = odd
    try:
        for i in (1, 2, 3):
            c.nodes[i].start(wait=False)
        c.nodes[1].wait_until_serving(c.START_TIMEOUT_S)
        c.nodes[2].wait_until_serving(c.START_TIMEOUT_S)
        deadline = time.monotonic() + 20
        said = refused = False
        while time.monotonic() < deadline and not (said and refused):
            said = "refuses this node's requests: it belongs to another cluster" in c.nodes[3].log_text()
            refused = any("refusing KRaft requests from node 3" in c.nodes[i].log_text() for i in (1, 2))
            time.sleep(0.2)
        assert said, c.nodes[3].log_text()[-3000:]
        assert refused
        assert c.nodes[3].running() and not kw_port_serves(c.nodes[3].port)
        # One line per peer every ten seconds at most, not one per retry.
        assert c.nodes[3].log_text().count("refuses this node's requests") <= 6
    finally:
        c.tear_down()


def kw_port_serves(port):
    from brokerd_harness import port_answers
    return port_answers(port)


@pytest.mark.parametrize("which", ["client", "controller", "metrics"])
def test_a_node_whose_port_is_taken_exits_before_taking_part_in_the_quorum(tmp_path, which):
    # Another process listens on one of node 3's ports. Node 3 must stop at once, naming the
    # address, before it writes its identity or sends or answers any quorum message; nodes 1
    # and 2 are a majority and serve without it.
    c = QuorumCluster(tmp_path)
    if which == "metrics":
        port = free_port()
        c.nodes[3].overrides["metrics.listener"] = f"127.0.0.1:{port}"
    else:
        port = c.nodes[3].port if which == "client" else c.controller_ports[3]
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        squatter.bind(("127.0.0.1", port))
        squatter.listen(8)
        for i in (1, 2, 3):
            c.nodes[i].start(wait=False)
        t0 = time.monotonic()
        try:
            rc = c.nodes[3].proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            rc = None
        took = time.monotonic() - t0
        log = c.nodes[3].log_text()
        assert rc is not None and rc != 0, f"node 3 still running (or exited 0) {took:.1f} s on:\n{log[-3000:]}"
        assert f"127.0.0.1:{port}" in log and "Address already in use" in log, log[-3000:]
        assert took < 5, f"node 3 took {took:.1f} s to exit"
        # Nothing of the quorum or the cluster reached its dirs: no identity, no metadata log.
        written = sorted(p.name for p in c.nodes[3].data_dir.rglob("*"))
        assert "meta.properties" not in written and not any(n.startswith("__cluster_metadata") for n in written), written
        # The others never heard from it.
        c.nodes[1].wait_until_serving(c.START_TIMEOUT_S)
        c.nodes[2].wait_until_serving(c.START_TIMEOUT_S)
        wait_for_brokers(c.nodes[1], [1, 2])
        for i in (1, 2):
            assert "node 3" not in c.nodes[i].log_text() and "broker 3" not in c.nodes[i].log_text(), \
                c.nodes[i].log_text()[-3000:]
    finally:
        squatter.close()
        c.tear_down()
