#include "brokerd/config/broker_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "brokerd/config/properties.h"

namespace brokerd::config {
namespace {

using K = KafkaType;
using S = KeyScope;
constexpr auto applied = KeyTreatment::applied;
constexpr auto ignored = KeyTreatment::stored_ignored;
constexpr auto restart = KeyTreatment::read_only;
constexpr std::optional<std::string_view> kNone = std::nullopt;

constexpr std::string_view kTopicDefault = "the broker-level default of a topic config: every topic without its own value takes it at once";
constexpr std::string_view kTlsAtStart = "brokerd reads a listener's TLS settings at start (its key and trust store files again when they change)";
constexpr std::string_view kSaslAtStart = "brokerd reads a listener's SASL settings at start";
constexpr std::string_view kKerberos = "brokerd does not speak GSSAPI (Kerberos)";
constexpr std::string_view kOauth = "brokerd does not speak OAUTHBEARER";
constexpr std::string_view kAtStart = "brokerd reads it at start";
constexpr std::string_view kNoPool = "brokerd has no such thread pool (one reactor per core, a blocking-I/O pool)";
constexpr std::string_view kTiered = "brokerd has no tiered storage";
constexpr std::string_view kKraftListeners = "Kafka in KRaft mode refuses changes to the listeners as well";

// clang-format off
constexpr BrokerKey kDynamic[] = {
  // Topic defaults (Kafka's DynamicLogConfig), and the cleaner's settings.
  {"log.segment.bytes", applied, S::cluster_wide, K::int32, "1073741824", false, kTopicDefault},
  {"log.roll.ms", applied, S::cluster_wide, K::int64, kNone, false, kTopicDefault},
  {"log.roll.jitter.ms", applied, S::cluster_wide, K::int64, kNone, false, kTopicDefault},
  {"log.index.size.max.bytes", applied, S::cluster_wide, K::int32, "10485760", false, kTopicDefault},
  {"log.flush.interval.messages", applied, S::cluster_wide, K::int64, "9223372036854775807", false, kTopicDefault},
  {"log.flush.interval.ms", applied, S::cluster_wide, K::int64, kNone, false, kTopicDefault},
  {"log.retention.bytes", applied, S::cluster_wide, K::int64, "-1", false, kTopicDefault},
  {"log.retention.ms", applied, S::cluster_wide, K::int64, kNone, false, kTopicDefault},
  {"message.max.bytes", applied, S::cluster_wide, K::int32, "1048588", false, kTopicDefault},
  {"log.index.interval.bytes", applied, S::cluster_wide, K::int32, "4096", false, kTopicDefault},
  {"log.cleaner.delete.retention.ms", applied, S::cluster_wide, K::int64, "86400000", false, kTopicDefault},
  {"log.cleaner.min.compaction.lag.ms", applied, S::cluster_wide, K::int64, "0", false, kTopicDefault},
  {"log.cleaner.max.compaction.lag.ms", applied, S::cluster_wide, K::int64, "9223372036854775807", false, kTopicDefault},
  {"log.segment.delete.delay.ms", applied, S::cluster_wide, K::int64, "60000", false, kTopicDefault},
  {"log.cleaner.min.cleanable.ratio", applied, S::cluster_wide, K::float64, "0.5", false, kTopicDefault},
  {"log.cleanup.policy", applied, S::cluster_wide, K::list, "delete", false, kTopicDefault},
  {"min.insync.replicas", applied, S::cluster_wide, K::int32, "1", false, kTopicDefault},
  {"compression.type", applied, S::cluster_wide, K::string, "producer", false, kTopicDefault},
  {"compression.gzip.level", applied, S::cluster_wide, K::int32, "-1", false, kTopicDefault},
  {"compression.lz4.level", applied, S::cluster_wide, K::int32, "9", false, kTopicDefault},
  {"compression.zstd.level", applied, S::cluster_wide, K::int32, "3", false, kTopicDefault},
  {"log.preallocate", applied, S::cluster_wide, K::boolean, "false", false, kTopicDefault},
  {"log.message.timestamp.type", applied, S::cluster_wide, K::string, "CreateTime", false, kTopicDefault},
  {"log.message.timestamp.difference.max.ms", applied, S::cluster_wide, K::int64, "9223372036854775807", false, kTopicDefault},
  {"log.message.timestamp.before.max.ms", applied, S::cluster_wide, K::int64, "9223372036854775807", false, kTopicDefault},
  {"log.message.timestamp.after.max.ms", applied, S::cluster_wide, K::int64, "3600000", false, kTopicDefault},
  {"log.message.downconversion.enable", ignored, S::cluster_wide, K::boolean, "true", false, "removed in Kafka 4.0; brokerd never converts batches to older formats"},
  {"unclean.leader.election.enable", ignored, S::cluster_wide, K::boolean, "false", false, "brokerd elects an unclean leader only for a topic that sets unclean.leader.election.enable itself"},
  {"log.local.retention.ms", ignored, S::cluster_wide, K::int64, "-2", false, kTiered},
  {"log.local.retention.bytes", ignored, S::cluster_wide, K::int64, "-2", false, kTiered},
  {"log.cleaner.threads", ignored, S::cluster_wide, K::int32, "1", false, kAtStart},
  {"log.cleaner.dedupe.buffer.size", ignored, S::cluster_wide, K::int64, "134217728", false, kAtStart},
  {"log.cleaner.io.buffer.load.factor", ignored, S::cluster_wide, K::float64, "0.9", false, "brokerd's cleaner has no such setting"},
  {"log.cleaner.io.buffer.size", ignored, S::cluster_wide, K::int32, "524288", false, "brokerd's cleaner has no such setting"},
  {"log.cleaner.io.max.bytes.per.second", ignored, S::cluster_wide, K::float64, "1.7976931348623157E308", false, kAtStart},
  {"log.cleaner.backoff.ms", ignored, S::cluster_wide, K::int64, "15000", false, kAtStart},

  // Thread pools (Kafka's DynamicThreadPool) and metrics reporters.
  {"num.io.threads", ignored, S::cluster_wide, K::int32, "8", false, kAtStart},
  {"num.replica.fetchers", ignored, S::cluster_wide, K::int32, "1", false, "brokerd fetches over one connection per source broker"},
  {"num.recovery.threads.per.data.dir", ignored, S::cluster_wide, K::int32, "1", false, kNoPool},
  {"background.threads", ignored, S::cluster_wide, K::int32, "10", false, kNoPool},
  {"metric.reporters", ignored, S::cluster_wide, K::list, "", false, "brokerd serves Prometheus metrics on metrics.listener; it loads no reporter classes"},

  // Listeners (Kafka's DynamicListenerConfig): per broker, and per listener.
  {"listeners", restart, S::per_broker, K::string, "PLAINTEXT://:9092", false, kKraftListeners},
  {"advertised.listeners", restart, S::per_broker, K::string, kNone, false, kKraftListeners},
  {"listener.security.protocol.map", restart, S::per_broker, K::string, "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT", false, kKraftListeners},
  {"principal.builder.class", ignored, S::per_broker, K::class_name, "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", false, "brokerd loads no classes"},
  {"ssl.protocol", ignored, S::per_broker, K::string, "TLSv1.3", false, kTlsAtStart},
  {"ssl.provider", ignored, S::per_broker, K::string, kNone, false, kTlsAtStart},
  {"ssl.cipher.suites", ignored, S::per_broker, K::list, "", false, kTlsAtStart},
  {"ssl.enabled.protocols", ignored, S::per_broker, K::list, "TLSv1.2,TLSv1.3", false, kTlsAtStart},
  {"ssl.keymanager.algorithm", ignored, S::per_broker, K::string, "SunX509", false, kTlsAtStart},
  {"ssl.trustmanager.algorithm", ignored, S::per_broker, K::string, "PKIX", false, kTlsAtStart},
  {"ssl.endpoint.identification.algorithm", ignored, S::per_broker, K::string, "https", false, kTlsAtStart},
  {"ssl.secure.random.implementation", ignored, S::per_broker, K::string, kNone, false, kTlsAtStart},
  {"ssl.client.auth", ignored, S::per_broker, K::string, "none", false, kTlsAtStart},
  {"ssl.engine.factory.class", ignored, S::per_broker, K::class_name, kNone, false, kTlsAtStart},
  {"sasl.mechanism.inter.broker.protocol", ignored, S::per_broker, K::string, "GSSAPI", false, kSaslAtStart},
  {"sasl.jaas.config", ignored, S::per_broker, K::password, kNone, false, kSaslAtStart},
  {"sasl.enabled.mechanisms", ignored, S::per_broker, K::list, "GSSAPI", false, kSaslAtStart},
  {"sasl.kerberos.service.name", ignored, S::per_broker, K::string, kNone, false, kKerberos},
  {"sasl.kerberos.kinit.cmd", ignored, S::per_broker, K::string, "/usr/bin/kinit", false, kKerberos},
  {"sasl.kerberos.ticket.renew.window.factor", ignored, S::per_broker, K::float64, "0.8", false, kKerberos},
  {"sasl.kerberos.ticket.renew.jitter", ignored, S::per_broker, K::float64, "0.05", false, kKerberos},
  {"sasl.kerberos.min.time.before.relogin", ignored, S::per_broker, K::int64, "60000", false, kKerberos},
  {"sasl.kerberos.principal.to.local.rules", ignored, S::per_broker, K::list, "DEFAULT", false, kKerberos},
  {"sasl.login.refresh.window.factor", ignored, S::per_broker, K::float64, "0.8", false, kOauth},
  {"sasl.login.refresh.window.jitter", ignored, S::per_broker, K::float64, "0.05", false, kOauth},
  {"sasl.login.refresh.min.period.seconds", ignored, S::per_broker, K::int16, "60", false, kOauth},
  {"sasl.login.refresh.buffer.seconds", ignored, S::per_broker, K::int16, "300", false, kOauth},

  // Key and trust stores (Kafka's DynamicSecurityConfigs): only per listener.
  {"ssl.keystore.type", ignored, S::listener_only, K::string, "JKS", false, kTlsAtStart},
  {"ssl.keystore.location", ignored, S::listener_only, K::string, kNone, false, kTlsAtStart},
  {"ssl.keystore.password", ignored, S::listener_only, K::password, kNone, false, kTlsAtStart},
  {"ssl.key.password", ignored, S::listener_only, K::password, kNone, false, kTlsAtStart},
  {"ssl.keystore.certificate.chain", ignored, S::listener_only, K::password, kNone, false, kTlsAtStart},
  {"ssl.keystore.key", ignored, S::listener_only, K::password, kNone, false, kTlsAtStart},
  {"ssl.truststore.type", ignored, S::listener_only, K::string, "JKS", false, kTlsAtStart},
  {"ssl.truststore.location", ignored, S::listener_only, K::string, kNone, false, kTlsAtStart},
  {"ssl.truststore.password", ignored, S::listener_only, K::password, kNone, false, kTlsAtStart},
  {"ssl.truststore.certificates", ignored, S::listener_only, K::password, kNone, false, kTlsAtStart},

  // Connection limits (Kafka's SocketServer): max.connections and max.connection.creation.rate
  // per listener too.
  {"max.connections", ignored, S::cluster_wide, K::int32, "2147483647", false, kAtStart},
  {"max.connection.creation.rate", ignored, S::cluster_wide, K::int32, "2147483647", false, kAtStart},
  {"max.connections.per.ip", ignored, S::cluster_wide, K::int32, "2147483647", false, kAtStart},
  {"max.connections.per.ip.overrides", ignored, S::cluster_wide, K::string, "", false, kAtStart},
  {"num.network.threads", ignored, S::cluster_wide, K::int32, "3", false, "brokerd runs one reactor per core (or num.network.threads), set at start"},

  // Producer state, tiered storage.
  {"producer.id.expiration.ms", ignored, S::cluster_wide, K::int32, "86400000", false, kAtStart},
  {"transaction.partition.verification.enable", ignored, S::cluster_wide, K::boolean, "true", false, kAtStart},
  {"remote.log.index.file.cache.total.size.bytes", ignored, S::cluster_wide, K::int64, "1073741824", false, kTiered},
  {"remote.fetch.max.wait.ms", ignored, S::cluster_wide, K::int32, "500", false, kTiered},
  {"remote.log.manager.copy.max.bytes.per.second", ignored, S::cluster_wide, K::int64, "9223372036854775807", false, kTiered},
  {"remote.log.manager.fetch.max.bytes.per.second", ignored, S::cluster_wide, K::int64, "9223372036854775807", false, kTiered},
  {"remote.list.offsets.request.timeout.ms", ignored, S::cluster_wide, K::int64, "30000", false, kTiered},

  // Broker quotas (Kafka's QuotaConfig.brokerQuotaConfigs).
  {"leader.replication.throttled.rate", applied, S::cluster_wide, K::int64, "9223372036854775807", false, "the leaders' replication throttle"},
  {"follower.replication.throttled.rate", applied, S::cluster_wide, K::int64, "9223372036854775807", false, "the followers' replication throttle"},
  {"replica.alter.log.dirs.io.max.bytes.per.second", ignored, S::cluster_wide, K::int64, "9223372036854775807", false, "brokerd moves replicas between log dirs unthrottled"},

  // Kafka needs a restart for these; brokerd applies them at runtime.
  {"num.partitions", applied, S::cluster_wide, K::int32, "1", true, "partitions of auto-created topics"},
  {"default.replication.factor", applied, S::cluster_wide, K::int32, "1", true, "replication factor of auto-created topics"},
  {"auto.create.topics.enable", applied, S::cluster_wide, K::boolean, "true", true, "Metadata creates unknown topics"},
  {"delete.topic.enable", applied, S::cluster_wide, K::boolean, "true", true, "DeleteTopics is allowed"},
  {"log.message.format.version", ignored, S::cluster_wide, K::string, "3.0-IV1", true, "removed in Kafka 4.0 (every batch is format v2); accepted so tools written for 3.x keep working"},
};

// Kafka's broker keys (KRaft mode) outside the dynamic set above.
constexpr std::string_view kStatic[] = {
    "alter.config.policy.class.name", "alter.log.dirs.replication.quota.window.num",
    "alter.log.dirs.replication.quota.window.size.seconds", "authorizer.class.name",
    "auto.leader.rebalance.enable", "broker.heartbeat.interval.ms", "broker.id", "broker.id.generation.enable",
    "broker.rack", "broker.session.timeout.ms", "client.quota.callback.class",
    "connection.failed.authentication.delay.ms", "connections.max.idle.ms", "connections.max.reauth.ms",
    "control.plane.listener.name", "controlled.shutdown.enable", "controlled.shutdown.max.retries",
    "controlled.shutdown.retry.backoff.ms", "controller.listener.names", "controller.quorum.append.linger.ms",
    "controller.quorum.bootstrap.servers", "controller.quorum.election.backoff.max.ms",
    "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
    "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms", "controller.quorum.voters",
    "controller.quota.window.num", "controller.quota.window.size.seconds", "controller.socket.timeout.ms",
    "create.topic.policy.class.name", "delegation.token.expiry.check.interval.ms",
    "delegation.token.expiry.time.ms", "delegation.token.max.lifetime.ms", "delegation.token.secret.key",
    "delete.records.purgatory.purge.interval.requests", "early.start.listeners",
    "eligible.leader.replicas.enable", "fetch.max.bytes", "fetch.purgatory.purge.interval.requests",
    "group.consumer.assignors", "group.consumer.heartbeat.interval.ms",
    "group.consumer.max.heartbeat.interval.ms", "group.consumer.max.session.timeout.ms",
    "group.consumer.max.size", "group.consumer.migration.policy", "group.consumer.min.heartbeat.interval.ms",
    "group.consumer.min.session.timeout.ms", "group.consumer.session.timeout.ms",
    "group.coordinator.append.linger.ms", "group.coordinator.new.enable",
    "group.coordinator.rebalance.protocols", "group.coordinator.threads", "group.initial.rebalance.delay.ms",
    "group.max.session.timeout.ms", "group.max.size", "group.min.session.timeout.ms",
    "group.share.delivery.count.limit", "group.share.enable", "group.share.heartbeat.interval.ms",
    "group.share.max.groups", "group.share.max.heartbeat.interval.ms",
    "group.share.max.record.lock.duration.ms", "group.share.max.session.timeout.ms", "group.share.max.size",
    "group.share.min.heartbeat.interval.ms", "group.share.min.record.lock.duration.ms",
    "group.share.min.session.timeout.ms", "group.share.partition.max.record.locks",
    "group.share.record.lock.duration.ms", "group.share.session.timeout.ms",
    "initial.broker.registration.timeout.ms", "inter.broker.listener.name", "inter.broker.protocol.version",
    "kafka.metrics.polling.interval.secs", "kafka.metrics.reporters",
    "leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage", "log.cleaner.enable",
    "log.dir", "log.dir.failure.timeout.ms", "log.dirs", "log.flush.offset.checkpoint.interval.ms",
    "log.flush.scheduler.interval.ms", "log.flush.start.offset.checkpoint.interval.ms",
    "log.initial.task.delay.ms", "log.retention.check.interval.ms", "log.retention.hours",
    "log.retention.minutes", "log.roll.hours", "log.roll.jitter.hours",
    "max.incremental.fetch.session.cache.slots", "max.request.partition.size.limit", "metadata.log.dir",
    "metadata.log.max.record.bytes.between.snapshots", "metadata.log.max.snapshot.interval.ms",
    "metadata.log.segment.bytes", "metadata.log.segment.min.bytes", "metadata.log.segment.ms",
    "metadata.max.idle.interval.ms", "metadata.max.retention.bytes", "metadata.max.retention.ms",
    "metrics.num.samples", "metrics.recording.level", "metrics.sample.window.ms", "node.id",
    "num.replica.alter.log.dirs.threads", "offset.metadata.max.bytes", "offsets.commit.timeout.ms",
    "offsets.load.buffer.size", "offsets.retention.check.interval.ms", "offsets.retention.minutes",
    "offsets.topic.compression.codec", "offsets.topic.num.partitions", "offsets.topic.replication.factor",
    "offsets.topic.segment.bytes", "password.encoder.cipher.algorithm", "password.encoder.iterations",
    "password.encoder.key.length", "password.encoder.keyfactory.algorithm", "password.encoder.old.secret",
    "password.encoder.secret", "process.roles", "producer.id.expiration.check.interval.ms",
    "producer.purgatory.purge.interval.requests", "queued.max.request.bytes", "queued.max.requests",
    "quota.window.num", "quota.window.size.seconds", "remote.log.manager.copier.thread.pool.size",
    "remote.log.manager.copy.quota.window.num", "remote.log.manager.copy.quota.window.size.seconds",
    "remote.log.manager.expiration.thread.pool.size", "remote.log.manager.fetch.quota.window.num",
    "remote.log.manager.fetch.quota.window.size.seconds", "remote.log.manager.task.interval.ms",
    "remote.log.manager.task.retry.backoff.max.ms", "remote.log.manager.task.retry.backoff.ms",
    "remote.log.manager.task.retry.jitter", "remote.log.manager.thread.pool.size",
    "remote.log.metadata.custom.metadata.max.bytes", "remote.log.metadata.manager.class.name",
    "remote.log.metadata.manager.class.path", "remote.log.metadata.manager.impl.prefix",
    "remote.log.metadata.manager.listener.name", "remote.log.reader.max.pending.tasks",
    "remote.log.reader.threads", "remote.log.storage.manager.class.name",
    "remote.log.storage.manager.class.path", "remote.log.storage.manager.impl.prefix",
    "remote.log.storage.system.enable", "replica.fetch.backoff.ms", "replica.fetch.max.bytes",
    "replica.fetch.min.bytes", "replica.fetch.response.max.bytes", "replica.fetch.wait.max.ms",
    "replica.high.watermark.checkpoint.interval.ms", "replica.lag.time.max.ms", "replica.selector.class",
    "replica.socket.receive.buffer.bytes", "replica.socket.timeout.ms", "replication.quota.window.num",
    "replication.quota.window.size.seconds", "request.timeout.ms", "reserved.broker.max.id",
    "sasl.client.callback.handler.class", "sasl.login.callback.handler.class", "sasl.login.class",
    "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms", "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms", "sasl.mechanism.controller.protocol", "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.token.endpoint.url", "sasl.server.callback.handler.class",
    "sasl.server.max.receive.size", "security.inter.broker.protocol", "security.providers",
    "server.max.startup.time.ms", "share.coordinator.append.linger.ms", "share.coordinator.load.buffer.size",
    "share.coordinator.snapshot.update.records.per.snapshot",
    "share.coordinator.state.topic.compression.codec", "share.coordinator.state.topic.min.isr",
    "share.coordinator.state.topic.num.partitions", "share.coordinator.state.topic.replication.factor",
    "share.coordinator.state.topic.segment.bytes", "share.coordinator.threads",
    "share.coordinator.write.timeout.ms", "share.fetch.max.fetch.records",
    "share.fetch.purgatory.purge.interval.requests", "socket.connection.setup.timeout.max.ms",
    "socket.connection.setup.timeout.ms", "socket.listen.backlog.size", "socket.receive.buffer.bytes",
    "socket.request.max.bytes", "socket.send.buffer.bytes", "ssl.allow.dn.changes", "ssl.allow.san.changes",
    "ssl.principal.mapping.rules", "telemetry.max.bytes",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms", "transaction.max.timeout.ms",
    "transaction.remove.expired.transaction.cleanup.interval.ms", "transaction.state.log.load.buffer.size",
    "transaction.state.log.min.isr", "transaction.state.log.num.partitions",
    "transaction.state.log.replication.factor", "transaction.state.log.segment.bytes",
    "transactional.id.expiration.ms", "unclean.leader.election.interval.ms", "unstable.api.versions.enable",
    "unstable.feature.versions.enable", "zookeeper.metadata.migration.enable",
    "zookeeper.metadata.migration.min.batch.size",
};
// clang-format on

// listener.name.<listener>.<mechanism>.<key>: Kafka's per-mechanism listener keys.
constexpr std::string_view kMechanismKeys[] = {
    "sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class", "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
};

const BrokerKey* find_row(std::string_view name) {
  auto it = std::find_if(std::begin(kDynamic), std::end(kDynamic), [&](const BrokerKey& k) { return k.name == name; });
  return it == std::end(kDynamic) ? nullptr : &*it;
}

bool is_static(std::string_view name) {
  return std::find(std::begin(kStatic), std::end(kStatic), name) != std::end(kStatic);
}

}  // namespace

std::span<const BrokerKey> dynamic_broker_keys() { return kDynamic; }
std::span<const std::string_view> static_broker_keys() { return kStatic; }

KeyClass classify_broker_key(std::string_view name) {
  KeyClass out;
  out.base = name;
  if (auto suffix = listener_scoped_suffix(name)) {
    out.base = *suffix;
    out.listener = name.substr(14, name.size() - 14 - suffix->size() - 1);
    out.row = find_row(*suffix);
    if (!out.row) {
      // <mechanism>.sasl.jaas.config and the like: per listener and mechanism.
      for (std::string_view key : kMechanismKeys)
        if (suffix->size() > key.size() && suffix->ends_with(key) && (*suffix)[suffix->size() - key.size() - 1] == '.')
          out.row = find_row(key);
    }
    // Kafka takes every listener form; those of keys it reconfigures per listener brokerd
    // keeps without acting on them, the rest as custom keys.
    const bool per_listener = out.row && out.row->scope != KeyScope::cluster_wide;
    const bool connection_limit = out.row && (out.row->name == "max.connections" || out.row->name == "max.connection.creation.rate");
    out.treatment = per_listener || connection_limit ? KeyTreatment::stored_ignored : KeyTreatment::unknown;
    if (out.treatment == KeyTreatment::unknown) out.row = nullptr;
    return out;
  }
  if ((out.row = find_row(name))) {
    out.treatment = out.row->treatment;
  } else if (is_static(name) || find_broker_property(name)) {
    out.treatment = KeyTreatment::read_only;  // Kafka's, or brokerd's own: both read at start
  }
  return out;
}

std::optional<std::string> check_kafka_type(std::string_view name, KafkaType type, std::string_view raw) {
  std::string_view value = raw;
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  auto integer = [&](int64_t lo, int64_t hi, std::string_view kind) -> std::optional<std::string> {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || p != value.data() + value.size() || n < lo || n > hi)
      return fmt::format("Invalid value {} for configuration {}: Not a number of type {}", raw, name, kind);
    return std::nullopt;
  };
  switch (type) {
    case KafkaType::int16: return integer(INT16_MIN, INT16_MAX, "SHORT");
    case KafkaType::int32: return integer(INT32_MIN, INT32_MAX, "INT");
    case KafkaType::int64: return integer(INT64_MIN, INT64_MAX, "LONG");
    case KafkaType::float64: {
      double d = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size() || !std::isfinite(d))
        return fmt::format("Invalid value {} for configuration {}: Not a number of type DOUBLE", raw, name);
      return std::nullopt;
    }
    case KafkaType::boolean: {
      std::string lower(value);
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower != "true" && lower != "false")
        return fmt::format("Invalid value {} for configuration {}: Expected value to be either true or false", raw, name);
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace brokerd::config
