#pragma once
// Routes each decoded request to the handler of its API key, after checking that the API
// and version are ones this broker serves. Implements the network layer's Dispatcher.
#include "brokerd/kafka/services.h"
#include "brokerd/net/request.h"

namespace brokerd::kafka {

class KafkaDispatcher final : public net::Dispatcher {
 public:
  // Registers the metrics of every served API.
  explicit KafkaDispatcher(Services services);
  boost::asio::awaitable<net::Response> dispatch(net::Request req) override;

 private:
  Services services_;
};

}  // namespace brokerd::kafka
