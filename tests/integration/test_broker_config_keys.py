"""Which keys a BROKER resource takes, as Kafka decides it: keys Kafka reconfigures at runtime
(applied, or stored without effect when brokerd has no such mechanism), listener overrides,
custom keys (stored), and read-only keys refused with INVALID_REQUEST; through AlterConfigs
and IncrementalAlterConfigs. DescribeConfigs lists what is stored with Kafka's synonyms, and
a topic's retention.ms with the ones Kafka lists."""
import json
import struct
import subprocess

from confluent_kafka import KafkaError
from confluent_kafka.admin import ConfigResource, NewTopic

import clients
from brokerd_harness import brokerctl_binary
from kafka_wire import Connection, compact_string, flexible_request, uvarint

BROKER = 4
SET, DELETE, APPEND = 0, 1, 2
INVALID_REQUEST, INVALID_CONFIG = 42, 40
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5
API_INCREMENTAL_ALTER_CONFIGS = 44

KERBEROS = "sasl.kerberos.min.time.before.relogin"
LISTENER_KEY = "listener.name.plaintext.ssl.keystore.location"


def incremental_alter(broker, resource_name, ops, validate_only=False):
    """IncrementalAlterConfigs v1 on one broker resource: [(name, op, value)] -> (error, message)."""
    def config(name, op, value):
        return compact_string(name) + struct.pack(">b", op) + compact_string(value) + uvarint(0)
    body = (uvarint(2) + struct.pack(">b", BROKER) + compact_string(resource_name)
            + uvarint(len(ops) + 1) + b"".join(config(*op) for op in ops) + uvarint(0)
            + struct.pack(">?", validate_only) + uvarint(0))
    with Connection(broker.port) as conn:
        r = flexible_request(conn, API_INCREMENTAL_ALTER_CONFIGS, 1, body)
        r.i32()  # throttle
        assert r.uvarint() == 2, "one resource answered"
        error = r.i16()
        n = r.uvarint()
        message = r.take(n - 1).decode() if n else None
        return error, message




def legacy_alter(broker, resource_name, configs):
    """AlterConfigs (librdkafka) on a broker resource: None, or the KafkaError it answered."""
    res = ConfigResource("broker", resource_name, set_config=configs)
    a = clients.admin(broker.bootstrap)  # kept alive until the answer arrives
    try:
        a.alter_configs([res])[res].result(timeout=30)
        return None
    except Exception as e:  # KafkaException carrying the answer's error
        return e.args[0]


def broker_configs(broker, name="1"):
    """DescribeConfigs with synonyms of a broker's own resource (kafka-python names no other)."""
    return clients.described_with_synonyms(broker.bootstrap, "broker", name, True)


def test_keys_kafka_reconfigures_are_taken_and_described(broker):
    assert legacy_alter(broker, "1", {KERBEROS: "58000", LISTENER_KEY: "/etc/brokerd/other.pem",
                                       "log.retention.ms": "86400000"}) is None
    got = broker_configs(broker)
    assert got[KERBEROS] == ("58000", DYNAMIC_BROKER, [(KERBEROS, "58000", DYNAMIC_BROKER),
                                                       (KERBEROS, "60000", DEFAULT)]), got[KERBEROS]
    value, source, synonyms = got[LISTENER_KEY]
    assert (value, source) == ("/etc/brokerd/other.pem", DYNAMIC_BROKER), got[LISTENER_KEY]
    assert synonyms[0] == (LISTENER_KEY, "/etc/brokerd/other.pem", DYNAMIC_BROKER), synonyms
    assert got["log.retention.ms"][:2] == ("86400000", DYNAMIC_BROKER)
    assert "brokerd does not act on it" in broker.all_logs() and KERBEROS in broker.all_logs()

    # IncrementalAlterConfigs: set, then delete, a per-listener key Kafka reconfigures.
    assert incremental_alter(broker, "1", [("listener.name.plaintext.sasl.kerberos.service.name", SET, "kafka")]) == (0, None)
    assert broker_configs(broker)["listener.name.plaintext.sasl.kerberos.service.name"][:2] == ("kafka", DYNAMIC_BROKER)
    assert incremental_alter(broker, "1", [("listener.name.plaintext.sasl.kerberos.service.name", DELETE, None)]) == (0, None)
    assert "listener.name.plaintext.sasl.kerberos.service.name" not in broker_configs(broker)
    # AlterConfigs replaced the whole set: the Kerberos key is still there.
    assert broker_configs(broker)[KERBEROS][0] == "58000"


