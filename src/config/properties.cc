#include "brokerd/config/properties.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace brokerd::config {
namespace {

using T = PropertyType;
constexpr int64_t kInt32Max = INT32_MAX;
constexpr int64_t kWeekMs = 7LL * 24 * 3600 * 1000;

// clang-format off
constexpr PropertyDef kBroker[] = {
  {"node.id", T::int32, "1", 0, kInt32Max, {}, {}, true, "This node's id, unique in the cluster."},
  {"cluster.id", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "The cluster's id (22-character base64); empty: derived from controller.quorum.voters, or random for a node alone."},
  {"broker.rack", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "Rack or availability zone of this node."},
  {"process.roles", T::list, "broker,controller", INT64_MIN, INT64_MAX, "broker,controller", {}, true, "The roles of this node: broker (serves clients), controller (a voter of the metadata quorum when controller.quorum.voters names it), or both."},
  {"listeners", T::list, "PLAINTEXT://127.0.0.1:9092", INT64_MIN, INT64_MAX, {}, {}, true, "Addresses to listen on, NAME://host:port."},
  {"advertised.listeners", T::list, "", INT64_MIN, INT64_MAX, {}, {}, true, "Addresses clients are told to use; defaults to listeners."},
  {"log.dirs", T::list, "./data", INT64_MIN, INT64_MAX, {}, {}, true, "Directories holding partition logs."},
  {"listener.security.protocol.map", T::list, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT", INT64_MIN, INT64_MAX, {}, {}, true, "The security protocol of each listener, NAME:PROTOCOL (PLAINTEXT, SASL_PLAINTEXT; SSL and SASL_SSL are not served yet)."},
  {"inter.broker.listener.name", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "The listener other brokers (replica fetchers) connect to; empty: the one named like security.inter.broker.protocol, else the first advertised PLAINTEXT client listener, else the first client listener. On a SASL_* listener brokers authenticate with sasl.mechanism.inter.broker.protocol."},
  {"security.inter.broker.protocol", T::choice, "", INT64_MIN, INT64_MAX, ",PLAINTEXT,SASL_PLAINTEXT", {}, true, "Kafka's older way to name the inter-broker listener: the listener of this name (inter.broker.listener.name takes precedence)."},
  {"sasl.mechanism.inter.broker.protocol", T::choice, "PLAIN", INT64_MIN, INT64_MAX, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", {}, true, "The mechanism a broker authenticates with to another broker's SASL inter-broker listener, with the username and password of that listener's JAAS entry for it. Kafka's default is GSSAPI, which brokerd does not speak."},
  {"sasl.mechanism.controller.protocol", T::choice, "PLAIN", INT64_MIN, INT64_MAX, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", {}, true, "The mechanism a node authenticates with to a SASL controller listener, with the username and password of that listener's JAAS entry for it. PLAIN needs nothing from the metadata, so the quorum can form; SCRAM credentials live in the metadata. Kafka's default is GSSAPI, which brokerd does not speak."},
  {"sasl.enabled.mechanisms", T::list, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", INT64_MIN, INT64_MAX, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", {}, true, "SASL mechanisms SASL listeners offer (listener.name.<listener>.sasl.enabled.mechanisms overrides it per listener). PLAIN accepts the users of listener.name.<listener>.plain.sasl.jaas.config; SCRAM the credentials made with AlterUserScramCredentials."},
  {"sasl.server.max.receive.size", T::int32, "524288", 64, kInt32Max, {}, {}, true, "Largest request frame a connection may send before it has authenticated; a larger one closes it."},
  {"ssl.keystore.type", T::choice, "PEM", INT64_MIN, INT64_MAX, "PEM", {}, true, "The form of the key and certificate chain: PEM (Kafka's JKS and PKCS12 are not read)."},
  {"ssl.keystore.location", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "A PEM file holding the listener's private key and its certificate chain. Read again when it changes."},
  {"ssl.keystore.key", T::password, "", INT64_MIN, INT64_MAX, {}, {}, true, "The private key as PEM text (instead of ssl.keystore.location)."},
  {"ssl.keystore.certificate.chain", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "The certificate chain as PEM text, the listener's own certificate first (instead of ssl.keystore.location)."},
  {"ssl.key.password", T::password, "", INT64_MIN, INT64_MAX, {}, {}, true, "The password of an encrypted private key."},
  {"ssl.truststore.type", T::choice, "PEM", INT64_MIN, INT64_MAX, "PEM", {}, true, "The form of the trust store: PEM."},
  {"ssl.truststore.location", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "A PEM file of the certificates client certificates must chain to. Read again when it changes."},
  {"ssl.truststore.certificates", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "The trusted certificates as PEM text (instead of ssl.truststore.location)."},
  {"ssl.client.auth", T::choice, "none", INT64_MIN, INT64_MAX, "none,requested,required", {}, true, "Whether TLS clients present a certificate: none, requested (checked when sent), required."},
  {"ssl.enabled.protocols", T::list, "TLSv1.2,TLSv1.3", INT64_MIN, INT64_MAX, "TLSv1.2,TLSv1.3", {}, true, "The TLS versions served."},
  {"ssl.cipher.suites", T::list, "", INT64_MIN, INT64_MAX, {}, {}, true, "The cipher suites served, IANA names (TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) or OpenSSL's; empty: OpenSSL's defaults."},
  {"ssl.endpoint.identification.algorithm", T::string, "https", INT64_MIN, INT64_MAX, {}, {}, true, "How this node checks another node's certificate on this listener (controller and inter-broker TLS): https checks its name (host or IP address) against the certificate; empty does not."},
  {"ssl.principal.mapping.rules", T::string, "DEFAULT", INT64_MIN, INT64_MAX, {}, {}, true, "How an SSL client's certificate subject (RFC 2253 as Java writes it, CN=alice,OU=eng,O=corp; attributes other than CN, C, L, ST, O, OU, STREET, DC and UID by OID and hex DER value) becomes its user name: RULE:pattern/replacement/[LU] entries and DEFAULT (the subject as is), comma separated, the first that matches wins; a subject no rule matches is refused."},
  {"ssl.handshake.timeout.ms", T::int32, "10000", 100, kInt32Max, {}, {}, true, "A client on an SSL or SASL_SSL listener that has not completed its TLS handshake after this long is disconnected (brokerd's bound; Kafka has none)."},
  {"quota.window.num", T::int32, "11", 2, 100, {}, {}, true, "Samples a client quota's byte rate is measured over."},
  {"quota.window.size.seconds", T::int32, "1", 1, 3600, {}, {}, true, "The span of one sample of a client quota's byte rate."},
  {"connections.max.reauth.ms", T::int64, "0", 0, INT64_MAX, {}, {}, true, "Lifetime of a SASL session (KIP-368): clients re-authenticate before it ends, and a connection whose session ended is closed at its next request; 0: sessions never end."},
  {"authorizer.class.name", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "org.apache.kafka.metadata.authorizer.StandardAuthorizer authorizes every request against the ACLs; empty authorizes nothing (every principal may do everything)."},
  {"super.users", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "Principals the authorizer lets do everything, separated by semicolons (User:admin;User:ANONYMOUS)."},
  {"allow.everyone.if.no.acl.found", T::boolean, "false", INT64_MIN, INT64_MAX, {}, {}, true, "With an authorizer: a resource no ACL applies to is open to everyone (true) or to super users only (false)."},
  {"controller.quorum.voters", T::list, "", INT64_MIN, INT64_MAX, {}, {}, true, "The voters of the metadata quorum, id@host:port of each one's controller listener; empty: this node alone is the quorum."},
  {"controller.listener.names", T::string, "CONTROLLER", INT64_MIN, INT64_MAX, {}, {}, true, "The listener that serves the metadata quorum's RPCs."},
  {"controller.quorum.election.timeout.ms", T::int64, "1000", 50, INT64_MAX, {}, {}, true, "A voter that hears no leader for a random time between this and twice this starts an election."},
  {"controller.quorum.fetch.timeout.ms", T::int64, "2000", 100, INT64_MAX, {}, {}, true, "A follower that gets no answer from the leader for this long looks for a new one; a leader not fetched from by a majority for this long resigns."},
  {"metadata.log.max.record.bytes.between.snapshots", T::int64, "20971520", 1024, INT64_MAX, {}, {}, true, "Bytes of metadata records applied before the next snapshot of the metadata image; the log below a snapshot is deleted."},
  {"controller.quorum.request.timeout.ms", T::int64, "2000", 100, INT64_MAX, {}, {}, true, "A quorum RPC unanswered this long closes its connection."},
  {"auto.leader.rebalance.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, {}, true, "The active controller gives partitions back to their preferred replicas (the first of each replica list) when a broker leads too few of its own."},
  {"leader.imbalance.check.interval.seconds", T::int64, "300", 1, INT64_MAX, {}, {}, true, "How often the active controller checks the leader balance."},
  {"leader.imbalance.per.broker.percentage", T::int32, "10", 0, 100, {}, {}, true, "The share of a broker's preferred partitions that may be led elsewhere before the balance moves them back."},
  {"broker.heartbeat.interval.ms", T::int64, "500", 10, INT64_MAX, {}, {}, true, "How often a broker tells the controller it is alive (and how far it has replayed the metadata)."},
  {"broker.session.timeout.ms", T::int64, "3000", 100, INT64_MAX, {}, {}, true, "A broker the controller has not heard from for this long is fenced: Metadata stops naming it."},
  {"metadata.log.dir", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "Directory of the metadata log (__cluster_metadata-0 inside it); empty: the first of log.dirs."},
  {"num.network.threads", T::int32, "0", 0, 256, {}, {}, true, "Reactor threads; 0 means one per CPU core."},
  {"num.io.threads", T::int32, "4", 1, 256, {}, {}, true, "Threads for blocking disk work (cold reads, fsync)."},
  {"socket.request.max.bytes", T::int32, "104857600", 1024, kInt32Max, {}, {}, true, "Largest request frame accepted."},
  {"queued.max.request.bytes", T::int64, "536870912", 1048576, INT64_MAX, {}, {}, true, "Bytes of requests in flight on this node before reading pauses."},
  {"queued.max.request.bytes.per.principal", T::int64, "134217728", 0, INT64_MAX, {}, {}, true, "Bytes of requests in flight from one principal (all its connections) before reading its connections pauses; 0 for no bound of its own."},
  {"connections.max.idle.ms", T::int64, "600000", 1000, INT64_MAX, {}, {}, true, "Idle connections are closed after this."},
  {"max.connections", T::int32, "2147483647", 0, kInt32Max, {}, {}, true, "Client connections this node holds at once, over all its client listeners (not the controller listener); a new one past it is closed at once. The node holds no more than its open files limit leaves after the partitions' descriptors (log.open.files.max and its margin) and its own (max(24, a sixteenth of the limit)), whichever is less."},
  {"max.connections.per.ip", T::int32, "2147483647", 0, kInt32Max, {}, {}, true, "Client connections from one address at once; a new one past it is closed at once."},
  {"max.connections.per.ip.overrides", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "Exceptions to max.connections.per.ip, host:count,host:count (an address, or a host name resolved at start)."},
  {"max.connection.creation.rate", T::int32, "2147483647", 0, kInt32Max, {}, {}, true, "Connections each client listener accepts per second; past it, new ones are closed at once until the next second."},
  {"metrics.listener", T::string, "127.0.0.1:9644", INT64_MIN, INT64_MAX, {}, {}, true, "host:port of the HTTP endpoint serving /metrics (Prometheus), /health and /ready; empty disables it."},
  {"http.listeners", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "Where the /v1 HTTP API is served: a comma list of http://HOST:PORT and https://HOST:PORT (TLS with the listener.name.https.ssl.* settings, as an SSL listener's); empty (the default) serves none."},
  {"http.authentication", T::choice, "none", INT64_MIN, INT64_MAX, "none,basic,mtls", {}, true, "Who an HTTP API request acts as: none, User:ANONYMOUS for every request; basic, the user of its HTTP Basic credentials, checked against the SCRAM credentials of brokerctl users; mtls, the principal of the client certificate of its https connection (ssl.principal.mapping.rules). A request without valid credentials is answered 401."},
  {"http.request.timeout.ms", T::int64, "30000", 100, 3600000, {}, {}, true, "The HTTP API's bound on a request: its headers and body must arrive within it once its first byte has, a write waits for its replicas at most this long, and a read's wait_ms may not exceed it."},
  {"http.max.request.bytes", T::int64, "16777216", 1024, 1073741824, {}, {}, true, "The largest HTTP API request body; a larger one is answered 413 and its connection closed."},
  {"http.max.connections", T::int32, "10000", 1, kInt32Max, {}, {}, true, "HTTP API connections this node holds at once; one past it is closed at accept."},
  {"max.incremental.fetch.session.cache.slots", T::int32, "1000", 0, kInt32Max, {}, {}, true, "Incremental fetch sessions (KIP-227) the node keeps; 0 declines them (clients then send full fetches)."},
  {"num.partitions", T::int32, "1", 1, 100000, {}, {}, false, "Partitions of auto-created topics."},
#ifdef BROKERD_INJECT_BUGS
  {"inject.bug", T::list, "", INT64_MIN, INT64_MAX, {}, {}, true, "Test builds only: defects to inject, by name: the replication ones (repl-sim --list-bugs), metadata-log-no-fsync, clean-past-high-watermark, retention-past-high-watermark, lso-ignores-open-txn, txn-skip-marker, forget-prepared-commit and http-hash-encoded-key."},
#endif
  {"replica.lag.time.max.ms", T::int64, "10000", 100, INT64_MAX, {}, {}, true, "A follower in the ISR that has not caught up with the leader's log end for this long is dropped from it."},
  {"replica.high.watermark.checkpoint.interval.ms", T::int64, "5000", 100, INT64_MAX, {}, {}, true, "How often each log dir's replication-offset-checkpoint records the partitions' high watermarks (a restarted node starts from them)."},
  {"replica.selector.class", T::choice, "", INT64_MIN, INT64_MAX, ",org.apache.kafka.common.replica.RackAwareReplicaSelector,org.apache.kafka.common.replica.LeaderSelector", {}, true, "Where consumers that name their rack (client.rack) read: the rack-aware selector points them to an in-sync replica in their own rack (fetch from follower, KIP-392); empty or the leader selector keeps every read on the leader."},
  {"leader.replication.throttled.rate", T::int64, "9223372036854775807", 1, INT64_MAX, {}, {}, false, "Bytes per second this node sends to followers of the partitions its topics list in leader.replication.throttled.replicas, while they are out of the ISR (a reassignment's copies)."},
  {"follower.replication.throttled.rate", T::int64, "9223372036854775807", 1, INT64_MAX, {}, {}, false, "Bytes per second this node fetches as a follower out of the ISR for the partitions its topics list in follower.replication.throttled.replicas."},
  {"num.replica.fetchers", T::int32, "1", 1, 64, {}, {}, true, "Fetch connections to each leader this node follows partitions of."},
  {"replica.fetch.max.bytes", T::int32, "1048576", 1024, kInt32Max, {}, {}, true, "Bytes a follower asks for per partition in one fetch (a larger first batch still comes whole)."},
  {"replica.fetch.response.max.bytes", T::int32, "10485760", 1024, kInt32Max, {}, {}, true, "Bytes a follower asks for in one fetch over all its partitions."},
  {"replica.fetch.wait.max.ms", T::int32, "500", 0, kInt32Max, {}, {}, true, "How long a follower's fetch waits at the leader for new data."},
  {"replica.fetch.backoff.ms", T::int32, "200", 0, kInt32Max, {}, {}, true, "Pause before a follower fetches again after an error."},
  {"mirror.fetch.wait.max.ms", T::int32, "500", 0, kInt32Max, {}, {}, true, "How long a mirror link's fetch waits at the source for new data."},
  {"mirror.fetch.max.bytes", T::int32, "1048576", 1024, kInt32Max, {}, {}, true, "Bytes a mirror link asks the source for per partition in one fetch."},
  {"mirror.fetch.response.max.bytes", T::int32, "10485760", 1024, kInt32Max, {}, {}, true, "Bytes a mirror link asks one source broker for in one fetch."},
  {"mirror.fetch.backoff.ms", T::int64, "1000", 0, INT64_MAX, {}, {}, true, "Pause before a mirror link fetches again after an error (the source unreachable, a leader moved)."},
  {"password.encoder.secret", T::password, "", INT64_MIN, INT64_MAX, {}, {}, true, "The secret that seals passwords kept in the metadata log (a mirror link's source password); the same on every node. A link with a password cannot be created without it."},
  {"mirror.offsets.sync.interval.ms", T::int64, "5000", 100, INT64_MAX, {}, {}, true, "How often mirror links copy the committed offsets of their consumer groups from the source (groups with members here are left alone)."},
  {"mirror.metadata.refresh.interval.ms", T::int64, "5000", 100, INT64_MAX, {}, {}, true, "How often mirror links read the source's metadata: new topics and partitions are mirrored, configs copied, moved leaders followed."},
  {"default.replication.factor", T::int32, "1", 1, 32767, {}, {}, false, "Replication factor of auto-created topics."},
  {"auto.create.topics.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, {}, false, "Create unknown topics on Metadata requests."},
  {"delete.topic.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, {}, false, "Allow DeleteTopics."},
  {"message.max.bytes", T::int32, "1048588", 0, kInt32Max, {}, "max.message.bytes", false, "Largest record batch accepted."},
  {"log.segment.bytes", T::int32, "1073741824", 14, kInt32Max, {}, "segment.bytes", false, "Segment size before a roll."},
  {"log.roll.ms", T::int64, "", 1, INT64_MAX, {}, "segment.ms", false, "Segment age before a roll; unset: log.roll.hours.", true},
  {"log.roll.hours", T::int32, "168", 1, kInt32Max, {}, {}, true, "Segment age before a roll, in hours, when log.roll.ms is not set."},
  {"log.retention.ms", T::int64, "", -1, INT64_MAX, {}, "retention.ms", false, "Age after which closed segments are deleted; -1 keeps forever; unset: log.retention.minutes, else log.retention.hours.", true},
  {"log.retention.minutes", T::int32, "", -1, kInt32Max, {}, {}, true, "Age after which closed segments are deleted, in minutes, when log.retention.ms is not set.", true},
  {"log.retention.hours", T::int32, "168", -1, kInt32Max, {}, {}, true, "Age after which closed segments are deleted, in hours, when neither log.retention.ms nor log.retention.minutes is set."},
  {"log.retention.bytes", T::int64, "-1", -1, INT64_MAX, {}, "retention.bytes", false, "Partition size above which old segments are deleted; -1 means no limit."},
  {"log.retention.check.interval.ms", T::int64, "300000", 1, INT64_MAX, {}, {}, true, "How often retention runs."},
  {"log.index.interval.bytes", T::int32, "4096", 0, kInt32Max, {}, "index.interval.bytes", false, "Bytes between offset index entries."},
  {"log.index.size.max.bytes", T::int32, "10485760", 4, kInt32Max, {}, "segment.index.bytes", false, "Largest offset index file."},
  {"log.message.timestamp.type", T::choice, "CreateTime", INT64_MIN, INT64_MAX, "CreateTime,LogAppendTime", "message.timestamp.type", false, "Record timestamps: as sent, or the broker's append time."},
  {"log.roll.jitter.ms", T::int64, "", 0, INT64_MAX, {}, "segment.jitter.ms", false, "Most a segment's roll may come before log.roll.ms (a random share per segment, so partitions do not all roll at once); unset: log.roll.jitter.hours.", true},
  {"log.roll.jitter.hours", T::int32, "0", 0, kInt32Max, {}, {}, true, "log.roll.jitter.ms in hours, when log.roll.jitter.ms is not set."},
  {"log.preallocate", T::boolean, "false", INT64_MIN, INT64_MAX, {}, "preallocate", false, "Reserve a whole segment's blocks when it is made (without it, fast-filling segments reserve 16 MiB ahead)."},
  {"log.message.timestamp.before.max.ms", T::int64, "9223372036854775807", 0, INT64_MAX, {}, "message.timestamp.before.max.ms", false, "How far behind the broker's clock a CreateTime record may be; older ones are refused (INVALID_TIMESTAMP)."},
  {"log.message.timestamp.after.max.ms", T::int64, "3600000", 0, INT64_MAX, {}, "message.timestamp.after.max.ms", false, "How far ahead of the broker's clock a CreateTime record may be; later ones are refused (INVALID_TIMESTAMP)."},
  {"log.message.timestamp.difference.max.ms", T::int64, "9223372036854775807", 0, INT64_MAX, {}, "message.timestamp.difference.max.ms", false, "Deprecated (gone in Kafka 4.0): bounds both sides as well; the stricter bound wins."},
  {"log.message.format.version", T::string, "3.0-IV1", INT64_MIN, INT64_MAX, {}, "message.format.version", false, "Removed in Kafka 4.0 (every batch is format v2): accepted and ignored."},
  {"log.message.downconversion.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, "message.downconversion.enable", false, "Removed in Kafka 4.0 (brokerd never converts batches to older formats): accepted and ignored."},
  {"log.cleanup.policy", T::list, "delete", INT64_MIN, INT64_MAX, "compact,delete", "cleanup.policy", false, "delete (retention by time and size), compact (keep the latest record per key), or both."},
  {"log.segment.delete.delay.ms", T::int64, "60000", 0, INT64_MAX, {}, "file.delete.delay.ms", false, "Delay before a removed segment's files are deleted."},
  {"log.flush.interval.ms", T::int64, "1000", 1, INT64_MAX, {}, "flush.ms", false, "Dirty data is fsynced at least this often (grouped, off the reactor)."},
  {"log.flush.interval.messages", T::int64, "9223372036854775807", 1, INT64_MAX, {}, "flush.messages", false, "A produce that leaves this many records unsynced in a partition is answered once they are fsynced (1: every write is synced before its answer)."},
  {"min.insync.replicas", T::int32, "1", 1, 32767, {}, "min.insync.replicas", false, "Replicas that must have a batch before acks=all completes (a value above a topic's replication factor counts as the replication factor, as in Kafka 3.7+)."},
  {"compression.type", T::choice, "producer", INT64_MIN, INT64_MAX, "uncompressed,gzip,snappy,lz4,zstd,producer", "compression.type", false, "How batches are stored: producer keeps the producer's codec; any other value re-encodes batches written with another codec."},
  {"compression.gzip.level", T::int32, "-1", -1, 9, {}, "compression.gzip.level", false, "gzip level when batches are re-encoded to gzip (-1: zlib's default, 6)."},
  {"compression.lz4.level", T::int32, "9", 1, 17, {}, "compression.lz4.level", false, "lz4 level when batches are re-encoded to lz4."},
  {"compression.zstd.level", T::int32, "3", -131072, 22, {}, "compression.zstd.level", false, "zstd level when batches are re-encoded to zstd."},
  {"log.cleaner.delete.retention.ms", T::int64, "86400000", 0, INT64_MAX, {}, "delete.retention.ms", false, "How long tombstones survive compaction."},
  {"log.cleaner.min.compaction.lag.ms", T::int64, "0", 0, INT64_MAX, {}, "min.compaction.lag.ms", false, "Records younger than this are not compacted."},
  {"log.cleaner.max.compaction.lag.ms", T::int64, "9223372036854775807", 1, INT64_MAX, {}, "max.compaction.lag.ms", false, "Records older than this are compacted whatever the dirty ratio."},
  {"log.cleaner.min.cleanable.ratio", T::ratio, "0.5", 0, 1, {}, "min.cleanable.dirty.ratio", false, "Dirty share of a log before it is compacted."},
  {"log.cleaner.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, {}, true, "Run the log cleaner, which compacts topics with cleanup.policy=compact."},
  {"log.open.files.max", T::int64, "0", 0, INT64_MAX, {}, {}, true, "Descriptors the partitions' segment files may hold at once; a partition that needs more is offline (KAFKA_STORAGE_ERROR) until some are freed. 0 takes the open files limit, which the broker raises to its hard limit at start, minus a quarter (at least 1024, or half) kept for connections and the rest."},
  {"log.cleaner.threads", T::int32, "1", 1, 64, {}, {}, true, "Logs cleaned at the same time (each pass runs on the blocking-I/O pool)."},
  {"log.cleaner.backoff.ms", T::int64, "15000", 1, INT64_MAX, {}, {}, true, "Pause between checks for logs that need cleaning."},
  {"log.cleaner.dedupe.buffer.size", T::int64, "134217728", 1048576, INT64_MAX, {}, {}, true, "Memory of the cleaners' key-to-offset maps, shared by the cleaner threads."},
  {"log.cleaner.io.max.bytes.per.second", T::int64, "0", 0, INT64_MAX, {}, {}, true, "Read plus write rate of each cleaner pass; 0 means unthrottled."},
  {"producer.id.expiration.ms", T::int64, "86400000", 1, INT64_MAX, {}, {}, true, "An idempotent producer idle this long is forgotten by each partition (its next write is accepted at any sequence)."},
  {"producer.id.expiration.check.interval.ms", T::int64, "600000", 1, INT64_MAX, {}, {}, true, "How often partitions look for expired producer ids."},
  {"offsets.topic.num.partitions", T::int32, "50", 1, 100000, {}, {}, true, "Partitions of __consumer_offsets, fixed when the topic is first created."},
  {"offsets.topic.replication.factor", T::int32, "3", 1, 32767, {}, {}, true, "Replication factor of __consumer_offsets. A cluster creates the topic once this many brokers are live (COORDINATOR_NOT_AVAILABLE until then); a node alone keeps it on itself."},
  {"offsets.topic.segment.bytes", T::int32, "104857600", 14, kInt32Max, {}, {}, true, "Segment size of __consumer_offsets, fixed when the topic is first created."},
  {"transaction.state.log.num.partitions", T::int32, "50", 1, 100000, {}, {}, true, "Partitions of __transaction_state, fixed when the topic is first created."},
  {"transaction.state.log.replication.factor", T::int32, "3", 1, 32767, {}, {}, true, "Replication factor of __transaction_state. A cluster creates the topic once this many brokers are live (COORDINATOR_NOT_AVAILABLE for transactional producers until then)."},
  {"transaction.state.log.min.isr", T::int32, "2", 1, kInt32Max, {}, {}, true, "min.insync.replicas of __transaction_state: a transaction coordinator writes nothing while fewer replicas are in sync."},
  {"transaction.state.log.segment.bytes", T::int32, "104857600", 14, kInt32Max, {}, {}, true, "Segment size of __transaction_state, fixed when the topic is first created."},
  {"transaction.max.timeout.ms", T::int32, "900000", 1, kInt32Max, {}, {}, true, "The longest transaction.timeout.ms a producer may ask for (INVALID_TRANSACTION_TIMEOUT beyond it)."},
  {"transactional.id.expiration.ms", T::int32, "604800000", 1, kInt32Max, {}, {}, true, "A transactional id with no transaction under way, untouched this long, is forgotten by its coordinator."},
  {"transaction.abort.timed.out.transaction.cleanup.interval.ms", T::int32, "10000", 1, kInt32Max, {}, {}, true, "How often a coordinator aborts the transactions older than their timeout."},
  {"transaction.remove.expired.transaction.cleanup.interval.ms", T::int32, "3600000", 1, kInt32Max, {}, {}, true, "How often a coordinator looks for expired transactional ids."},
  {"transaction.partition.verification.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, {}, true, "Before a partition leader appends the first transactional batch of a transaction, it asks the coordinator whether the partition is in the producer's transaction (KIP-890), so that a late write of an ended transaction cannot join a later one."},
  {"offsets.retention.minutes", T::int32, "10080", 1, kInt32Max, {}, {}, true, "Committed offsets of a group left empty this long are deleted."},
  {"offsets.retention.check.interval.ms", T::int64, "600000", 1, INT64_MAX, {}, {}, true, "How often expired committed offsets are looked for."},
  {"offsets.commit.timeout.ms", T::int32, "5000", 1, kInt32Max, {}, {}, true, "Longest wait for a commit to reach the in-sync replicas of its offsets partition; then it fails (COORDINATOR_NOT_AVAILABLE)."},
  {"offset.metadata.max.bytes", T::int32, "4096", 0, kInt32Max, {}, {}, true, "Largest metadata string kept with a committed offset."},
  {"group.initial.rebalance.delay.ms", T::int32, "3000", 0, kInt32Max, {}, {}, true, "How long a new group waits for more members before its first rebalance."},
  {"group.min.session.timeout.ms", T::int32, "6000", 0, kInt32Max, {}, {}, true, "Shortest session timeout a group member may ask for."},
  {"group.max.session.timeout.ms", T::int32, "1800000", 0, kInt32Max, {}, {}, true, "Longest session timeout a group member may ask for."},
  {"group.max.size", T::int32, "2147483647", 1, kInt32Max, {}, {}, true, "Most members a consumer group may have."},
  {"log.level", T::choice, "info", INT64_MIN, INT64_MAX, "trace,debug,info,warn,error,critical,off", {}, true, "Log verbosity."},
};

// Node-wide settings that may also be given per listener, as
// listener.name.<listener, lower case>.<name> (which comes first).
constexpr std::string_view kPerListener[] = {
    "sasl.enabled.mechanisms", "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols", "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm", "ssl.principal.mapping.rules",
};

// Settings that exist only per listener.
constexpr PropertyDef kListenerOnly[] = {
  {"plain.sasl.jaas.config", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "The users SASL/PLAIN accepts on this listener (user_<name>=\"<password>\" options of a JAAS entry), and the username and password options this node presents to this listener of other nodes (controller and inter-broker listeners)."},
  {"scram-sha-256.sasl.jaas.config", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "A JAAS entry whose username and password options this node presents with SCRAM-SHA-256 to this listener of other nodes."},
  {"scram-sha-512.sasl.jaas.config", T::string, "", INT64_MIN, INT64_MAX, {}, {}, true, "A JAAS entry whose username and password options this node presents with SCRAM-SHA-512 to this listener of other nodes."},
};

constexpr PropertyDef kTopic[] = {
  {"cleanup.policy", T::list, "delete", INT64_MIN, INT64_MAX, "compact,delete"},
  {"compression.type", T::choice, "producer", INT64_MIN, INT64_MAX, "uncompressed,gzip,snappy,lz4,zstd,producer"},
  {"compression.gzip.level", T::int32, "-1", -1, 9},
  {"compression.lz4.level", T::int32, "9", 1, 17},
  {"compression.zstd.level", T::int32, "3", -131072, 22},
  {"delete.retention.ms", T::int64, "86400000", 0, INT64_MAX},
  {"file.delete.delay.ms", T::int64, "60000", 0, INT64_MAX},
  {"flush.ms", T::int64, "1000", 1, INT64_MAX},
  {"flush.messages", T::int64, "9223372036854775807", 1, INT64_MAX},
  {"index.interval.bytes", T::int32, "4096", 0, kInt32Max},
  {"max.compaction.lag.ms", T::int64, "9223372036854775807", 1, INT64_MAX},
  {"max.message.bytes", T::int32, "1048588", 0, kInt32Max},
  {"message.timestamp.type", T::choice, "CreateTime", INT64_MIN, INT64_MAX, "CreateTime,LogAppendTime"},
  {"min.cleanable.dirty.ratio", T::ratio, "0.5", 0, 1},
  {"min.compaction.lag.ms", T::int64, "0", 0, INT64_MAX},
  {"min.insync.replicas", T::int32, "1", 1, 32767},
  {"retention.bytes", T::int64, "-1", -1, INT64_MAX},
  {"retention.ms", T::int64, "604800000", -1, INT64_MAX},
  {"segment.bytes", T::int32, "1073741824", 14, kInt32Max},
  {"segment.index.bytes", T::int32, "10485760", 4, kInt32Max},
  {"segment.ms", T::int64, "604800000", 1, INT64_MAX},
  {"segment.jitter.ms", T::int64, "0", 0, INT64_MAX},
  {"preallocate", T::boolean, "false", INT64_MIN, INT64_MAX},
  {"unclean.leader.election.enable", T::boolean, "false", INT64_MIN, INT64_MAX},
  // Kafka's replication throttle: "*" or partition:broker entries (replication_throttle.h).
  {"leader.replication.throttled.replicas", T::list, "", INT64_MIN, INT64_MAX},
  {"follower.replication.throttled.replicas", T::list, "", INT64_MIN, INT64_MAX},
  {"message.timestamp.before.max.ms", T::int64, "9223372036854775807", 0, INT64_MAX},
  {"message.timestamp.after.max.ms", T::int64, "3600000", 0, INT64_MAX},
  {"message.timestamp.difference.max.ms", T::int64, "9223372036854775807", 0, INT64_MAX},
  // Removed in Kafka 4.0, still set by tools written for 3.x: accepted and ignored.
  {"message.format.version", T::string, "3.0-IV1", INT64_MIN, INT64_MAX, {}, {}, true,
   "Removed in Kafka 4.0 (every batch is format v2): accepted and ignored."},
  {"message.downconversion.enable", T::boolean, "true", INT64_MIN, INT64_MAX, {}, {}, true,
   "Removed in Kafka 4.0 (brokerd never converts batches to older formats): accepted and ignored."},
};
// clang-format on

static_assert(kWeekMs == 604800000);

template <size_t N>
const PropertyDef* find_in(const PropertyDef (&table)[N], std::string_view name) {
  auto it = std::find_if(std::begin(table), std::end(table), [&](const PropertyDef& d) { return d.name == name; });
  return it == std::end(table) ? nullptr : &*it;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// An entry of a throttled-replicas list: "*" or "<partition>:<broker>".
bool is_throttled_replica(std::string_view item) {
  if (item == "*") return true;
  const auto colon = item.find(':');
  if (colon == std::string_view::npos) return false;
  auto number = [](std::string_view s) {
    return !s.empty() && s.size() <= 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return number(item.substr(0, colon)) && number(item.substr(colon + 1));
}

bool in_choices(std::string_view choices, std::string_view v) {
  while (!choices.empty()) {
    auto comma = choices.find(',');
    if (choices.substr(0, comma) == v) return true;
    if (comma == std::string_view::npos) break;
    choices.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::span<const PropertyDef> broker_properties() { return kBroker; }
std::span<const PropertyDef> topic_properties() { return kTopic; }
const PropertyDef* find_broker_property(std::string_view name) {
  if (auto scoped = listener_scoped_suffix(name)) {
    for (std::string_view shared : kPerListener)
      if (*scoped == shared) return find_in(kBroker, shared);
    return find_in(kListenerOnly, *scoped);
  }
  return find_in(kBroker, name);
}
std::optional<std::string_view> listener_scoped_suffix(std::string_view name) {
  constexpr std::string_view prefix = "listener.name.";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  const auto dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos) return std::nullopt;
  return name.substr(dot + 1);
}
const PropertyDef* find_topic_property(std::string_view name) { return find_in(kTopic, name); }

std::optional<std::string> validate_value(const PropertyDef& def, std::string_view raw, std::string* normalised) {
  std::string_view value = trim(raw);
  std::string out(value);
  switch (def.type) {
    case T::boolean:
      if (value != "true" && value != "false") return fmt::format("{} must be true or false, not '{}'", def.name, value);
      break;
    case T::int32:
    case T::int64: {
      int64_t n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || p != value.data() + value.size() || value.empty())
        return fmt::format("{} must be an integer, not '{}'", def.name, value);
      if (n < def.min || n > def.max) {
        return fmt::format("{} must be between {} and {}, not {}", def.name, def.min, def.max, n);
      }
      break;
    }
    case T::ratio: {
      double d = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
      if (ec != std::errc() || p != value.data() + value.size() || value.empty() || !std::isfinite(d))
        return fmt::format("{} must be a number, not '{}'", def.name, value);
      if (d < static_cast<double>(def.min) || d > static_cast<double>(def.max))
        return fmt::format("{} must be between {} and {}, not {}", def.name, def.min, def.max, value);
      break;
    }
    case T::string:
    case T::password:
      break;
    case T::choice:
      if (!in_choices(def.choices, value))
        return fmt::format("{} must be one of [{}], not '{}'", def.name, def.choices, value);
      break;
    case T::list: {
      out.clear();
      std::string_view rest = value;
      while (true) {
        auto comma = rest.find(',');
        auto item = trim(rest.substr(0, comma));
        if (!item.empty()) {
          if (!def.choices.empty() && !in_choices(def.choices, item))
            return fmt::format("{} entries must be among [{}], not '{}'", def.name, def.choices, item);
          if (def.name.ends_with(".throttled.replicas") && !is_throttled_replica(item))
            return fmt::format("{} entries must be * or PARTITION:BROKER, not '{}'", def.name, item);
          if (!out.empty()) out += ',';
          out += item;
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      // A list drawn from fixed choices (cleanup.policy) needs at least one of them.
      if (out.empty() && !def.choices.empty())
        return fmt::format("{} needs at least one of [{}]", def.name, def.choices);
      break;
    }
  }
  if (normalised) *normalised = std::move(out);
  return std::nullopt;
}

}  // namespace brokerd::config
