"""Fields that clients fill loosely are read as Apache Kafka reads them: they never turn a
valid request into an error."""
from clients import create_topic
from kafka_wire import EARLIEST, LATEST, Connection, list_offsets, produce, record_batch

INVALID_RECORD = 87


def test_list_offsets_with_a_consumer_replica_id_of_zero_is_answered(broker):
    # Some clients leave replica_id at its schema default 0 instead of -1 in their consumers'
    # ListOffsets; Kafka answers them, and only uses replica_id to pick what a follower sees.
    create_topic(broker.bootstrap, "quirks", 1)
    with Connection(broker.port) as conn:
        assert produce(conn, "quirks", 0, record_batch([(b"k", b"v"), (b"k", b"w")]))["error"] == 0
        for replica_id in (0, 1, 7, -1, -2):
            latest = list_offsets(conn, "quirks", 0, LATEST, replica_id=replica_id)
            earliest = list_offsets(conn, "quirks", 0, EARLIEST, replica_id=replica_id)
            assert (latest["error"], latest["offset"]) == (0, 2), (replica_id, latest)
            assert (earliest["error"], earliest["offset"]) == (0, 0), (replica_id, earliest)


def test_a_keyless_record_in_a_compacted_topic_is_named_in_record_errors(broker):
    # KIP-467: ProduceResponse v8+ names the record that failed its batch, so that clients fail
    # it alone with INVALID_RECORD and the batch's others with their "another record" error.
    create_topic(broker.bootstrap, "quirks-compacted", 1, {"cleanup.policy": "compact"})
    batch = record_batch([(b"k1", b"v1"), (None, b"no key"), (b"k3", b"v3")])
    with Connection(broker.port) as conn:
        resp = produce(conn, "quirks-compacted", 0, batch, version=8)
        assert resp["error"] == INVALID_RECORD, resp
        assert [i for i, _ in resp["record_errors"]] == [1], resp
        assert "without key" in resp["record_errors"][0][1], resp
        assert resp["error_message"], resp
        # Older versions have no field for it: the error alone.
        assert produce(conn, "quirks-compacted", 0, batch, version=7)["error"] == INVALID_RECORD
