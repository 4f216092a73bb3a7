// brokerd: wires configuration, storage, metadata, the Kafka API and the network together,
// then waits for SIGTERM or SIGINT and shuts down cleanly.
#include <signal.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/resource.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/isr_change_batcher.h"
#include "brokerd/metadata/node_identity.h"
#include "brokerd/storage/dir_lock.h"
#include "brokerd/storage/file_budget.h"
#include "brokerd/storage/log.h"
#include "brokerd/partitions/partition_dirs.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/controller/broker_lifecycle.h"
#include "brokerd/controller/broker_registry.h"
#include "brokerd/controller/leader_balancer.h"
#include "brokerd/controller/controller_dispatcher.h"
#include "brokerd/controller/forwarding_channel.h"
#include "brokerd/fetcher/replica_fetchers.h"
#include "brokerd/http/http_api.h"
#include "brokerd/mirror/mirror_service.h"
#include "brokerd/partitions/mirror_status.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/transactions/marker_sender.h"
#include "brokerd/transactions/partition_verifier.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "brokerd/kafka/broker_collectors.h"
#include "brokerd/kafka/dispatcher.h"
#include "brokerd/kafka/fetch_sessions.h"
#include "brokerd/security/authorization.h"
#include "brokerd/security/sasl_client.h"
#include "brokerd/security/sasl_listeners.h"
#include "brokerd/security/scram_decoy.h"
#include "brokerd/security/tls_listeners.h"
#include "brokerd/quota/throttler.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/metrics/http_server.h"
#include "brokerd/metrics/process_metrics.h"
#include "brokerd/metrics/registry.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/bound_address.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/server.h"
#include "brokerd/quorum/quorum_driver.h"
#include "brokerd/quorum/settings.h"
#include "brokerd/replication/bugs.h"

namespace {

// How long the reactors may take to run out of work once everything was told to stop.
constexpr int64_t kReactorDrainMs = 5000;
// How long a metadata change forwarded to the controller may take (a new controller
// included), as long as Kafka clients wait for an admin request by default.
constexpr int64_t kForwardTimeoutMs = 30000;

// What inject.bug names: replication defects (replication::Bug), the metadata log's
// missing fsync, compaction or retention past the high watermark, and three transaction
// defects (an LSO blind to open transactions, a COMMIT marker left out, a prepared commit
// aborted by the next coordinator). The setting exists only in test builds (BROKERD_INJECT_BUGS), where the
// fault campaign proves it catches them.
struct InjectedBugs {
  uint32_t replication = 0;
  bool metadata_log_no_fsync = false;
  brokerd::partitions::PartitionManager::Options::StorageBugs storage;
  bool forget_prepared_commit = false;
  bool http_hash_encoded_key = false;
};

InjectedBugs injected_bugs(const brokerd::config::BrokerConfig& cfg) {
  InjectedBugs bugs;
#ifdef BROKERD_INJECT_BUGS
  for (const auto& name : cfg.list("inject.bug")) {
    if (name == "metadata-log-no-fsync") {
      bugs.metadata_log_no_fsync = true;
      brokerd::module_logger("main")->warn("this test build injects the bug '{}': the metadata log is never synced",
                                           name);
      continue;
    }
    if (name == "clean-past-high-watermark" || name == "retention-past-high-watermark") {
      (name[0] == 'c' ? bugs.storage.clean_past_high_watermark : bugs.storage.retention_past_high_watermark) = true;
      brokerd::module_logger("main")->warn("this test build injects the bug '{}': uncommitted records are {}", name,
                                           name[0] == 'c' ? "compacted" : "deleted by retention");
      continue;
    }
    if (name == "lso-ignores-open-txn" || name == "txn-skip-marker") {
      (name[0] == 'l' ? bugs.storage.lso_ignores_open_txn : bugs.storage.txn_skip_marker) = true;
      brokerd::module_logger("main")->warn("this test build injects the bug '{}': {}", name,
                                           name[0] == 'l' ? "read_committed readers see open transactions"
                                                          : "COMMIT markers on partition 0 are answered, not written");
      continue;
    }
    if (name == "forget-prepared-commit") {
      bugs.forget_prepared_commit = true;
      brokerd::module_logger("main")->warn("this test build injects the bug '{}': a new transaction coordinator "
                                           "aborts what its predecessor prepared to commit", name);
      continue;
    }
    if (name == "http-hash-encoded-key") {
      bugs.http_hash_encoded_key = true;
      brokerd::module_logger("main")->warn("this test build injects the bug '{}': the HTTP API places a base64 "
                                           "key by the hash of its text", name);
      continue;
    }
    auto bug = brokerd::replication::bug_named(name);
    if (!bug) throw std::runtime_error(fmt::format("inject.bug: unknown bug '{}'", name));
    bugs.replication |= static_cast<uint32_t>(*bug);
    brokerd::module_logger("main")->warn("this test build injects the replication bug '{}'", name);
  }
#else
  (void)cfg;
#endif
  return bugs;
}

// Test builds keep the metadata log ready for a simulated power loss (raft/disk_log.h) and
// may leave out its fsync.
void metadata_log_test_switches(const InjectedBugs& bugs, brokerd::raft::DiskRaftLogOptions& log) {
#ifdef BROKERD_INJECT_BUGS
  log.track_durable_end = true;
  log.skip_fsync = bugs.metadata_log_no_fsync;
#else
  (void)bugs;
  (void)log;
#endif
}

constexpr const char* kUsage =
    "usage: brokerd [--config FILE] [--override KEY=VALUE ...]\n"
    "  --config FILE          YAML file of settings (see config/brokerd.yaml)\n"
    "  --override KEY=VALUE   set one setting; applied after the file, may repeat\n"
    "  --help                 show this text\n"
    "  --version              show the version\n";

struct Args {
  std::optional<std::filesystem::path> config;
  std::vector<std::string> overrides;
};

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) throw brokerd::config::ConfigError(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--version") {
      std::puts("brokerd 0.1.0");
      std::exit(0);
    } else if (a == "--config") {
      args.config = value("--config");
    } else if (a == "--override") {
      args.overrides.push_back(value("--override"));
    } else if (a.starts_with("--override=")) {
      args.overrides.push_back(a.substr(11));
    } else if (a.starts_with("--config=")) {
      args.config = a.substr(9);
    } else {
      throw brokerd::config::ConfigError("unknown argument '" + a + "' (see --help)");
    }
  }
  return args;
}

