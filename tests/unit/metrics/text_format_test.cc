#include "brokerd/metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace brokerd::metrics {
namespace {

TEST(TextFormat, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value("a\"b"), "a\\\"b");
  EXPECT_EQ(escape_label_value("back\\slash"), "back\\\\slash");
  EXPECT_EQ(escape_label_value("two\nlines"), "two\\nlines");
}

TEST(TextFormat, EscapesHelpButNotQuotes) {
  EXPECT_EQ(escape_help("say \"hi\"\\\n"), "say \"hi\"\\\\\\n");
}

TEST(TextFormat, FormatsValues) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(-7), "-7");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(1e300), "1e+300");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(TextFormat, WritesFamilyAndSamples) {
  TextWriter w;
  w.family("x_total", "Things.\nCounted.", "counter");
  w.sample("x_total", {}, 3);
  w.sample("x_total", {{"topic", "a\"b"}, {"partition", "0"}}, 5);
  EXPECT_EQ(w.text(),
            "# HELP x_total Things.\\nCounted.\n"
            "# TYPE x_total counter\n"
            "x_total 3\n"
            "x_total{topic=\"a\\\"b\",partition=\"0\"} 5\n");
}

TEST(TextFormat, HistogramBucketsAreCumulativeWithSumAndCount) {
  const double bounds[] = {0.1, 1};
  HistogramSnapshot h{bounds, {2, 3, 1}, 4.5};
  TextWriter w;
  const Label labels[] = {{"api", "Produce"}};
  w.histogram("lat_seconds", labels, h);
  EXPECT_EQ(w.text(),
            "lat_seconds_bucket{api=\"Produce\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{api=\"Produce\",le=\"1\"} 5\n"
            "lat_seconds_bucket{api=\"Produce\",le=\"+Inf\"} 6\n"
            "lat_seconds_sum{api=\"Produce\"} 4.5\n"
            "lat_seconds_count{api=\"Produce\"} 6\n");
}

}  // namespace
}  // namespace brokerd::metrics
