"""Fields that clients fill loosely are read as Apache Kafka reads them: they never turn a
valid request into an error."""
from clients import create_topic
from kafka_wire import EARLIEST, LATEST, Connection, list_offsets, produce, record_batch


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