// metrics.listener: "" disables the HTTP endpoint.
std::optional<brokerd::metrics::HttpAddress> metrics_address(const brokerd::config::BrokerConfig& cfg) {
  const std::string text = cfg.raw("metrics.listener");
  if (text.empty()) return std::nullopt;
  try {
    return brokerd::metrics::parse_http_address(text);
  } catch (const std::invalid_argument& e) {
    throw brokerd::config::ConfigError(std::string("metrics.listener: ") + e.what());
  }
}

// http.listeners: "" serves no /v1 API.
std::vector<brokerd::http::HttpListener> http_listeners(const brokerd::config::BrokerConfig& cfg) {
  try {
    return brokerd::http::parse_http_listeners(cfg.raw("http.listeners"));
  } catch (const std::invalid_argument& e) {
    throw brokerd::config::ConfigError(std::string("http.listeners: ") + e.what());
  }
}

// The listener other brokers use: inter.broker.listener.name, else the one named like
// security.inter.broker.protocol, else the first advertised PLAINTEXT one that is not the
// controller listener, else the first client listener.
brokerd::config::Endpoint inter_broker_listener(const brokerd::config::BrokerConfig& cfg) {
  std::string named = cfg.raw("inter.broker.listener.name");
  if (named.empty()) named = cfg.raw("security.inter.broker.protocol");
  std::optional<brokerd::config::Endpoint> first;
  for (const auto& e : cfg.advertised_listeners()) {
    if (brokerd::quorum::is_controller_listener(cfg, e.listener)) continue;
    if (!named.empty()) {
      if (e.listener == named) return e;
      continue;
    }
    if (cfg.security_protocol(e.listener) == brokerd::SecurityProtocol::plaintext) return e;
    if (!first) first = e;
  }
  if (!named.empty())
    throw brokerd::config::ConfigError(fmt::format("security.inter.broker.protocol: no advertised listener is named {}",
                                                   named));
  if (first) return *first;
  throw brokerd::config::ConfigError("listeners: a broker needs a listener other than the controller listener");
}

// Every advertised client listener, as the broker registers them.
std::vector<brokerd::metadata::BrokerEndpoint> client_endpoints(const brokerd::config::BrokerConfig& cfg) {
  std::vector<brokerd::metadata::BrokerEndpoint> out;
  for (const auto& e : cfg.advertised_listeners())
    if (!brokerd::quorum::is_controller_listener(cfg, e.listener))
      out.push_back({e.listener, e.host, e.port, static_cast<int16_t>(cfg.security_protocol(e.listener))});
  return out;
}