def test_custom_keys_are_stored_as_kafka_stores_them(broker):
    # cleanup.policy is a topic key: on a broker resource Kafka keeps it as a custom key,
    # describes it without a value (it cannot type it) and acts on nothing.
    assert incremental_alter(broker, "1", [("cleanup.policy", SET, "compact")]) == (0, None)
    assert incremental_alter(broker, "", [("no.such.config", SET, "1")]) == (0, None)
    got = broker_configs(broker)
    assert got["cleanup.policy"] == (None, DYNAMIC_BROKER, [("cleanup.policy", None, DYNAMIC_BROKER)]), got["cleanup.policy"]
    assert got["no.such.config"][1] == DYNAMIC_DEFAULT, got["no.such.config"]
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", broker.bootstrap, "configs", "describe",
                           "--entity-type", "brokers", "--entity-default", "--output", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    [stored] = json.loads(proc.stdout)["configs"]
    assert (stored["name"], stored["source"], stored["sensitive"]) == ("no.such.config", "DYNAMIC_DEFAULT_BROKER_CONFIG", True)
    assert "cleanup.policy stored for broker 1" in broker.all_logs()
    # The broker's own log.cleanup.policy is untouched.
    assert got["log.cleanup.policy"][:2] == ("delete", DEFAULT)


def test_read_only_keys_are_refused_with_kafkas_code(broker):
    for name, value in [("broker.id", "7"), ("log.dirs", "/elsewhere"), ("log.retention.hours", "1")]:
        err = legacy_alter(broker, "1", {name: value})
        assert err is not None and err.code() == KafkaError.INVALID_REQUEST, (name, err)
        assert f"Cannot update these configs dynamically: Set({name})" in err.str(), err
        error, message = incremental_alter(broker, "1", [(name, SET, value)])
        assert error == INVALID_REQUEST and f"Set({name})" in message, (name, error, message)
    # Key stores only per listener; per-broker keys not on the cluster default.
    error, message = incremental_alter(broker, "1", [("ssl.keystore.location", SET, "/k.pem")])
    assert error == INVALID_REQUEST and "only per-listener using the listener prefix" in message, message
    error, message = incremental_alter(broker, "", [(KERBEROS, SET, "58000")])
    assert error == INVALID_REQUEST and "broker id must be specified" in message, message
    # A value Kafka cannot parse, and APPEND on a key that is not a list.
    error, message = incremental_alter(broker, "1", [(KERBEROS, SET, "soon")])
    assert error == INVALID_REQUEST and KERBEROS in message, message
    assert incremental_alter(broker, "1", [(KERBEROS, APPEND, "1")])[0] == INVALID_CONFIG
    assert KERBEROS not in broker_configs(broker)


def test_retention_ms_lists_kafkas_synonyms(broker):
    a = clients.admin(broker.bootstrap)
    a.create_topics([NewTopic("kept", 1, 1)], operation_timeout=15)["kept"].result(timeout=30)
    got = clients.described_with_synonyms(broker.bootstrap, "topic", "kept", True)
    # Nothing sets log.retention.ms, which has no default: Kafka lists no synonym at all (its
    # default lives in log.retention.hours, which the list would start after).
    assert got["retention.ms"] == ("604800000", DEFAULT, []), got["retention.ms"]
    assert got["segment.ms"] == ("604800000", DEFAULT, []), got["segment.ms"]
    described = broker_configs(broker)
    assert described["log.retention.hours"] == ("168", DEFAULT, [("log.retention.hours", "168", DEFAULT)])
    assert described["log.retention.ms"] == (None, DEFAULT, []), described["log.retention.ms"]

    # Once log.retention.ms is set, the list starts with it and goes on to the hours' default.
    assert incremental_alter(broker, "", [("log.retention.ms", SET, "3600000")]) == (0, None)
    got = clients.described_with_synonyms(broker.bootstrap, "topic", "kept", True)
    assert got["retention.ms"] == ("3600000", DYNAMIC_DEFAULT, [("log.retention.ms", "3600000", DYNAMIC_DEFAULT),
                                                                ("log.retention.hours", "168", DEFAULT)]), got["retention.ms"]


def test_hours_set_the_topic_default_without_a_synonym_for_it(broker_factory):
    b = broker_factory({"log.roll.hours": 2, "log.retention.minutes": 90})
    a = clients.admin(b.bootstrap)
    a.create_topics([NewTopic("rolled", 1, 1)], operation_timeout=15)["rolled"].result(timeout=30)
    got = clients.described_with_synonyms(b.bootstrap, "topic", "rolled", True)
    # The value follows log.roll.hours; the list, from log.roll.ms, is empty (as Kafka's).
    assert got["segment.ms"] == ("7200000", DEFAULT, []), got["segment.ms"]
    assert got["retention.ms"] == ("5400000", DEFAULT, []), got["retention.ms"]
    described = broker_configs(b)
    assert described["log.roll.hours"] == ("2", STATIC, [("log.roll.hours", "2", STATIC), ("log.roll.hours", "168", DEFAULT)])
    assert described["log.retention.minutes"] == ("90", STATIC, [("log.retention.minutes", "90", STATIC),
                                                                 ("log.retention.hours", "168", DEFAULT)])
