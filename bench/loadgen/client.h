#pragma once
// librdkafka handles configured from the options, and the admin steps a run needs before
// its workers start: the mock cluster, the topic, the partitions' end offsets, and whether
// the broker serves consumer groups.

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "options.h"

struct rd_kafka_mock_cluster_s;

namespace loadgen {

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

enum class ClientKind { producer, consumer, admin };

// A configured conf for `kind` with the options' settings applied; throws on a setting
// librdkafka refuses. The caller may add callbacks before creating the handle.
rd_kafka_conf_t* make_conf(const Options& o, ClientKind kind, const std::string& client_id);
KafkaHandle make_client(rd_kafka_conf_t* conf, rd_kafka_type_t type);

// librdkafka's in-process mock cluster; its bootstrap address replaces --bootstrap.
class MockCluster {
public:
  MockCluster(int brokers);
  ~MockCluster();
  std::string bootstrap() const;
  void create_topic(const std::string& topic, int partitions, int replication_factor);

private:
  KafkaHandle _owner;
  ::rd_kafka_mock_cluster_s* _cluster = nullptr;
};

// Creates the topic with o.partitions if it does not exist and waits until every partition
// has a leader. Returns the topic's partition count (which may differ from o.partitions
// when the topic already existed).
int ensure_topic(const Options& o);

// The high watermark of each partition 0..partitions-1.
std::vector<int64_t> end_offsets(rd_kafka_t* rk, const std::string& topic, int partitions);

struct GroupSupport {
  bool served = false;
  std::string detail;
};
// Asks the broker to describe the group: an error (no coordinator, API not served) means
// consumers could not join one.
GroupSupport probe_groups(const Options& o, const std::string& group);

}  // namespace loadgen
