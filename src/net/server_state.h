#pragma once
// What the server and its connections share. Held by shared_ptr so that coroutines still
// unwinding after Server::stop() never see a dangling server.
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "brokerd/common/logger.h"
#include "brokerd/net/server.h"

namespace brokerd::net {

class BlockingPool;
class Connection;
class ReactorPool;

struct Server::State {
  State(ReactorPool& r, BlockingPool& b, Dispatcher& d, std::vector<Listener> l, ServerConfig c)
      : reactors(r), blocking(b), dispatcher(d), listeners(std::move(l)), config(c),
        log(module_logger("net")) {}

  ReactorPool& reactors;
  BlockingPool& blocking;
  Dispatcher& dispatcher;
  const std::vector<Listener> listeners;
  const ServerConfig config;
  const std::shared_ptr<spdlog::logger> log;

  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors;
  std::vector<uint16_t> ports;

  std::atomic<int64_t> queued_bytes{0};  // request bytes read and not yet answered, node-wide
  // The same per principal; an entry lives as long as the node (principals are few: those
  // the listeners authenticate).
  using PrincipalBytes = std::shared_ptr<std::atomic<int64_t>>;
  PrincipalBytes principal_bytes(const std::string& principal) {
    std::lock_guard lock(mu);
    auto& slot = queued_by_principal[principal];
    if (!slot) slot = std::make_shared<std::atomic<int64_t>>(0);
    return slot;
  }
  std::atomic<uint64_t> next_connection_id{1};
  std::atomic<size_t> next_shard{0};
  std::atomic<bool> stopping{false};

  // Open connections of each shard; shard i's map is only touched on shard i.
  std::vector<std::unordered_map<uint64_t, std::shared_ptr<Connection>>> shards;

  // Counts stop() waits on.
  std::mutex mu;
  std::condition_variable cv;
  size_t live_connections = 0;
  size_t accept_loops = 0;
  std::unordered_map<std::string, PrincipalBytes> queued_by_principal;  // under mu

  std::unordered_map<std::string, int64_t> live_by_address;  // under mu
  std::atomic<uint64_t> refused_connections{0};

  // Counts a new connection from `address`, or says which bound it would pass (nothing counted).
  std::optional<std::string> admit(const std::string& address) {
    std::lock_guard lock(mu);
    if (config.max_connections >= 0 && static_cast<int64_t>(live_connections) >= config.max_connections)
      return "max.connections " + std::to_string(config.max_connections);
    int64_t per_address = config.max_connections_per_ip;
    if (auto it = config.max_connections_per_ip_overrides.find(address);
        it != config.max_connections_per_ip_overrides.end())
      per_address = it->second;
    auto& from = live_by_address[address];
    if (per_address >= 0 && from >= per_address) {
      if (from == 0) live_by_address.erase(address);
      return "max.connections.per.ip " + std::to_string(per_address);
    }
    ++from;
    ++live_connections;
    return std::nullopt;
  }
  void remove_live(const std::string& address) {
    std::lock_guard lock(mu);
    if (auto it = live_by_address.find(address); it != live_by_address.end() && --it->second <= 0)
      live_by_address.erase(it);
    --live_connections;
    cv.notify_all();
  }
};

}  // namespace brokerd::net
