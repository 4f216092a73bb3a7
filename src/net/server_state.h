#pragma once
// What the server and its connections share. Held by shared_ptr so that coroutines still
// unwinding after Server::stop() never see a dangling server.
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
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

  void add_live() {
    std::lock_guard lock(mu);
    ++live_connections;
  }
  void remove_live() {
    std::lock_guard lock(mu);
    --live_connections;
    cv.notify_all();
  }
};

}  // namespace brokerd::net
