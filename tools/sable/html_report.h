// Building blocks of the self-contained HTML reports the `sable` commands write (`sable bench
// --html`): text escaping, a page with inline CSS, tables, and SVG charts drawn here in C++, so a
// page needs no network, no script and no file beside it to show its charts.
//
// Every string passed in is text and is escaped here; only Page::addHtml takes markup, which must
// come from these functions. Charts mark their parts for tests and stylesheets: a chart is
// <svg id="ID" class="chart">, each bar (or stack of segments) an element of class "bar" with
// data-index="i", each scatter point a <circle class="point" data-index="i">, and every part has a
// <title> child that browsers show on hover.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sable::tools::html {

// `text` with & < > " ' replaced by character references: safe in element content and in quoted
// attribute values.
std::string escape(std::string_view text);

// A table: header cells and rows of text cells (escaped). Columns listed in `numeric` are
// right-aligned.
struct Table {
  std::string id;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> numeric;
  std::vector<std::string> footer;  // a last row (totals), empty: none
  // Optional CSS classes per body cell, classes[row][column] (missing or empty: none), e.g. the
  // page's outcome colours "success", "failure", "hang", "crash".
  std::vector<std::vector<std::string>> classes;
};
std::string table(const Table& table);

struct Series {
  std::string name;
  std::string color;  // a CSS colour, e.g. "#4e79a7"
};

// A bar chart over categories: one series gives plain bars, several give stacked bars
// (values[i][s] is series s of bar i; negative values count as 0). An optional marker per bar
// draws a horizontal tick at that value (e.g. a layer's elapsed cycles over its units' stack).
struct BarChart {
  std::string id;
  std::string title;
  std::string yLabel;
  std::vector<std::string> labels;           // one per bar, shown under it
  std::vector<std::string> tooltips;         // one per bar (may be empty): the bar's <title> prefix
  std::vector<Series> series;                // at least one
  std::vector<std::vector<double>> values;   // values[bar][series]
  std::vector<double> markers;               // empty, or one per bar
  std::string markerName;
  double yMax = 0;                           // 0: the largest stack (or marker)
  bool percent = false;                      // y axis as a percentage of 1.0
};
std::string barChart(const BarChart& chart);

// A scatter plot on logarithmic axes with lines (e.g. a roofline: the roofs as lines, the layers
// as points). Points whose coordinate is not positive are drawn on the axis at the plot's edge,
// hollow, since a logarithmic axis has no place for them.
struct Point {
  double x = 0, y = 0;
  std::string label;     // the point's <title>
  std::string color;
};
struct Line {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y), positive
};
struct LogLogChart {
  std::string id;
  std::string title;
  std::string xLabel, yLabel;
  std::vector<Point> points;
  std::vector<Line> lines;
  std::vector<Series> legend;  // entries of the legend (colour and name), beside the lines' own
};
std::string logLogChart(const LogLogChart& chart);

// A whole page: <!DOCTYPE html>, a <head> with the title and the inline stylesheet, and a body of
// the parts added in order.
class Page {
 public:
  explicit Page(std::string title);
  void addHeading(std::string_view text);                   // <h2>
  void addParagraph(std::string_view text);                 // <p>
  void addVerdict(bool passed);                             // a large PASSED / FAILED line
  void addFacts(const std::vector<std::pair<std::string, std::string>>& facts);  // a definition list
  void addHtml(std::string html);                           // from table(), barChart(), ...
  std::string render() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace sable::tools::html
