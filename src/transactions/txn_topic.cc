// The coordinator's settings, and __transaction_state itself.
#include <atomic>
#include <map>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/transactions/transaction_coordinator.h"

namespace brokerd::transactions {

Settings settings_from(const config::BrokerConfig& cfg) {
  Settings s;
  s.rules.max_timeout_ms = static_cast<int32_t>(cfg.integer("transaction.max.timeout.ms"));
  s.rules.transactional_id_expiration_ms = cfg.integer("transactional.id.expiration.ms");
  s.rules.log_partitions = static_cast<int32_t>(cfg.integer("transaction.state.log.num.partitions"));
  s.replication_factor = static_cast<int16_t>(cfg.integer("transaction.state.log.replication.factor"));
  s.min_isr = static_cast<int32_t>(cfg.integer("transaction.state.log.min.isr"));
  s.segment_bytes = static_cast<int32_t>(cfg.integer("transaction.state.log.segment.bytes"));
  s.abort_check_interval_ms = cfg.integer("transaction.abort.timed.out.transaction.cleanup.interval.ms");
  s.expire_check_interval_ms = cfg.integer("transaction.remove.expired.transaction.cleanup.interval.ms");
  s.verify_partitions = cfg.boolean("transaction.partition.verification.enable");
  return s;
}

int32_t ensure_transaction_topic(metadata::MetadataStore& metadata, const Settings& settings) {
  std::string name(kTransactionStateTopic);
  if (const auto* t = metadata.image()->topic(name)) return t->partition_count();
  // Kafka's settings for this topic: compacted, uncompressed, its own segment size and
  // min.insync.replicas (a coordinator's writes are acks=all).
  std::map<std::string, std::string> configs{{"cleanup.policy", "compact"},
                                             {"compression.type", "uncompressed"},
                                             {"segment.bytes", std::to_string(settings.segment_bytes)},
                                             {"min.insync.replicas", std::to_string(settings.min_isr)},
                                             {"unclean.leader.election.enable", "false"}};
  auto change = metadata.create_topic(name, settings.rules.log_partitions, settings.replication_factor, configs, false);
  if (change.error == ErrorCode::not_controller || change.error == ErrorCode::topic_already_exists)
    return settings.rules.log_partitions;
  if (change.error == ErrorCode::invalid_replication_factor) {
    // Too few brokers yet: transactional producers retry on COORDINATOR_NOT_AVAILABLE.
    static std::atomic<int64_t> last_said{INT64_MIN / 2};
    const int64_t now = wall_clock_ms();
    if (now - last_said.load() >= 60'000) {
      last_said = now;
      module_logger("transactions")
          ->warn("{} not created yet (transaction.state.log.replication.factor {}): {}", name,
                 settings.replication_factor, change.message);
    }
    return settings.rules.log_partitions;
  }
  if (change.error != ErrorCode::none)
    throw std::runtime_error("cannot create " + name + ": " + std::string(protocol::error_name(change.error)) + " " +
                             change.message);
  return settings.rules.log_partitions;
}

}  // namespace brokerd::transactions
