#pragma once
// What a load run does: set by a workload file (--workload FILE) and then by flags, which
// share one table of names, so every flag can also be a workload key and the reverse.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loadgen {

enum class Mode { produce, consume, both };

struct Options {
  std::string workload_name;            // from the workload file, for the report
  std::string bootstrap = "127.0.0.1:9092";
  std::string topic = "brokerd-load";
  int partitions = 6;                   // used when the topic is created
  int replication_factor = 1;
  Mode mode = Mode::both;
  int producers = 1;
  int consumers = 1;
  int record_size = 1024;               // value bytes, at least the 12-byte stamp
  int64_t keys = 0;                     // distinct keys; 0 sends null keys
  std::string acks = "all";
  std::string compression = "none";
  double rate = 0;                      // records/s over all producers; 0 = unthrottled
  double duration_s = 10;
  int64_t records = 0;                  // > 0: stop producing after this many records (all producers), or at duration_s
  double warmup_s = 0;                  // measured, but left out of the final figures
  double linger_ms = 5;
  int batch_size = 1048576;             // librdkafka batch.size (bytes per partition batch)
  int max_in_flight = 5;
  std::string transactional_id;         // non-empty: producer i is transactional, transactional.id PREFIX-i
  double commit_interval_ms = 100;      // a transaction lasts this long, then is committed
  std::string group;                    // consumers join this group instead of assigning
  bool from_beginning = false;          // consumers start at the log start, not the end
  double drain_s = 5;                   // after producing stops, wait this long for consumers
  bool json = false;
  bool progress = true;
  int mock_brokers = 0;                 // > 0: run against librdkafka's in-process mock cluster
  std::vector<std::pair<std::string, std::string>> client_props;    // every client, the admin steps too (TLS, SASL)
  std::vector<std::pair<std::string, std::string>> producer_props;  // extra librdkafka settings
  std::vector<std::pair<std::string, std::string>> consumer_props;

  bool producing() const { return mode != Mode::consume && producers > 0; }
  bool consuming() const { return mode != Mode::produce && consumers > 0; }
  bool transactional() const { return !transactional_id.empty(); }
};

const char* mode_name(Mode m);

// Parses argv (a workload file first, if named, then every flag over it). Throws
// std::runtime_error with a message naming the bad flag or key. Returns false when the
// caller should exit 0 (--help printed).
bool parse_options(int argc, char** argv, Options& out);

}  // namespace loadgen
