#pragma once
// Sends each request to the dispatcher of the listener that accepted its connection (the
// client listeners to the Kafka API, the controller listener to the quorum's RPCs).
#include <map>
#include <string>

#include "brokerd/net/request.h"

namespace brokerd::net {

class ListenerRouter final : public Dispatcher {
 public:
  // Requests on listeners without a route of their own go to `fallback`.
  explicit ListenerRouter(Dispatcher& fallback) : fallback_(fallback) {}
  void route(const std::string& listener, Dispatcher& d) { routes_[listener] = &d; }

  boost::asio::awaitable<Response> dispatch(Request req) override {
    Dispatcher* d = &fallback_;
    if (req.connection) {
      auto it = routes_.find(req.connection->listener);
      if (it != routes_.end()) d = it->second;
    }
    return d->dispatch(std::move(req));
  }

 private:
  Dispatcher& fallback_;
  std::map<std::string, Dispatcher*> routes_;
};

}  // namespace brokerd::net
