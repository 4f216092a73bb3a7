#pragma once
// The /v1 API's routes: which call a method and path name, and the route that answers it.
//
//   POST /v1/topics                                       create_topic        topics_routes.cc
//   GET  /v1/topics/{topic}/metadata                      topic_metadata      topics_routes.cc
//   POST /v1/topics/{topic}/records                       produce_records     produce_route.cc
//   GET  /v1/topics/{topic}/partitions/{p}/records        read_records        read_route.cc
//   POST /v1/groups/{group}/positions                     save_positions      positions_routes.cc
//   GET  /v1/groups/{group}/positions                     read_positions      positions_routes.cc
#include <boost/asio/awaitable.hpp>

#include <string>

#include "brokerd/http/routes.h"
#include "http/route_metrics.h"
#include "http/route_support.h"

namespace brokerd::http {

class ApiRoutes final : public Routes {
 public:
  // `metrics` may be null (no counting).
  ApiRoutes(ApiContext ctx, RouteMetrics* metrics) : ctx_(ctx), metrics_(metrics) {}
  boost::asio::awaitable<Reply> answer(Call& call) override;

 private:
  // The reply, and which route gave it.
  boost::asio::awaitable<Reply> route(Call& call, Route& chosen);
  ApiContext ctx_;
  RouteMetrics* metrics_;
};

boost::asio::awaitable<Reply> create_topic(ApiContext& ctx, Call& call);
boost::asio::awaitable<Reply> topic_metadata(ApiContext& ctx, Call& call, const std::string& topic);
boost::asio::awaitable<Reply> produce_records(ApiContext& ctx, Call& call, const std::string& topic);
boost::asio::awaitable<Reply> read_records(ApiContext& ctx, Call& call, const std::string& topic, int32_t partition,
                                           const Query& query);
boost::asio::awaitable<Reply> save_positions(ApiContext& ctx, Call& call, const std::string& group);
boost::asio::awaitable<Reply> read_positions(ApiContext& ctx, Call& call, const std::string& group);

}  // namespace brokerd::http
