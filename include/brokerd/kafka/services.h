#pragma once
// The narrow view of the node that API handlers get: configuration, metadata, partitions,
// and the pools to run work on. Handlers never see the whole application.
#include <cstdint>

namespace brokerd::config { class BrokerConfig; }
namespace brokerd::net { class BlockingPool; class ReactorPool; }
namespace brokerd::metadata { class MetadataStore; }
namespace brokerd::partitions { class MirrorStatus; class PartitionManager; }
namespace brokerd::group { class GroupCoordinator; }
namespace brokerd::transactions { class TransactionCoordinator; class PartitionVerifier; }
namespace brokerd::metrics { class BrokerMetrics; }
namespace brokerd::quorum { class QuorumDriver; }
namespace brokerd::quota { class Throttler; }
namespace brokerd::security { class SaslListeners; struct Authorization; }

namespace brokerd::kafka {

class FetchSessionCache;

struct Services {
  const config::BrokerConfig& config;
  metadata::MetadataStore& metadata;
  partitions::PartitionManager& partitions;
  net::ReactorPool& reactors;
  net::BlockingPool& blocking;
  int32_t node_id;
  group::GroupCoordinator& groups;
  transactions::TransactionCoordinator& transactions;
  // KIP-890: asks a producer's coordinator whether a partition is in its transaction.
  transactions::PartitionVerifier& txn_verifier;
  // The request and per-topic counters (its registry() is the node's metrics registry).
  metrics::BrokerMetrics& metrics;
  // This node's replica of the metadata quorum (DescribeQuorum).
  quorum::QuorumDriver& quorum;
  // Incremental fetch sessions (KIP-227).
  FetchSessionCache& fetch_sessions;
  // The progress of the mirror partitions this node leads (DescribeMirrorLinks).
  partitions::MirrorStatus& mirror_status;
  // What each SASL listener accepts (SaslHandshake, SaslAuthenticate).
  const security::SaslListeners& sasl;
  // Whether and how requests are authorized (authorize.h).
  const security::Authorization& authorization;
  // The byte rates of client quota buckets (kafka/quotas.h).
  quota::Throttler& throttler;
};

}  // namespace brokerd::kafka