const char* signal_name(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

// Waits up to `ms` for SIGTERM or SIGINT; true (and `sig` set) when one came.
bool take_signal(const sigset_t& signals, int& sig, int ms) {
  timespec ts{0, static_cast<long>(ms) * 1000000L};
  const int got = sigtimedwait(&signals, nullptr, &ts);
  if (got < 0) return false;
  sig = got;
  return true;
}

// Every partition holds files open: take all the descriptors the hard limit allows, and give
// the partitions log.open.files.max of them, or what the limit leaves after a reserve. Returns
// what to log once the node may log (after every check of its configuration).
std::string set_open_files_budget(const brokerd::config::BrokerConfig& cfg) {
  std::string note;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    const rlim_t before = lim.rlim_cur;
    lim.rlim_cur = lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) note = fmt::format("open files limit raised from {} to {}; ", before, lim.rlim_max);
    else ::getrlimit(RLIMIT_NOFILE, &lim);
  }
  int64_t budget = cfg.integer("log.open.files.max");
  std::string how = "log.open.files.max";
  if (lim.rlim_cur != RLIM_INFINITY) {
    // Past the limit's share, partitions would take the descriptors connections need.
    const int64_t most = brokerd::storage::derived_open_files_budget(static_cast<int64_t>(lim.rlim_cur));
    if (budget == 0) {
      budget = most;
      how = "derived from the open files limit";
    } else if (budget > most) {
      how = fmt::format("log.open.files.max {} is more than the open files limit {} allows", budget, lim.rlim_cur);
      budget = most;
    }
  }
  brokerd::storage::set_open_files_budget(budget);
  return note + fmt::format("partition files may hold {} descriptors ({})", budget, how);
}

// Admission bounds of the client listeners. max.connections is held to what the open files
// limit leaves after the partitions' budget (set before), so that sockets never take the
// descriptors partitions need, nor partitions those of connections. Host names in
// max.connections.per.ip.overrides are resolved here, once. Returns what to log.
std::string set_connection_limits(const brokerd::config::BrokerConfig& cfg, brokerd::net::ServerConfig& server_cfg) {
  server_cfg.max_connections = cfg.integer("max.connections");
  server_cfg.max_connections_per_ip = cfg.integer("max.connections.per.ip");
  server_cfg.max_connection_creation_rate = cfg.integer("max.connection.creation.rate");
  for (const auto& [host, count] : cfg.max_connections_per_ip_overrides()) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    // An address is taken as written (in the form inet_ntop gives, as the server compares).
    hints.ai_flags = AI_NUMERICHOST;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) {
      hints.ai_flags = 0;
      found = nullptr;
      if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) found = nullptr;
    }
    if (!found)
      throw brokerd::config::ConfigError(
          fmt::format("max.connections.per.ip.overrides: cannot resolve host '{}'", host));
    for (auto* a = found; a; a = a->ai_next) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* raw = a->ai_family == AF_INET6 ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr)
                                                 : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr);
      if (::inet_ntop(a->ai_family, raw, text, sizeof text)) server_cfg.max_connections_per_ip_overrides[text] = count;
    }
    ::freeaddrinfo(found);
  }
  rlimit lim{};
  const int64_t budget = brokerd::storage::open_files_budget();
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || budget <= 0)
    return fmt::format("client connections at most {} (max.connections)", server_cfg.max_connections);
  const int64_t most = brokerd::storage::derived_max_connections(static_cast<int64_t>(lim.rlim_cur), budget);
  if (server_cfg.max_connections <= most)
    return fmt::format("client connections at most {} (max.connections)", server_cfg.max_connections);
  server_cfg.max_connections = most;
  return fmt::format("client connections at most {} (what the open files limit {} leaves after {} partition "
                     "descriptors and their margin)", most, lim.rlim_cur, budget);
}

