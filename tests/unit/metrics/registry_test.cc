#include "brokerd/metrics/registry.h"

#include <gtest/gtest.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <thread>
#include <vector>

#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/metrics/process_metrics.h"
#include "brokerd/net/reactor_pool.h"

namespace brokerd::metrics {
namespace {

// Runs fn on every reactor shard and waits.
template <typename F>
void on_every_shard(net::ReactorPool& pool, F fn) {
  std::vector<std::future<void>> done;
  for (size_t i = 0; i < pool.size(); ++i) {
    auto task = [fn] { fn(); };
    done.push_back(boost::asio::post(pool.executor(i), boost::asio::use_future(task)));
  }
  for (auto& f : done) f.get();
}

TEST(Registry, CountersSumShardsAndOtherThreads) {
  net::ReactorPool pool(3);
  pool.start();
  Registry r(pool.size());
  Counter& c = r.counter("c_total", "help");
  on_every_shard(pool, [&c] {
    for (int i = 0; i < 1000; ++i) c.add();
  });
  std::vector<std::thread> others;
  for (int t = 0; t < 4; ++t)
    others.emplace_back([&c] {
      for (int i = 0; i < 1000; ++i) c.add(2);
    });
  for (auto& t : others) t.join();
  EXPECT_EQ(c.value(), 3 * 1000 + 4 * 2000u);
  pool.stop();
  pool.join();
}

TEST(Registry, GaugeGoesUpAndDownAcrossThreads) {
  Registry r(2);
  Gauge& g = r.gauge("g", "help");
  {
    GaugeHold a(g), b(g);
    EXPECT_EQ(g.value(), 2);
  }
  EXPECT_EQ(g.value(), 0);
}

TEST(Registry, HistogramBucketsSumAndCount) {
  Registry r(1);
  Histogram& h = r.histogram("h_seconds", "help", {0.001, 0.01, 0.1});
  h.observe(0.0005);  // first bucket
  h.observe(0.001);   // le is inclusive
  h.observe(0.05);
  h.observe(3);       // +Inf
  auto s = h.snapshot();
  ASSERT_EQ(s.counts.size(), 4u);
  EXPECT_EQ(s.counts[0], 2u);
  EXPECT_EQ(s.counts[1], 0u);
  EXPECT_EQ(s.counts[2], 1u);
  EXPECT_EQ(s.counts[3], 1u);
  EXPECT_NEAR(s.sum, 3.0515, 1e-6);
  auto text = r.render_sync();
  EXPECT_NE(text.find("# TYPE h_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("h_seconds_bucket{le=\"0.01\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_count 4\n"), std::string::npos) << text;
}

TEST(Registry, RejectsUnsortedBounds) {
  Registry r(1);
  EXPECT_THROW(r.histogram("bad", "help", {1, 0.5}), std::invalid_argument);
}

TEST(Registry, LabelledSeriesShareOneFamilyHeader) {
  Registry r(1);
  r.counter("req_total", "Requests.", {{"api", "Produce"}}).add(3);
  r.counter("req_total", "Requests.", {{"api", "Fetch"}}).add(1);
  auto text = r.render_sync();
  EXPECT_EQ(text,
            "# HELP req_total Requests.\n# TYPE req_total counter\n"
            "req_total{api=\"Produce\"} 3\nreq_total{api=\"Fetch\"} 1\n");
  EXPECT_THROW(r.gauge("req_total", "x"), std::invalid_argument);
}

TEST(Registry, KeyedCountersPerShardSumAtScrape) {
  net::ReactorPool pool(2);
  pool.start();
  Registry r(pool.size());
  auto& k = r.keyed_counters("topic", {{"in_total", "In."}, {"out_total", "Out."}});
  on_every_shard(pool, [&k] {
    for (int i = 0; i < 100; ++i) {
      k.row("orders").add(0, 10);
      k.row("we\"ird").add(1, 1);
    }
  });
  k.row("orders").add(0, 5);  // from a non-reactor thread
  auto totals = k.totals();
  EXPECT_EQ(totals["orders"][0], 2 * 1000u + 5);
  EXPECT_EQ(totals["we\"ird"][1], 200u);
  auto text = r.render_sync();
  EXPECT_NE(text.find("in_total{topic=\"orders\"} 2005\n"), std::string::npos) << text;
  EXPECT_NE(text.find("out_total{topic=\"we\\\"ird\"} 200\n"), std::string::npos) << text;
  pool.stop();
  pool.join();
}

TEST(Registry, ScrapeRunsCollectorsAfterRegisteredMetrics) {
  Registry r(1);
  r.gauge_fn("conn", "Connections.", [] { return 7.0; });
  r.sync_collector([](TextWriter& out) {
    out.family("sync_g", "S.", "gauge");
    out.sample("sync_g", {}, 1);
  });
  auto collector = [](TextWriter& out) -> boost::asio::awaitable<void> {
    out.family("async_g", "A.", "gauge");
    out.sample("async_g", {}, 2);
    co_return;
  };
  r.collector(collector);
  boost::asio::io_context ioc;
  auto fut = boost::asio::co_spawn(ioc, r.scrape(), boost::asio::use_future);
  ioc.run();
  auto text = fut.get();
  EXPECT_EQ(text,
            "# HELP conn Connections.\n# TYPE conn gauge\nconn 7\n"
            "# HELP sync_g S.\n# TYPE sync_g gauge\nsync_g 1\n"
            "# HELP async_g A.\n# TYPE async_g gauge\nasync_g 2\n");
}

TEST(BrokerMetrics, UnknownApisShareOneSeries) {
  Registry r(1);
  BrokerMetrics m(r);
  m.add_api(0, "Produce");
  m.api(0).requests.add();
  m.api(99).requests.add();
  m.api(-1).errors.add();
  auto text = r.render_sync();
  EXPECT_NE(text.find("brokerd_requests_total{api=\"Produce\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("brokerd_requests_total{api=\"unknown\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("brokerd_request_errors_total{api=\"unknown\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("brokerd_produce_purgatory_size 0\n"), std::string::npos) << text;
}

TEST(ProcessMetrics, ParsesProcStatWithAwkwardName) {
  // Fields 3.. after "(comm)"; utime=14 stime=15 starttime=22 vsize=23 rss=24.
  std::string stat = "123 (a) b (c)) S";
  for (int f = 4; f <= 52; ++f) {
    int v = f == 14 ? 200 : f == 15 ? 100 : f == 22 ? 1000 : f == 23 ? 4096000 : f == 24 ? 10 : 0;
    stat += " " + std::to_string(v);
  }
  auto s = parse_proc_stat(stat, 100, 1'700'000'000, 4096);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(s->start_time_seconds, 1'700'000'010.0);
  EXPECT_DOUBLE_EQ(s->virtual_bytes, 4096000);
  EXPECT_DOUBLE_EQ(s->resident_bytes, 40960);
  EXPECT_FALSE(parse_proc_stat("garbage", 100, 0, 4096));
  auto self = read_process_stats();
  ASSERT_TRUE(self);
  EXPECT_GT(self->resident_bytes, 0);
  EXPECT_GT(self->open_fds, 0);
}

}  // namespace
}  // namespace brokerd::metrics
