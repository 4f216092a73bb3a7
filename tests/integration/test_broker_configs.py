"""Dynamic broker configs on a running node: IncrementalAlterConfigs (through brokerctl) and
AlterConfigs (through librdkafka) on BROKER resources, the cluster-wide default ("") under
a broker's own, over the static config. DescribeConfigs reports each layer with Kafka's
sources and synonyms; the partitions take a new default at once and keep it across a
restart; what needs a restart is refused with the reason (INVALID_REQUEST, as Kafka)."""
import json
import subprocess

from confluent_kafka import KafkaError
from confluent_kafka.admin import ConfigResource, NewTopic

import clients
from brokerd_harness import brokerctl_binary

DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5


def brokerctl(broker, *args):
    proc = subprocess.run([brokerctl_binary(), "--bootstrap-server", broker.bootstrap, *args],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


def alter(broker, *args):
    code, out = brokerctl(broker, "configs", "alter", "--entity-type", "brokers", *args)
    assert code == 0, out


def described_broker(broker, *entity):
    code, out = brokerctl(broker, "configs", "describe", "--entity-type", "brokers", *entity, "--output", "json")
    assert code == 0, out
    return {c["name"]: (c["value"], c["source"]) for c in json.loads(out)["configs"]}


def create(broker, name, partitions=1):
    a = clients.admin(broker.bootstrap)
    a.create_topics([NewTopic(name, partitions, 1)], operation_timeout=15)[name].result(timeout=30)


def produce_one(broker, topic, size):
    """The delivery error of one record of `size` bytes (None when it was written)."""
    p = clients.producer(broker.bootstrap, message_timeout_ms=10000)
    result = []
    p.produce(topic, value=b"x" * size, on_delivery=lambda err, msg: result.append(err))
    assert p.flush(20) == 0
    return result[0]


def test_a_brokers_own_value_wins_over_the_cluster_default_over_the_static_one(broker_factory):
    b = broker_factory({"log.retention.ms": 3600000})
    create(b, "layered")
    alter(b, "--entity-default", "--set", "log.retention.ms=7200000")
    got = clients.described_with_synonyms(b.bootstrap, "topic", "layered", True)["retention.ms"]
    assert got == ("7200000", DYNAMIC_DEFAULT, [("log.retention.ms", "7200000", DYNAMIC_DEFAULT),
                                                ("log.retention.ms", "3600000", STATIC),
                                                ("log.retention.hours", "168", DEFAULT)]), got

    alter(b, "--entity-name", "1", "--set", "log.retention.ms=10800000", "--set", "num.partitions=2")
    value, source, synonyms = clients.described_with_synonyms(b.bootstrap, "topic", "layered", True)["retention.ms"]
    assert (value, source) == ("10800000", DYNAMIC_BROKER)
    assert [s[2] for s in synonyms] == [DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT], synonyms

    # The broker resource shows what is in force, the default resource only its own entries.
    mine = described_broker(b, "--entity-name", "1")
    assert mine["log.retention.ms"] == ("10800000", "DYNAMIC_BROKER_CONFIG"), mine["log.retention.ms"]
    assert mine["num.partitions"] == ("2", "DYNAMIC_BROKER_CONFIG")
    assert mine["log.segment.bytes"][1] == "DEFAULT_CONFIG"
    assert described_broker(b, "--entity-default") == {"log.retention.ms": ("7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG")}

    # Deleting the broker's own value falls back to the cluster default.
    alter(b, "--entity-name", "1", "--delete", "log.retention.ms")
    assert clients.described_with_synonyms(b.bootstrap, "topic", "layered", True)["retention.ms"][:2] == ("7200000", DYNAMIC_DEFAULT)
    assert described_broker(b, "--entity-name", "1")["num.partitions"] == ("2", "DYNAMIC_BROKER_CONFIG")


def test_a_new_default_takes_effect_at_once_and_after_a_restart(broker_factory):
    b = broker_factory()
    create(b, "sized")
    assert produce_one(b, "sized", 3000) is None
    # AlterConfigs (the legacy API) replaces the broker's whole set.
    a = clients.admin(b.bootstrap)
    res = ConfigResource("broker", "1", set_config={"message.max.bytes": "2000", "num.partitions": "3"})
    a.alter_configs([res])[res].result(timeout=30)
    err = produce_one(b, "sized", 3000)
    assert err is not None and err.code() == KafkaError.MSG_SIZE_TOO_LARGE, err
    assert produce_one(b, "sized", 1000) is None
    # Auto-created topics take the dynamic num.partitions.
    clients.produce_and_confirm(clients.producer(b.bootstrap), "auto-created", [{"value": b"v"}])
    assert len(a.list_topics("auto-created", timeout=10).topics["auto-created"].partitions) == 3

    b.stop()
    b.start()
    err = produce_one(b, "sized", 3000)
    assert err is not None and err.code() == KafkaError.MSG_SIZE_TOO_LARGE, "the dynamic config was lost at restart"
    alter(b, "--entity-name", "1", "--delete", "message.max.bytes")
    assert produce_one(b, "sized", 3000) is None


def test_changes_that_need_a_restart_or_make_no_sense_are_refused_with_the_reason(broker):
    # Kafka's answer to both: INVALID_REQUEST (test_broker_config_keys covers the key classes).
    a = clients.admin(broker.bootstrap)
    for configs, needle in [({"log.dirs": "/elsewhere"}, "Cannot update these configs dynamically: Set(log.dirs)"),
                            ({"log.retention.ms": "soon"}, "log.retention.ms")]:
        res = ConfigResource("broker", "1", set_config=configs)
        try:
            a.alter_configs([res])[res].result(timeout=30)
            raise AssertionError(f"{configs} accepted")
        except Exception as e:  # KafkaException carrying INVALID_REQUEST
            err = e.args[0]
            assert err.code() == KafkaError.INVALID_REQUEST and needle in err.str(), err
    # brokerctl checks the same before sending anything.
    code, out = brokerctl(broker, "configs", "alter", "--entity-type", "brokers", "--entity-default",
                          "--set", "broker.id=4")
    assert code == 2 and "Cannot update these configs dynamically" in out, out
    assert described_broker(broker, "--entity-default") == {}
