#include "client.h"

#include <fmt/core.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace loadgen {
namespace {

constexpr int admin_timeout_ms = 15000;

void set(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(fmt::format("librdkafka setting {}={}: {}", key, value, err));
  }
}

struct EventDeleter {
  void operator()(rd_kafka_event_t* ev) const { rd_kafka_event_destroy(ev); }
};
using Event = std::unique_ptr<rd_kafka_event_t, EventDeleter>;

// Waits for the result of one admin call on its own queue.
Event wait_result(rd_kafka_queue_t* queue) {
  Event ev(rd_kafka_queue_poll(queue, admin_timeout_ms + 5000));
  if (!ev) throw std::runtime_error("admin request timed out");
  if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error(fmt::format("admin request failed: {}", rd_kafka_event_error_string(ev.get())));
  return ev;
}

// Partition count and whether every partition has a leader, or -1 if the topic is unknown.
int leader_ready_partitions(rd_kafka_t* rk, const std::string& topic, bool& all_led) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 5000);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return -1;
  int count = -1;
  all_led = false;
  if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    count = md->topics[0].partition_cnt;
    all_led = count > 0;
    for (int i = 0; i < count; ++i)
      if (md->topics[0].partitions[i].leader < 0 || md->topics[0].partitions[i].err) all_led = false;
  }
  rd_kafka_metadata_destroy(md);
  return count;
}

}  // namespace

void KafkaDeleter::operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }

rd_kafka_conf_t* make_conf(const Options& o, ClientKind kind, const std::string& client_id) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", o.bootstrap);
  set(conf, "client.id", client_id);
  // Metadata requests must not create the topic with the broker's defaults behind our back.
  set(conf, "allow.auto.create.topics", "false");
  for (const auto& [k, v] : o.client_props) set(conf, k, v);
  if (kind == ClientKind::producer) {
    set(conf, "acks", o.acks);
    set(conf, "compression.type", o.compression);
    set(conf, "linger.ms", fmt::format("{}", o.linger_ms));
    set(conf, "batch.size", std::to_string(o.batch_size));
    set(conf, "max.in.flight.requests.per.connection", std::to_string(o.max_in_flight));
    for (const auto& [k, v] : o.producer_props) set(conf, k, v);
  } else if (kind == ClientKind::consumer) {
    set(conf, "group.id", o.group.empty() ? "brokerd-load-unused" : o.group);
    set(conf, "enable.auto.commit", o.group.empty() ? "false" : "true");
    set(conf, "enable.auto.offset.store", o.group.empty() ? "false" : "true");
    set(conf, "auto.offset.reset", o.from_beginning ? "earliest" : "latest");
    // No partition EOF events: they are not records.
    set(conf, "enable.partition.eof", "false");
    for (const auto& [k, v] : o.consumer_props) set(conf, k, v);
  }
  return conf;
}

KafkaHandle make_client(rd_kafka_conf_t* conf, rd_kafka_type_t type) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(fmt::format("cannot create a librdkafka client: {}", err));
  }
  return KafkaHandle(rk);
}

MockCluster::MockCluster(int brokers) {
  // This handle only hosts the cluster; it never connects, so its warnings are noise.
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "log_level", "3");
  _owner = make_client(conf, RD_KAFKA_PRODUCER);
  _cluster = rd_kafka_mock_cluster_new(_owner.get(), brokers);
  if (_cluster == nullptr) throw std::runtime_error("cannot start librdkafka's mock cluster");
}

MockCluster::~MockCluster() {
  if (_cluster != nullptr) rd_kafka_mock_cluster_destroy(_cluster);
}

std::string MockCluster::bootstrap() const { return rd_kafka_mock_cluster_bootstraps(_cluster); }

void MockCluster::create_topic(const std::string& topic, int partitions, int replication_factor) {
  rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(_cluster, topic.c_str(), partitions, replication_factor);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw std::runtime_error(fmt::format("mock topic {}: {}", topic, rd_kafka_err2str(err)));
}

int ensure_topic(const Options& o) {
  KafkaHandle rk = make_client(make_conf(o, ClientKind::admin, "brokerd-load-admin"), RD_KAFKA_PRODUCER);
  bool all_led = false;
  int existing = leader_ready_partitions(rk.get(), o.topic, all_led);
  if (existing < 0) {
    char err[512];
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(o.topic.c_str(), o.partitions, o.replication_factor, err, sizeof err);
    if (nt == nullptr) throw std::runtime_error(fmt::format("topic {}: {}", o.topic, err));
    rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
    rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(opts, admin_timeout_ms, err, sizeof err);
    rd_kafka_CreateTopics(rk.get(), &nt, 1, opts, queue);
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_NewTopic_destroy(nt);
    try {
      Event ev = wait_result(queue);
      size_t n = 0;
      const rd_kafka_topic_result_t** results =
          rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev.get()), &n);
      for (size_t i = 0; i < n; ++i) {
        auto e = rd_kafka_topic_result_error(results[i]);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
          throw std::runtime_error(fmt::format("creating topic {}: {}", o.topic, rd_kafka_err2str(e)));
      }
    } catch (...) {
      rd_kafka_queue_destroy(queue);
      throw;
    }
    rd_kafka_queue_destroy(queue);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(admin_timeout_ms);
  for (;;) {
    int count = leader_ready_partitions(rk.get(), o.topic, all_led);
    if (count > 0 && all_led) return count;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format("topic {} has no leader for every partition after {} ms", o.topic,
                                           admin_timeout_ms));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<int64_t> end_offsets(rd_kafka_t* rk, const std::string& topic, int partitions) {
  std::vector<int64_t> ends;
  for (int p = 0; p < partitions; ++p) {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &low, &high, 10000);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw std::runtime_error(fmt::format("end offset of {}-{}: {}", topic, p, rd_kafka_err2str(err)));
    ends.push_back(high);
  }
  return ends;
}

GroupSupport probe_groups(const Options& o, const std::string& group) {
  KafkaHandle rk = make_client(make_conf(o, ClientKind::admin, "brokerd-load-admin"), RD_KAFKA_PRODUCER);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  char err[512];
  rd_kafka_AdminOptions_set_request_timeout(opts, 10000, err, sizeof err);
  const char* groups[] = {group.c_str()};
  rd_kafka_DescribeConsumerGroups(rk.get(), groups, 1, opts, queue);
  rd_kafka_AdminOptions_destroy(opts);
  GroupSupport out;
  Event ev(rd_kafka_queue_poll(queue, 15000));
  rd_kafka_queue_destroy(queue);
  if (!ev) {
    out.detail = "DescribeConsumerGroups timed out";
  } else if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.detail = rd_kafka_event_error_string(ev.get());
  } else {
    size_t n = 0;
    const rd_kafka_ConsumerGroupDescription_t** d =
        rd_kafka_DescribeConsumerGroups_result_groups(rd_kafka_event_DescribeConsumerGroups_result(ev.get()), &n);
    const rd_kafka_error_t* e = n == 1 ? rd_kafka_ConsumerGroupDescription_error(d[0]) : nullptr;
    if (n != 1) out.detail = "no description returned";
    else if (e != nullptr) out.detail = rd_kafka_error_string(e);
    else out.served = true;
  }
  return out;
}

}  // namespace loadgen
