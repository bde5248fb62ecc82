// The HTML building blocks of the tools' reports (tools/sable/html_report.h): escaping, tables,
// SVG charts, the page.
#include "html_report.h"

#include <regex>
#include <string>

#include <gtest/gtest.h>

namespace sable::tools::html {
namespace {

size_t count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(HtmlReport, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(escape(R"(<a href="x">Tom & 'Jerry'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
  EXPECT_EQ(escape("plain text, 100%"), "plain text, 100%");
  EXPECT_EQ(escape(""), "");
}

TEST(HtmlReport, TableEscapesCellsAndRightAlignsNumericColumns) {
  Table t;
  t.id = "layers";
  t.header = {"op", "type"};
  t.rows = {{"1", "<CONV>"}, {"2", "a&b"}};
  t.numeric = {0};
  t.footer = {"total", ""};
  const std::string out = table(t);
  EXPECT_NE(out.find("<table id=\"layers\">"), std::string::npos);
  EXPECT_EQ(count(out, "<tbody>[\\s\\S]*</tbody>"), 1u);
  EXPECT_EQ(count(out, "<tr>"), 4u) << "header, two rows, footer";
  EXPECT_NE(out.find("<td>&lt;CONV&gt;</td>"), std::string::npos);
  EXPECT_NE(out.find("<td>a&amp;b</td>"), std::string::npos);
  EXPECT_NE(out.find("<td class=\"num\">2</td>"), std::string::npos);
  EXPECT_NE(out.find("<tfoot><tr><td class=\"num\">total</td><td></td></tr>"), std::string::npos);
  EXPECT_EQ(out.find("<CONV>"), std::string::npos);
}

TEST(HtmlReport, CellClassesJoinTheNumericClassAndMissingOnesAreNone) {
  Table t;
  t.header = {"case", "ms", "class"};
  t.rows = {{"a", "1.0", "CRASH"}, {"b", "2.0", "SUCCESS"}, {"c", "3.0", "HANG"}};
  t.numeric = {1};
  t.classes = {{"", "", "crash"}, {"", "slow", "success"}};  // row c has none
  const std::string out = table(t);
  EXPECT_NE(out.find("<td class=\"crash\">CRASH</td>"), std::string::npos) << out;
  EXPECT_NE(out.find("<td class=\"num slow\">2.0</td>"), std::string::npos) << out;
  EXPECT_NE(out.find("<td class=\"success\">SUCCESS</td>"), std::string::npos) << out;
  EXPECT_NE(out.find("<td>HANG</td>"), std::string::npos) << out;
  EXPECT_EQ(count(out, "<td class=\"num"), 3u) << "one numeric cell per row";
}

TEST(HtmlReport, BarChartHasOneBarPerLabelAndOneSegmentPerSeries) {
  BarChart chart;
  chart.id = "units";
  chart.title = "cycles <by> unit";
  chart.labels = {"0", "1", "2"};
  chart.series = {{"load", "#111111"}, {"array", "#222222"}};
  chart.values = {{10, 20}, {5, 0}, {-3, 7}};
  chart.markers = {25, 5, 10};
  chart.markerName = "elapsed";
  const std::string svg = barChart(chart);
  EXPECT_EQ(svg.rfind("<svg id=\"units\" class=\"chart\"", 0), 0u);
  EXPECT_EQ(count(svg, "<g class=\"bar\" data-index=\"\\d\">"), 3u);
  EXPECT_EQ(count(svg, "<rect class=\"segment\""), 6u);
  EXPECT_EQ(count(svg, "<line class=\"marker\""), 3u);
  EXPECT_NE(svg.find("cycles &lt;by&gt; unit"), std::string::npos);
  EXPECT_EQ(svg.find("<by>"), std::string::npos);
  // The y axis reaches the tallest stack (30) in nice steps; a negative value draws nothing.
  EXPECT_NE(svg.find(">30</text>"), std::string::npos);
  EXPECT_NE(svg.find("load: 0</title>"), std::string::npos);
  EXPECT_NE(svg.find("height=\"0.00\" fill=\"#111111\""), std::string::npos);
}

TEST(HtmlReport, BarHeightsAreProportionalToValues) {
  BarChart chart;
  chart.id = "u";
  chart.labels = {"a", "b"};
  chart.series = {{"utilization", "#000000"}};
  chart.values = {{0.5}, {1.0}};
  chart.yMax = 1.0;
  chart.percent = true;
  const std::string svg = barChart(chart);
  const std::regex height("class=\"segment\"[^>]* height=\"([0-9.]+)\"");
  std::vector<double> heights;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), height); it != std::sregex_iterator(); ++it) {
    heights.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(heights.size(), 2u);
  EXPECT_NEAR(heights[1], 2 * heights[0], 0.02);
  EXPECT_NE(svg.find(">100%</text>"), std::string::npos);
  EXPECT_NE(svg.find("utilization: 50.0%"), std::string::npos);
}

TEST(HtmlReport, LogLogChartDrawsEveryPointAndLine) {
  LogLogChart chart;
  chart.id = "roofline";
  chart.points = {{2, 100, "a", "#ff0000"}, {50, 256, "b", "#ff0000"}, {0, 0, "no MACs", "#999999"}};
  chart.lines = {{"roof", "#000000", {{0.1, 1.6}, {16, 256}, {1000, 256}}}};
  const std::string svg = logLogChart(chart);
  EXPECT_EQ(count(svg, "<circle class=\"point\""), 3u);
  EXPECT_EQ(count(svg, "fill-opacity=\"0\""), 1u) << "the point off the logarithmic scale is hollow";
  EXPECT_EQ(count(svg, "<path class=\"roof\""), 1u);
  // Decades from 0.1 to 1000 on x.
  EXPECT_NE(svg.find(">0.1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1000</text>"), std::string::npos);
}

TEST(HtmlReport, PageIsSelfContained) {
  Page page("Report <1> & more");
  page.addFacts({{"Model", "builtin:x<y>"}});
  page.addParagraph("a 'note'");
  page.addHtml("<p id=\"raw\">kept</p>");
  const std::string out = page.render();
  EXPECT_EQ(out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(out.find("<title>Report &lt;1&gt; &amp; more</title>"), std::string::npos);
  EXPECT_NE(out.find("<dd>builtin:x&lt;y&gt;</dd>"), std::string::npos);
  EXPECT_NE(out.find("a &#39;note&#39;"), std::string::npos);
  EXPECT_NE(out.find("<p id=\"raw\">kept</p>"), std::string::npos);
  EXPECT_NE(out.find("<style>"), std::string::npos);
  for (const char* external : {"<script", "<link", "src=", "href=", "url(", "@import"}) {
    EXPECT_EQ(out.find(external), std::string::npos) << external;
  }
}

}  // namespace
}  // namespace sable::tools::html
