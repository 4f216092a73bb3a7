// brokerd-http-load: drives the /v1 HTTP API of one node and reports throughput and latency.
//
//   brokerd-http-load --url http://127.0.0.1:8080 --topic T --mode produce|read
//       [--connections 4] [--batch 1000] [--size 1024] [--keys 1000] [--duration 20] [--rate 0]
//       [--partitions 6]
//
// produce: each connection (a thread, keep-alive) POSTs bodies of --batch records of --size
//   bytes (JSON text values, keys spread over --keys) as fast as answers come, or, with
//   --rate R, single-record POSTs at R requests/s over all connections (paced latency).
// read: each connection reads its share of the --partitions partitions from offset 0 with
//   max_bytes 1 MiB (base64, whatever wrote the records), following next_offset, until the
//   duration ends or it has read all.
// Prints one line: records/s, MB/s of record values (reads count --size per record), and
// p50/p99/p999 of the request latency.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/json/src.hpp>
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../loadgen/histogram.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "8080";
  std::string topic = "http-load";
  std::string mode = "produce";
  int connections = 4;
  int batch = 1000;
  int size = 1024;
  int keys = 1000;
  int partitions = 6;
  double duration = 20;
  double rate = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--url") {
      std::string url = next();
      const std::string scheme = "http://";
      if (url.rfind(scheme, 0) != 0) throw std::invalid_argument("--url must be http://HOST:PORT");
      url = url.substr(scheme.size());
      const auto colon = url.rfind(':');
      o.host = url.substr(0, colon);
      o.port = colon == std::string::npos ? "80" : url.substr(colon + 1);
    } else if (a == "--topic") o.topic = next();
    else if (a == "--mode") o.mode = next();
    else if (a == "--connections") o.connections = std::stoi(next());
    else if (a == "--batch") o.batch = std::stoi(next());
    else if (a == "--size") o.size = std::stoi(next());
    else if (a == "--keys") o.keys = std::stoi(next());
    else if (a == "--partitions") o.partitions = std::stoi(next());
    else if (a == "--duration") o.duration = std::stod(next());
    else if (a == "--rate") o.rate = std::stod(next());
    else throw std::invalid_argument("unknown argument " + a);
  }
  if (o.mode != "produce" && o.mode != "read") throw std::invalid_argument("--mode is produce or read");
  return o;
}

// A body of `count` records, keys from `first_key` on.
std::string produce_body(const Options& o, int count, int first_key) {
  json::array records;
  const std::string value(static_cast<size_t>(o.size), 'v');
  for (int i = 0; i < count; ++i) {
    json::object r;
    r["key"] = "key-" + std::to_string((first_key + i) % o.keys);
    r["value"] = value;
    records.push_back(std::move(r));
  }
  json::object body;
  body["records"] = std::move(records);
  return json::serialize(body);
}

struct Result {
  loadgen::Histogram latency_us;
  uint64_t records = 0;
  uint64_t value_bytes = 0;
  uint64_t errors = 0;
};

class Connection {
 public:
  explicit Connection(const Options& o) : stream_(ioc_) {
    tcp::resolver resolver(ioc_);
    stream_.connect(resolver.resolve(o.host, o.port));
    stream_.socket().set_option(tcp::no_delay(true));
  }
  // Status and body.
  std::pair<unsigned, std::string> call(http::verb verb, const std::string& target, const std::string& body) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "brokerd");
    req.keep_alive(true);
    if (verb == http::verb::post) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
      req.prepare_payload();
    }
    http::write(stream_, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    http::read(stream_, buffer_, parser);
    auto res = parser.release();
    return {res.result_int(), std::move(res.body())};
  }

 private:
  asio::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

