"""Helpers over real Kafka clients (confluent_kafka / librdkafka) used by the integration tests."""
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def admin(bootstrap):
    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap, name, partitions=1, config=None, timeout=15.0):
    a = admin(bootstrap)  # must outlive the futures
    futures = a.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})],
        operation_timeout=timeout, request_timeout=timeout)
    futures[name].result(timeout=timeout)
    wait_for_topic(bootstrap, name, partitions)


def wait_for_topic(bootstrap, name, partitions, timeout=15.0):
    a = admin(bootstrap)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        md = a.list_topics(topic=name, timeout=5)
        t = md.topics.get(name)
        if t is not None and t.error is None and len(t.partitions) == partitions and all(
                p.error is None and p.leader >= 0 for p in t.partitions.values()):
            return
        time.sleep(0.1)
    raise TimeoutError(f"topic {name} not ready with {partitions} partitions")


def producer(bootstrap, **conf):
    base = {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "message.timeout.ms": 30000}
    base.update({k.replace("_", "."): v for k, v in conf.items()})
    return Producer(base)


def produce_and_confirm(p, topic, items, timeout=60.0):
    """items: iterable of dicts for Producer.produce. Returns delivery reports (msg objects), all without error."""
    reports, errors = [], []

    def on_delivery(err, msg):
        (errors if err else reports).append((err, msg))

    for it in items:
        while True:
            try:
                p.produce(topic, on_delivery=on_delivery, **it)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(timeout)
    assert left == 0, f"{left} records not delivered within {timeout}s"
    assert not errors, f"delivery errors: {errors[:5]}"
    return [m for _, m in reports]


def consumer(bootstrap, **conf):
    base = {"bootstrap.servers": bootstrap, "group.id": "brokerd-it-assign", "enable.auto.commit": False,
            "enable.auto.offset.store": False, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100}
    base.update({k.replace("_", "."): v for k, v in conf.items()})
    return Consumer(base)


def watermarks(bootstrap, topic, partition, timeout=10.0, **conf):
    c = consumer(bootstrap, **conf)
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout)
    finally:
        c.close()


# What librdkafka answers while a partition has no leader it can reach: right after a fault
# a node may withhold itself as leader until its metadata is confirmed current (a few
# hundred milliseconds), and clients retry.
_LEADERLESS = {KafkaError._UNKNOWN_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION,
               KafkaError._TIMED_OUT}


def settled_watermarks(bootstrap, topic, partition, timeout=30.0, **conf):
    """(low, high) of one partition, asked again (by a new client, which asks for metadata
    afresh) while the partition has no leader."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return watermarks(bootstrap, topic, partition, timeout=5, **conf)
        except KafkaException as e:
            if e.args[0].code() not in _LEADERLESS or time.monotonic() >= deadline:
                raise
        time.sleep(0.2)


def read_all(bootstrap, topic, partitions, timeout=60.0, start=-2, **conf):
    """Read every partition from `start` (default: beginning) up to its current high watermark.

    Returns {partition: [Message, ...]} in offset order."""
    c = consumer(bootstrap, **conf)
    try:
        ends = {}
        for p in range(partitions):
            try:
                ends[p] = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            except KafkaException as e:
                if e.args[0].code() not in _LEADERLESS:
                    raise
                ends[p] = settled_watermarks(bootstrap, topic, p, **conf)[1]
        out = {p: [] for p in range(partitions)}
        pending = {p for p in range(partitions) if ends[p] > 0}
        if not pending:
            return out
        c.assign([TopicPartition(topic, p, start) for p in range(partitions)])
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                raise KafkaException(m.error())
            out[m.partition()].append(m)
            if m.offset() + 1 >= ends[m.partition()]:
                pending.discard(m.partition())
        assert not pending, (f"partitions {sorted(pending)} not read to their ends {ends} within {timeout}s; "
                             f"got {({p: len(v) for p, v in out.items()})}")
        return out
    finally:
        c.close()


def create_topics_in_batches(bootstrap, names, partitions, batch=500):
    """Creates one-replica topics of `partitions` partitions, `batch` per CreateTopics request
    (how an operator creates thousands); the admin client is closed before returning."""
    a = admin(bootstrap)
    for s in range(0, len(names), batch):
        futures = a.create_topics([NewTopic(n, partitions, 1) for n in names[s:s + batch]],
                                  operation_timeout=120, request_timeout=180)
        for f in futures.values():
            f.result()
    del a


def described_with_synonyms(bootstrap, resource_type, name, include_synonyms):
    """(value, source, [(synonym, value, source)]) per config of a "topic" or "broker" resource,
    through kafka-python, whose DescribeConfigs lets the caller choose include_synonyms."""
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType, KafkaAdminClient
    kind = ConfigResourceType.TOPIC if resource_type == "topic" else ConfigResourceType.BROKER
    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    try:
        responses = client.describe_configs([KConfigResource(kind, name)], include_synonyms=include_synonyms)
    finally:
        client.close()
    out = {}
    for resp in responses:
        for resource in resp.resources:
            assert resource[0] == 0, resource
            for entry in resource[4]:
                out[entry[0]] = (entry[1], entry[3], [tuple(s) for s in entry[5]])
    return out