int run(const brokerd::config::BrokerConfig& cfg) {
  using namespace brokerd;
  auto log = module_logger("main");
  const auto metrics_at = metrics_address(cfg);
  auto api_listeners = http_listeners(cfg);
  // Signals are taken by sigwait on this thread only; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const auto log_dirs = cfg.log_dirs();
  const int32_t node_id = cfg.node_id();
  // Every check of the configuration comes before anything is written to the log dirs.
  auto quorum_options = quorum::quorum_options_from(cfg, "");
  quorum::check_metadata_dir(quorum_options);
  // A dedicated controller (process.roles=controller) is a voter of the quorum and nothing
  // else: no client listener, no partitions, no registration as a broker.
  const bool broker_role = quorum::has_role(cfg, "broker");
  const auto advertised = broker_role ? inter_broker_listener(cfg) : config::Endpoint{};
  // What this broker presents to the others' inter-broker listener (the same listener name
  // on every broker), as Kafka assumes.
  const auto inter_broker_credentials =
      broker_role ? security::node_credentials(cfg, advertised.listener, "sasl.mechanism.inter.broker.protocol")
                  : security::ClientCredentials{};
  security::SaslListeners sasl_listeners(cfg);
  const security::Authorization authorization(cfg);
  const auto open_files_note = set_open_files_budget(cfg);
  net::ServerConfig admission;  // the client listeners' bounds, taken with the other checks
  const auto connections_note = set_connection_limits(cfg, admission);
  // One process per data directory, checked before anything is written to them.
  auto data_dirs = log_dirs;
  data_dirs.push_back(quorum_options.dir.parent_path());
  const auto dir_locks = storage::lock_dirs(data_dirs);
  // Every address this node serves on is bound before it writes to its dirs or takes part in
  // the quorum: a port held elsewhere stops the start before the node sends or answers
  // anything. Connections are refused until each server listens.
  std::vector<net::Listener> client_listeners, controller_listeners;
  for (const auto& ep : cfg.listeners()) {
    const bool controller = quorum::is_controller_listener(cfg, ep.listener);
    if (!controller && !broker_role) continue;  // a dedicated controller serves no clients
    net::Listener l{ep.listener, ep.host, ep.port, cfg.security_protocol(ep.listener), nullptr};
    if (l.security == SecurityProtocol::ssl || l.security == SecurityProtocol::sasl_ssl)
      l.tls = security::tls_listener(cfg, ep.listener);
    l.bound = std::make_shared<net::BoundAddress>(ep.host, ep.port, ep.listener);
    (controller ? controller_listeners : client_listeners).push_back(l);
  }
  if (broker_role)
    for (auto& l : api_listeners) {
      if (l.https) l.tls = security::tls_listener(cfg, "HTTPS");
      l.bound = std::make_shared<net::BoundAddress>(l.host, l.port, "http.listeners");
    }
  std::shared_ptr<net::BoundAddress> metrics_bound;
  if (metrics_at && broker_role)
    metrics_bound = std::make_shared<net::BoundAddress>(metrics_at->host, metrics_at->port, "metrics.listener");
  const auto new_log_dirs = metadata::new_log_dirs(log_dirs);  // before it formats them
  const auto cluster_id = metadata::ensure_node_identity(log_dirs, node_id, quorum::cluster_id_from(cfg));
  quorum_options.cluster_id = cluster_id;
  sasl_listeners.set_scram_decoy(security::scram_decoy(cfg, log_dirs.front()));
  const InjectedBugs bugs = injected_bugs(cfg);
  metadata_log_test_switches(bugs, quorum_options.log);
  metadata::BrokerInfo self{node_id, advertised.host, advertised.port, cfg.raw("broker.rack"), -1, {}, true};
  self.listener = advertised.listener;
  if (broker_role) self.endpoints = client_endpoints(cfg);

  net::ServerConfig server_cfg;
  server_cfg.socket_request_max_bytes = cfg.integer("socket.request.max.bytes");
  server_cfg.unauthenticated_request_max_bytes = cfg.integer("sasl.server.max.receive.size");
  server_cfg.connections_max_idle_ms = cfg.integer("connections.max.idle.ms");
  server_cfg.queued_max_request_bytes = cfg.integer("queued.max.request.bytes");
  server_cfg.queued_max_request_bytes_per_principal = cfg.integer("queued.max.request.bytes.per.principal");
  // The controller listener takes only the quorum's few nodes: the admission bounds are the
  // client listeners'.
  net::ServerConfig client_server_cfg = server_cfg;
  client_server_cfg.max_connections = admission.max_connections;
  client_server_cfg.max_connections_per_ip = admission.max_connections_per_ip;
  client_server_cfg.max_connections_per_ip_overrides = admission.max_connections_per_ip_overrides;
  client_server_cfg.max_connection_creation_rate = admission.max_connection_creation_rate;

  net::ReactorPool reactors(static_cast<size_t>(cfg.reactor_threads()));
  // The controller listener has a thread of its own: the quorum's fetches and votes and the
  // brokers' heartbeats must not wait behind client requests or a reactor that is creating
  // thousands of partitions, or a busy node would lose its quorum and be fenced.
  net::ReactorPool controller_reactor(1, "controller", false);
  net::BlockingPool blocking(static_cast<size_t>(cfg.integer("num.io.threads")));
  metrics::Registry registry(reactors.size());
  metrics::BrokerMetrics broker_metrics(registry);

  // The metadata quorum comes first: the image every other part starts from is its log
  // replayed. Its controller listener serves from the start, since the other voters need it
  // before any node can replay anything.
  metadata::MetadataStore metadata(cluster_id, node_id);
  quorum::QuorumDriver quorum_driver(quorum_options, &metadata);
  metadata.attach(quorum_driver);
  // Changes made on a node that does not lead the quorum go to the one that does.
  controller::ForwardingChannel forwarding(quorum_driver, metadata, node_id, kForwardTimeoutMs);
  if (quorum::networked(quorum_options)) metadata.forward_to(&forwarding);
  metadata.set_default_min_isr(static_cast<int32_t>(cfg.integer("min.insync.replicas")));
  metadata.set_password_secret(cfg.raw("password.encoder.secret"));
  metadata.set_injected_bugs(bugs.replication);
  controller::BrokerRegistry broker_registry(metadata, quorum_driver, cfg.integer("broker.session.timeout.ms"),
                                             cfg.integer("broker.heartbeat.interval.ms"));
  controller::ControllerDispatcher controller_dispatcher(quorum_driver, metadata, broker_registry, blocking,
                                                         sasl_listeners, authorization, cfg);
  net::Server controller_server(controller_reactor, blocking, controller_dispatcher, controller_listeners, server_cfg);
  controller::BrokerLifecycle lifecycle(metadata, quorum_driver, broker_registry, self, advertised.listener,
                                        cfg.integer("broker.heartbeat.interval.ms"),
                                        cfg.integer("broker.session.timeout.ms"));
  controller::LeaderBalancer leader_balancer(metadata, cfg.integer("leader.imbalance.check.interval.seconds") * 1000,
                                             static_cast<int32_t>(cfg.integer("leader.imbalance.per.broker.percentage")));
  auto stop_quorum = [&] {
    // The session checks stop first: the heartbeat connections closing with the listener must
    // not read as dead brokers.
    leader_balancer.stop();
    broker_registry.stop();
    controller_server.stop();
    if (!controller_reactor.drain(std::chrono::milliseconds(kReactorDrainMs))) {
      controller_reactor.stop();
      controller_reactor.join();
    }
    quorum_driver.stop();
  };
  // Lets the reactors run out of work; true when they did. Otherwise they are stopped, and
  // the frames left on them are destroyed only with the pool.
  auto drain_reactors = [&] {
    if (reactors.drain(std::chrono::milliseconds(kReactorDrainMs))) return true;
    reactors.stop();
    reactors.join();
    return false;
  };
  reactors.start();
  controller_reactor.start();
  try {
    quorum_driver.start();
    if (!controller_listeners.empty()) controller_server.start();
    broker_registry.start();
    if (cfg.boolean("auto.leader.rebalance.enable")) leader_balancer.start();
  } catch (const std::exception&) {
    stop_quorum();
    drain_reactors();
    throw;
  }
  int sig = 0;
  auto signalled = [&] { return take_signal(signals, sig, 20); };
  if (!broker_role) {
    if (metadata.wait_until_caught_up(signalled)) {
      log->info("brokerd controller {} of cluster {} serving the metadata quorum", node_id, cluster_id);
      sigwait(&signals, &sig);
    }
    log->info("received {}, shutting down", signal_name(sig));
    stop_quorum();
    drain_reactors();
    blocking.join();
    log->info("shutdown complete");
    return 0;
  }
  // Then this node replays the metadata and registers as a broker with the controller; it
  // serves clients once the controller has unfenced it.
  bool ready = metadata.wait_until_caught_up(signalled);
  if (ready) {
    lifecycle.set_clean_shutdown(partitions::log_dirs_shut_down_cleanly(log_dirs));
    lifecycle.start();
    try {
      ready = lifecycle.wait_until_unfenced(signalled);
    } catch (const std::exception&) {
      lifecycle.stop(false);
      stop_quorum();
      drain_reactors();
      throw;
    }
  }
  if (!ready) {
    log->info("received {} while joining the cluster, shutting down", signal_name(sig));
    lifecycle.stop(false);
    stop_quorum();
    drain_reactors();
    log->info("shutdown complete");
    return 0;
  }

  partitions::PartitionManager partitions(
      reactors, blocking,
      {node_id, log_dirs, cfg.topic_defaults(), cfg.integer("log.retention.check.interval.ms"),
       partitions::PartitionManager::cleaner_settings_from(cfg), cfg.integer("replica.lag.time.max.ms"),
       bugs.replication,
       [&metadata, session = cfg.integer("broker.session.timeout.ms")] { return metadata.image_current(session); },
       cfg.integer("broker.session.timeout.ms"), cfg.integer("replica.high.watermark.checkpoint.interval.ms"),
       cfg.integer("leader.replication.throttled.rate"), cfg.integer("follower.replication.throttled.rate"),
       new_log_dirs, bugs.storage});
  auto group_settings = group::settings_from(cfg);
  // A node alone creates __consumer_offsets at once; a cluster on the first FindCoordinator,
  // when the brokers have registered, so that its partitions spread over all of them.
  if (!quorum::networked(quorum_options)) {
    // A node alone is every broker its cluster will have: one replica.
    group_settings.offsets_partitions = group::ensure_offsets_topic(metadata, group_settings, 1);
  } else if (const auto* t = metadata.image()->topic(group::kOffsetsTopic)) {
    group_settings.offsets_partitions = t->partition_count();
  }
  log->info("{}", open_files_note);
  log->info("{}", connections_note);
  partitions.load(metadata.image());
  // Changes committed by other nodes reach the partitions too.
  metadata.on_publish([&partitions, &reactors](std::shared_ptr<const metadata::MetadataImage> image) {
    boost::asio::co_spawn(reactors.executor(0), partitions.reconcile(std::move(image)), boost::asio::detached);
  });
  // And whatever was published between the load and the hook.
  boost::asio::co_spawn(reactors.executor(0), partitions.reconcile(metadata.image()), boost::asio::detached);
  // Leaders ask the controller for ISR changes from a thread of their own, many in one
  // request, and the answers go back to each partition's core on its home shard.
  auto& isr_shrinks = registry.counter("brokerd_isr_shrinks_total", "ISR changes this node's leaders made that removed replicas.");
  auto& isr_expands = registry.counter("brokerd_isr_expands_total", "ISR changes this node's leaders made that added replicas.");
  partitions::IsrChangeBatcher isr_changes(metadata, [&partitions, &isr_shrinks, &isr_expands](
                                                      const partitions::IsrChangeBatcher::Change& change,
                                                      const metadata::AlterPartitionAnswer& answer) {
    boost::asio::post(partitions.executor_of(change.tp), [&partitions, &isr_shrinks, &isr_expands, change, answer] {
      const auto& tp = change.tp;
      const auto& request = change.item.request;
      partitions::Partition* p = partitions.local(tp);
      if (!p || p->topic_id() != change.item.topic_id) return;
      replication::PartitionState s = p->replica().state();
      if (answer.error != protocol::ErrorCode::none) {
        module_logger("replication")->info("{}: ISR change to {} refused: {}", tp.dir_name(),
                                           fmt::join(request.new_isr, ","), protocol::error_name(answer.error));
      } else {
        if (answer.assignment.isr.size() < change.isr_before) isr_shrinks.add();
        if (answer.assignment.isr.size() > change.isr_before) isr_expands.add();
      }
      s.leader = answer.assignment.leader;
      s.leader_epoch = answer.assignment.leader_epoch;
      s.partition_epoch = answer.assignment.partition_epoch;
      s.isr = answer.assignment.isr;
      p->replica().handle_alter_partition(request, answer.error, s, wall_clock_ms());
      partitions.after_replica_input(tp, *p);
    });
  });
  partitions.on_alter_partition([&partitions, &isr_changes](const partitions::TopicPartition& tp,
                                                            const protocol::Uuid& topic_id,
                                                            replication::AlterPartitionRequest request) {
    // The ISR the change starts from, read now on the home shard: by the time the answer
    // comes back, the committed change may already have reached the core through the image.
    partitions::Partition* proposer = partitions.local(tp);
    const size_t isr_before = proposer ? proposer->replica().state().isr.size() : 0;
    isr_changes.submit({tp, {topic_id, tp.partition, std::move(request)}, isr_before});
  });
  group::GroupCoordinator groups(group_settings, partitions, blocking);
  // Transactions: created on the first FindCoordinator for a transactional id, as Kafka does;
  // a node alone keeps __transaction_state on itself.
  auto txn_settings = transactions::settings_from(cfg);
  if (!quorum::networked(quorum_options)) txn_settings.replication_factor = 1;
  txn_settings.forget_prepared_commit = bugs.forget_prepared_commit;
  txn_settings.finalized_txn_version = [&metadata] {
    return metadata::finalized_level(*metadata.image(), metadata::kTransactionVersion);
  };
  if (const auto* t = metadata.image()->topic(std::string(transactions::kTransactionStateTopic)))
    txn_settings.rules.log_partitions = t->partition_count();
  transactions::MarkerSender txn_markers(node_id, metadata, inter_broker_credentials,
                                         30'000);  // Kafka's request.timeout.ms for inter-broker calls
  transactions::TransactionCoordinator txn_coordinator(txn_settings, partitions, blocking, txn_markers);
  transactions::PartitionVerifier txn_verifier(node_id, metadata, txn_coordinator, blocking, inter_broker_credentials);
  // Followers fetch from leaders once the partitions know their roles.
  fetcher::FetcherOptions fetch_opts;
  fetch_opts.node_id = node_id;
  fetch_opts.fetchers_per_leader = static_cast<int32_t>(cfg.integer("num.replica.fetchers"));
  fetch_opts.partition_max_bytes = static_cast<int32_t>(cfg.integer("replica.fetch.max.bytes"));
  fetch_opts.response_max_bytes = static_cast<int32_t>(cfg.integer("replica.fetch.response.max.bytes"));
  fetch_opts.wait_max_ms = static_cast<int32_t>(cfg.integer("replica.fetch.wait.max.ms"));
  fetch_opts.backoff_ms = static_cast<int32_t>(cfg.integer("replica.fetch.backoff.ms"));
  fetch_opts.credentials = inter_broker_credentials;
  fetch_opts.bytes_replicated = &registry.counter("brokerd_replication_bytes_in_total",
                                                  "Bytes of record batches this node fetched as a follower.");
  fetcher::ReplicaFetchers fetchers(fetch_opts, partitions, metadata);
  // Partitions without a leader anywhere in the cluster, as this node's image shows them.
  registry.gauge_fn("brokerd_offline_partitions", "Partitions with no live leader (every eligible replica is down).", [&metadata] {
    double offline = 0;
    metadata.image()->for_each_topic([&](const metadata::TopicPtr& t) {
      for (const auto& a : t->partitions) offline += a.leader < 0 ? 1 : 0;
    });
    return offline;
  });

  // Transactions this node coordinates, and the markers it sends.
  {
    const auto& txn = txn_coordinator.counts();
    registry.gauge_fn("brokerd_transactions_ongoing", "Transactions open on the transactional ids this node coordinates.",
                      [&txn] { return static_cast<double>(txn.ongoing.load()); });
    registry.counter_fn("brokerd_transactions_committed_total", "Transactions this node's coordinator committed.",
                        [&txn] { return static_cast<double>(txn.committed.load()); });
    registry.counter_fn("brokerd_transactions_aborted_total",
                        "Transactions this node's coordinator aborted (by their producers or timed out).",
                        [&txn] { return static_cast<double>(txn.aborted.load()); });
    registry.counter_fn("brokerd_transactions_timed_out_total",
                        "Transactions this node's coordinator aborted because they outlived transaction.timeout.ms.",
                        [&txn] { return static_cast<double>(txn.timed_out.load()); });
    registry.counter_fn("brokerd_txn_marker_requests_total", "WriteTxnMarkers requests this node sent and had answered.",
                        [&txn_markers] { return static_cast<double>(txn_markers.round_trips()); });
    registry.counter_fn("brokerd_txn_marker_request_seconds_total",
                        "Time WriteTxnMarkers requests took to be answered (markers written on every in-sync replica), "
                        "summed: divided by brokerd_txn_marker_requests_total, the mean marker latency.",
                        [&txn_markers] { return static_cast<double>(txn_markers.round_trip_micros()) / 1e6; });
  }
  registry.counter_fn("brokerd_log_flushes_total", "Partition flushes synced (flush.ms, flush.messages).",
                      [] { return static_cast<double>(storage::flush_targets_synced()); });
  registry.gauge_fn("brokerd_open_partition_files", "Segment files partitions hold open (log.open.files.max budgets them).",
                    [] { return static_cast<double>(storage::open_files_in_use()); });
  kafka::FetchSessionCache fetch_sessions(static_cast<size_t>(cfg.integer("max.incremental.fetch.session.cache.slots")));
  registry.gauge_fn("brokerd_fetch_sessions", "Incremental fetch sessions (KIP-227) held.",
                    [&fetch_sessions] { return static_cast<double>(fetch_sessions.size()); });
  registry.gauge_fn("brokerd_fetch_session_partitions", "Partitions held by every incremental fetch session.",
                    [&fetch_sessions] { return static_cast<double>(fetch_sessions.partitions()); });
  // Mirror links: the topics of other clusters copied here (docs/mirroring.md).
  partitions::MirrorStatus mirror_status;
  mirror::MirrorOptions mirror_opts;
  mirror_opts.node_id = node_id;
  mirror_opts.replication_factor = static_cast<int32_t>(cfg.integer("default.replication.factor"));
  mirror_opts.wait_max_ms = static_cast<int32_t>(cfg.integer("mirror.fetch.wait.max.ms"));
  mirror_opts.partition_max_bytes = static_cast<int32_t>(cfg.integer("mirror.fetch.max.bytes"));
  mirror_opts.response_max_bytes = static_cast<int32_t>(cfg.integer("mirror.fetch.response.max.bytes"));
  mirror_opts.backoff_ms = cfg.integer("mirror.fetch.backoff.ms");
  mirror_opts.metadata_refresh_ms = cfg.integer("mirror.metadata.refresh.interval.ms");
  mirror_opts.offsets_sync_ms = cfg.integer("mirror.offsets.sync.interval.ms");
  mirror_opts.password_secret = cfg.raw("password.encoder.secret");
  mirror::MirrorService mirrors(mirror_opts, metadata, partitions, mirror_status);
  kafka::register_mirror_collectors(registry, mirror_status);
  quota::Throttler throttler(static_cast<int>(cfg.integer("quota.window.num")),
                             cfg.integer("quota.window.size.seconds") * 1000);
  kafka::KafkaDispatcher dispatcher(kafka::Services{cfg, metadata, partitions, reactors, blocking, node_id, groups, txn_coordinator, txn_verifier,
                                                    broker_metrics, quorum_driver, fetch_sessions, mirror_status,
                                                    sasl_listeners, authorization, throttler});
  net::Server server(reactors, blocking, dispatcher, client_listeners, client_server_cfg);
  // The /v1 HTTP API: Kafka requests run by the same dispatcher, or sent to the node that
  // answers them over the inter-broker listener.
  http::ApiSettings api_settings;
  api_settings.server.request_timeout_ms = cfg.integer("http.request.timeout.ms");
  api_settings.server.idle_timeout_ms = cfg.integer("connections.max.idle.ms");
  api_settings.server.max_body_bytes = static_cast<size_t>(cfg.integer("http.max.request.bytes"));
  api_settings.server.max_connections = cfg.integer("http.max.connections");
  api_settings.node_id = node_id;
  api_settings.inter_broker_credentials = inter_broker_credentials;
  api_settings.authentication = cfg.raw("http.authentication");
  api_settings.hash_encoded_key = bugs.http_hash_encoded_key;
  std::optional<http::HttpApi> api_server;
  if (broker_role && !api_listeners.empty()) api_server.emplace(reactors, blocking, dispatcher, metadata, registry, api_listeners, api_settings);

  auto connections = [&server] { return static_cast<double>(server.connection_count()); };
  registry.gauge_fn("brokerd_connections", "Open client connections.", connections);
  auto refused = [&server] { return static_cast<double>(server.refused_connection_count()); };
  registry.counter_fn("brokerd_connections_refused_total",
                      "Client connections closed at accept: max.connections, max.connections.per.ip or "
                      "max.connection.creation.rate reached.", refused);
  auto queued = [&server] { return static_cast<double>(server.queued_request_bytes()); };
  registry.gauge_fn("brokerd_queued_request_bytes", "Request bytes read and not yet answered.", queued);
  registry.sync_collector(metrics::write_process_metrics);
  kafka::register_broker_collectors(registry, partitions, groups);
  // Bound at the start (above), so a taken port fails the start cleanly; /ready says 503 until
  // the Kafka listeners accept. Stopped before the reactors, whose shards a scrape visits.
  std::optional<metrics::HttpServer> http;
  if (metrics_at) {
    http.emplace(registry, *metrics_at, metrics_bound);
    http->start();
  }

  // Stops everything started below. Every wait that could hold the stop is answered first
  // (parked fetches, rebalance waits), then the listeners close and in-flight requests
  // finish, the quorum resigns and stops, then the reactors run until nothing is left on
  // them, so no suspended coroutine outlives an object it uses. True when that drain completed.
  auto shut_down = [&] {
    if (http) http->set_ready(false);
    lifecycle.stop(true);  // fenced first: clients stop being sent here
    forwarding.stop();     // changes in flight give up rather than wait for a quorum that may be stopping too
    fetchers.stop();       // its rounds wait on the shards: before the reactors stop
    mirrors.stop();        // the same
    isr_changes.stop();    // its answers go to the shards too
    partitions.stop();
    groups.stop();
    txn_markers.stop();
    txn_verifier.stop();
    txn_coordinator.stop();
    server.stop();
    if (api_server) api_server->stop();
    stop_quorum();
    if (http) http->stop();
    const bool drained = drain_reactors();
    partitions.shutdown();
    blocking.join();
    return drained;
  };
  partitions.start();
  fetchers.start();
  mirrors.start();
  groups.start();
  txn_coordinator.start();
  try {
    server.start();
    if (api_server) api_server->start();
  } catch (const std::exception& e) {
    shut_down();
    throw;
  }
  log->info("brokerd node {} of cluster {} serving on {}:{} ({} reactor threads, data in {})", node_id, cluster_id,
            advertised.host, server.port(advertised.listener), reactors.size(), log_dirs.front().string());
  if (api_server)
    for (size_t i = 0; i < api_listeners.size(); ++i)
      log->info("/v1 HTTP API on http://{}:{}", api_listeners[i].host, api_server->port(i));
  if (http) {
    http->set_ready(true);
    log->info("metrics on http://{}:{}/metrics", metrics_at->host, http->port());
  }

  sigwait(&signals, &sig);
  log->info("received {}, shutting down", signal_name(sig));
  if (!shut_down()) {
    // Some work never finished, and its suspended frames may reference anything below: the
    // logs are flushed and closed, so end here without running the destructors.
    log->error("reactors still busy {} ms after the stop; logs are flushed, exiting without teardown",
               kReactorDrainMs);
    spdlog::shutdown();
    std::_Exit(0);
  }
  log->info("shutdown complete");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto args = parse_args(argc, argv);
    auto cfg = brokerd::config::load_broker_config(args.config, args.overrides);
    brokerd::init_logging(cfg.raw("log.level"));
    return run(cfg);
  } catch (const brokerd::config::ConfigError& e) {
    std::fprintf(stderr, "brokerd: invalid configuration: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "brokerd: cannot start: %s\n", e.what());
    return 1;
  }
}
