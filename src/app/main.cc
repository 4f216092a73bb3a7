// brokerd: wires configuration, storage, metadata, the Kafka API and the network together,
// then waits for SIGTERM or SIGINT and shuts down cleanly.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "brokerd/cluster/metadata_store.h"
#include "brokerd/cluster/node_identity.h"
#include "brokerd/cluster/partition_manager.h"
#include "brokerd/common/logger.h"
#include "brokerd/config/broker_config.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/kafka/broker_collectors.h"
#include "brokerd/kafka/dispatcher.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/metrics/http_server.h"
#include "brokerd/metrics/process_metrics.h"
#include "brokerd/metrics/registry.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/server.h"

namespace {

// How long the reactors may take to run out of work once everything was told to stop.
constexpr int64_t kReactorDrainMs = 5000;

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

int run(const brokerd::config::BrokerConfig& cfg) {
  using namespace brokerd;
  auto log = module_logger("main");
  const auto metrics_at = metrics_address(cfg);
  // Signals are taken by sigwait on this thread only; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const auto log_dirs = cfg.log_dirs();
  const int32_t node_id = cfg.node_id();
  auto cluster_id = cluster::ensure_node_identity(log_dirs, node_id);
  auto advertised = cfg.advertised_listeners().front();
  cluster::BrokerInfo self{node_id, advertised.host, advertised.port, cfg.raw("broker.rack")};

  net::ReactorPool reactors(static_cast<size_t>(cfg.reactor_threads()));
  net::BlockingPool blocking(static_cast<size_t>(cfg.integer("num.io.threads")));
  metrics::Registry registry(reactors.size());
  metrics::BrokerMetrics broker_metrics(registry);
  cluster::MetadataStore metadata(log_dirs.front() / "__cluster_metadata-0", cluster_id, self);
  cluster::PartitionManager partitions(
      reactors, blocking,
      {log_dirs, cfg.topic_defaults(), cfg.integer("log.retention.check.interval.ms"),
       cluster::PartitionManager::cleaner_settings_from(cfg)});
  auto group_settings = group::settings_from(cfg);
  group_settings.offsets_partitions = group::ensure_offsets_topic(
      metadata, group_settings, static_cast<int32_t>(cfg.integer("offsets.topic.replication.factor")));
  partitions.load(*metadata.image());
  group::GroupCoordinator groups(group_settings, partitions, blocking);

  kafka::KafkaDispatcher dispatcher(kafka::Services{cfg, metadata, partitions, reactors, blocking, node_id, groups, broker_metrics});
  std::vector<net::Listener> listeners;
  for (const auto& ep : cfg.listeners()) listeners.push_back({ep.listener, ep.host, ep.port});
  net::ServerConfig server_cfg;
  server_cfg.socket_request_max_bytes = cfg.integer("socket.request.max.bytes");
  server_cfg.connections_max_idle_ms = cfg.integer("connections.max.idle.ms");
  server_cfg.queued_max_request_bytes = cfg.integer("queued.max.request.bytes");
  net::Server server(reactors, blocking, dispatcher, listeners, server_cfg);

  auto connections = [&server] { return static_cast<double>(server.connection_count()); };
  registry.gauge_fn("brokerd_connections", "Open client connections.", connections);
  auto queued = [&server] { return static_cast<double>(server.queued_request_bytes()); };
  registry.gauge_fn("brokerd_queued_request_bytes", "Request bytes read and not yet answered.", queued);
  registry.sync_collector(metrics::write_process_metrics);
  kafka::register_broker_collectors(registry, partitions, groups);
  // Bound before anything runs, so a taken port fails the start cleanly; /ready says 503 until
  // the Kafka listeners accept. Stopped before the reactors, whose shards a scrape visits.
  std::optional<metrics::HttpServer> http;
  if (metrics_at) {
    http.emplace(registry, *metrics_at);
    http->start();
  }

  // Stops everything started below. Every wait that could hold the stop is answered first
  // (parked fetches, rebalance waits), then the listeners close and in-flight requests
  // finish, then the reactors run until nothing is left on them, so no suspended coroutine
  // outlives an object it uses. True when that drain completed.
  auto shut_down = [&] {
    if (http) http->set_ready(false);
    partitions.stop();
    groups.stop();
    server.stop();
    if (http) http->stop();
    const bool drained = reactors.drain(std::chrono::milliseconds(kReactorDrainMs));
    if (!drained) {
      reactors.stop();
      reactors.join();
    }
    partitions.shutdown();
    metadata.close();
    blocking.join();
    return drained;
  };
  reactors.start();
  partitions.start();
  groups.start();
  try {
    server.start();
  } catch (const std::system_error& e) {
    shut_down();
    throw;
  }
  log->info("brokerd node {} of cluster {} serving on {}:{} ({} reactor threads, data in {})", node_id, cluster_id,
            listeners.front().host, server.port(size_t{0}), reactors.size(), log_dirs.front().string());
  if (http) {
    http->set_ready(true);
    log->info("metrics on http://{}:{}/metrics", metrics_at->host, http->port());
  }

  int sig = 0;
  sigwait(&signals, &sig);
  log->info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
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