void produce(const Options& o, int index, clock_type::time_point end, Result& out) {
  Connection c(o);
  const std::string target = "/v1/topics/" + o.topic + "/records";
  const bool paced = o.rate > 0;
  const int count = paced ? 1 : o.batch;
  std::vector<std::string> bodies;
  for (int i = 0; i < 8; ++i) bodies.push_back(produce_body(o, count, (index * 8 + i) * count));
  const auto interval = paced ? std::chrono::duration<double>(o.connections / o.rate) : std::chrono::duration<double>(0);
  auto next = clock_type::now();
  for (size_t n = 0; clock_type::now() < end; ++n) {
    if (paced) {
      std::this_thread::sleep_until(next);
      next += std::chrono::duration_cast<clock_type::duration>(interval);
    }
    const auto t0 = clock_type::now();
    auto [status, body] = c.call(http::verb::post, target, bodies[n % bodies.size()]);
    out.latency_us.record(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - t0).count()));
    if (status != 200) {
      ++out.errors;
      continue;
    }
    out.records += static_cast<uint64_t>(count);
    out.value_bytes += static_cast<uint64_t>(count) * static_cast<uint64_t>(o.size);
  }
}

void read(const Options& o, int index, clock_type::time_point end, Result& out) {
  Connection c(o);
  for (int p = index; p < o.partitions && clock_type::now() < end; p += o.connections) {
    int64_t offset = 0;
    while (clock_type::now() < end) {
      const auto t0 = clock_type::now();
      auto [status, body] = c.call(http::verb::get,
                                   "/v1/topics/" + o.topic + "/partitions/" + std::to_string(p) +
                                       "/records?encoding=base64&max_bytes=1048576&offset=" + std::to_string(offset),
                                   "");
      out.latency_us.record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - t0).count()));
      if (status != 200) {
        ++out.errors;
        break;
      }
      // The load tool only counts: records by their "offset" fields, the two offsets at the end
      // (a client that parses the whole document costs more CPU than the broker's answer does).
      uint64_t count = 0;
      for (size_t at = body.find("{\"offset\":"); at != std::string::npos; at = body.find("{\"offset\":", at + 10)) ++count;
      auto number_after = [&](std::string_view field) -> int64_t {
        const auto at = body.rfind(field);
        return at == std::string::npos ? -1 : std::stoll(body.substr(at + field.size()));
      };
      const int64_t latest = number_after("\"latest_offset\":");
      const int64_t next = number_after("\"next_offset\":");
      out.records += count;
      out.value_bytes += count * static_cast<uint64_t>(o.size);
      if (next >= latest || count == 0) break;
      offset = next;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "brokerd-http-load: {}\n", e.what());
    return 2;
  }
  std::vector<Result> results(static_cast<size_t>(o.connections));
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  const auto start = clock_type::now();
  const auto end = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o.duration));
  for (int i = 0; i < o.connections; ++i) {
    threads.emplace_back([&, i] {
      try {
        if (o.mode == "produce") produce(o, i, end, results[static_cast<size_t>(i)]);
        else read(o, i, end, results[static_cast<size_t>(i)]);
      } catch (const std::exception& e) {
        fmt::print(stderr, "connection {}: {}\n", i, e.what());
        failed.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  const double took = std::chrono::duration<double>(clock_type::now() - start).count();
  Result total;
  for (const auto& r : results) {
    total.latency_us.merge(r.latency_us);
    total.records += r.records;
    total.value_bytes += r.value_bytes;
    total.errors += r.errors;
  }
  fmt::print("{} {:.0f} records/s {:.1f} MB/s  requests {} errors {}  latency p50 {:.2f} p99 {:.2f} p999 {:.2f} ms  "
             "({:.1f} s)\n",
             o.mode, double(total.records) / took, double(total.value_bytes) / took / 1e6, total.latency_us.count(),
             total.errors, double(total.latency_us.percentile(50)) / 1000, double(total.latency_us.percentile(99)) / 1000,
             double(total.latency_us.percentile(99.9)) / 1000, took);
  return failed.load() > 0 ? 1 : 0;
}
