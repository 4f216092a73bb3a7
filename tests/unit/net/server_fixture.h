#pragma once
// A running server on 127.0.0.1:0 with two reactor shards (or as many as a derived fixture
// asks for) and a dispatcher the test supplies.
#include <gtest/gtest.h>

#include <memory>

#include "brokerd/net/blocking_pool.h"
#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/server.h"
#include "test_support.h"

namespace brokerd::net::test {

struct ServerFixture : ::testing::Test {
  explicit ServerFixture(size_t shards = 2) : reactors(shards), blocking(2) { reactors.start(); }
  ~ServerFixture() override {
    if (server) server->stop();
    server.reset();
    reactors.stop();
    reactors.join();
  }

  void start(FnDispatcher::Fn fn, ServerConfig config = {}) {
    dispatcher = std::make_unique<FnDispatcher>(std::move(fn));
    server = std::make_unique<Server>(reactors, blocking, *dispatcher,
                                      std::vector<Listener>{{"PLAINTEXT", "127.0.0.1", 0}}, config);
    server->start();
  }
  uint16_t port() const { return server->port("PLAINTEXT"); }

  ReactorPool reactors;
  BlockingPool blocking;
  std::unique_ptr<FnDispatcher> dispatcher;
  std::unique_ptr<Server> server;
};

}  // namespace brokerd::net::test
