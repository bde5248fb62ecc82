#include "html_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace sable::tools::html {

namespace {

// The plot area of every chart, in SVG user units (the SVG scales to the page's width).
// The title's line, then up to two lines of legend, then the plot.
constexpr double kWidth = 960, kHeight = 370;
constexpr double kLeft = 80, kRight = 24, kTop = 64, kBottom = 64;
constexpr double kLegendY = 38;
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1.2em; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #e4e4e4; }
th { background: #f3f3f3; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tfoot td { font-weight: 600; border-top: 2px solid #aaa; }
svg.chart { width: 100%; height: auto; max-width: 960px; display: block; margin: 0.5em 0 1em; }
svg.chart text { font-size: 12px; fill: #333; }
svg.chart .axis { stroke: #888; stroke-width: 1; }
svg.chart .grid { stroke: #e8e8e8; stroke-width: 1; }
svg.chart .title { font-size: 14px; font-weight: 600; }
svg.chart .marker { stroke: #222; stroke-width: 2; }
svg.chart .point { stroke: #222; stroke-width: 0.8; }
p.note { color: #555; font-size: 0.9em; }
p.verdict { font-size: 1.3em; font-weight: bold; }
td.success { background: #c8f0c8; }
td.failure { background: #f6d08a; }
td.hang { background: #c8c8f6; }
td.crash { background: #f2a0a0; font-weight: bold; }
td.not_applicable { background: #e4e4e4; }
)";

std::string number(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e6 || a < 1e-3) return fmt::format("{:.3g}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

// A "nice" step (1, 2 or 5 times a power of ten) giving about `ticks` ticks up to `max`.
double niceStep(double max, int ticks) {
  const double raw = max / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string svgOpen(std::string_view id, std::string_view title) {
  return fmt::format(
      "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\">\n<text class=\"title\" x=\"{}\" y=\"20\">{}</text>\n",
      escape(id), kWidth, kHeight, escape(title), kLeft, escape(title));
}

// The legend under the title, from the plot's left edge, wrapping at its right edge.
std::string legend(const std::vector<Series>& entries) {
  std::string out = "<g class=\"legend\">";
  double x = kLeft, y = kLegendY;
  for (const Series& s : entries) {
    const double width = 24 + 7.0 * static_cast<double>(s.name.size());
    if (x > kLeft && x + width > kWidth - kRight) x = kLeft, y += 16;
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/>", x, y - 9,
                       escape(s.color));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", x + 14, y, escape(s.name));
    x += width;
  }
  return out + "</g>\n";
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string table(const Table& t) {
  auto isNumeric = [&](size_t column) {
    return std::find(t.numeric.begin(), t.numeric.end(), column) != t.numeric.end();
  };
  static const std::vector<std::string> kNoClasses;
  auto row = [&](const std::vector<std::string>& cells, std::string_view tag, const std::vector<std::string>& classes) {
    std::string out = "<tr>";
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cls = isNumeric(c) ? "num" : "";
      if (c < classes.size() && !classes[c].empty()) cls += (cls.empty() ? "" : " ") + classes[c];
      out += fmt::format("<{0}{1}>{2}</{0}>", tag, cls.empty() ? "" : " class=\"" + escape(cls) + "\"",
                         escape(cells[c]));
    }
    return out + "</tr>\n";
  };
  std::string out =
      fmt::format("<table id=\"{}\">\n<thead>{}</thead>\n<tbody>\n", escape(t.id), row(t.header, "th", kNoClasses));
  for (size_t r = 0; r < t.rows.size(); ++r) out += row(t.rows[r], "td", r < t.classes.size() ? t.classes[r] : kNoClasses);
  out += "</tbody>\n";
  if (!t.footer.empty()) out += "<tfoot>" + row(t.footer, "td", kNoClasses) + "</tfoot>\n";
  return out + "</table>\n";
}

std::string barChart(const BarChart& chart) {
  const size_t bars = chart.labels.size();
  std::vector<double> stacks(bars, 0.0);
  double top = chart.yMax;
  for (size_t i = 0; i < bars; ++i) {
    for (size_t s = 0; s < chart.series.size() && i < chart.values.size() && s < chart.values[i].size(); ++s) {
      stacks[i] += std::max(0.0, chart.values[i][s]);
    }
    if (chart.yMax == 0) {
      top = std::max(top, stacks[i]);
      if (i < chart.markers.size()) top = std::max(top, chart.markers[i]);
    }
  }
  if (!(top > 0)) top = 1;
  const double step = niceStep(top, 5);
  if (chart.yMax == 0) top = std::ceil(top / step) * step;
  auto yOf = [&](double v) { return kTop + kPlotHeight * (1.0 - std::min(v, top) / top); };

  std::string out = svgOpen(chart.id, chart.title);
  // Grid and y axis.
  for (double v = 0; v <= top * (1 + 1e-9); v += step) {
    const double y = yOf(v);
    out += fmt::format("<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", kLeft,
                       kLeft + kPlotWidth, y, y);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 4,
                       chart.percent ? fmt::format("{:.0f}%", 100 * v) : number(v));
  }
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", kLeft, kTop, kTop + kPlotHeight);
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n", kLeft, kLeft + kPlotWidth,
                     kTop + kPlotHeight);
  out += fmt::format("<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\">{}</text>\n",
                     kTop + kPlotHeight / 2, kTop + kPlotHeight / 2, escape(chart.yLabel));

  const double slot = bars == 0 ? kPlotWidth : kPlotWidth / static_cast<double>(bars);
  const double width = std::max(1.0, slot * 0.75);
  const size_t labelEvery = std::max<size_t>(1, static_cast<size_t>(std::ceil(28.0 / slot)));
  for (size_t i = 0; i < bars; ++i) {
    const double x = kLeft + slot * static_cast<double>(i) + (slot - width) / 2;
    const std::string prefix = i < chart.tooltips.size() ? chart.tooltips[i] : chart.labels[i];
    std::string parts;
    double base = 0;
    std::string summary = prefix;
    for (size_t s = 0; s < chart.series.size(); ++s) {
      const double v = i < chart.values.size() && s < chart.values[i].size() ? std::max(0.0, chart.values[i][s]) : 0.0;
      const std::string shown = chart.percent ? fmt::format("{:.1f}%", 100 * v) : number(v);
      summary += fmt::format("\n{}: {}", chart.series[s].name, shown);
      const double y0 = yOf(base), y1 = yOf(base + v);
      parts += fmt::format("<rect class=\"segment\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
                           "fill=\"{}\"><title>{}: {}</title></rect>",
                           x, y1, width, std::max(0.0, y0 - y1), escape(chart.series[s].color),
                           escape(prefix + " " + chart.series[s].name), escape(shown));
      base += v;
    }
    if (i < chart.markers.size()) {
      const double y = yOf(chart.markers[i]);
      summary += fmt::format("\n{}: {}", chart.markerName, number(chart.markers[i]));
      parts += fmt::format("<line class=\"marker\" x1=\"{:.2f}\" x2=\"{:.2f}\" y1=\"{:.2f}\" y2=\"{:.2f}\"/>", x - 1,
                           x + width + 1, y, y);
    }
    out += fmt::format("<g class=\"bar\" data-index=\"{}\"><title>{}</title>{}</g>\n", i, escape(summary), parts);
    if (i % labelEvery == 0) {
      const double cx = x + width / 2, cy = kTop + kPlotHeight + 14;
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" transform=\"rotate(-45 {:.1f} {:.1f})\">{}</text>\n",
                         cx, cy, cx, cy, escape(chart.labels[i]));
    }
  }
  std::vector<Series> entries = chart.series.size() > 1 ? chart.series : std::vector<Series>{};
  if (!chart.markers.empty()) entries.push_back({chart.markerName, "#222"});
  if (!entries.empty()) out += legend(entries);
  return out + "</svg>\n";
}

std::string logLogChart(const LogLogChart& chart) {
  // The axes' ranges: whole decades around every positive coordinate.
  double xMin = INFINITY, xMax = 0, yMin = INFINITY, yMax = 0;
  auto include = [&](double x, double y) {
    if (x > 0) xMin = std::min(xMin, x), xMax = std::max(xMax, x);
    if (y > 0) yMin = std::min(yMin, y), yMax = std::max(yMax, y);
  };
  for (const Point& p : chart.points) include(p.x, p.y);
  for (const Line& l : chart.lines) {
    for (const auto& [x, y] : l.points) include(x, y);
  }
  if (xMax == 0) xMin = 1, xMax = 10;
  if (yMax == 0) yMin = 1, yMax = 10;
  const double x0 = std::floor(std::log10(xMin)), x1 = std::max(x0 + 1, std::ceil(std::log10(xMax)));
  const double y0 = std::floor(std::log10(yMin)), y1 = std::max(y0 + 1, std::ceil(std::log10(yMax)));
  auto xOf = [&](double x) {
    return x > 0 ? kLeft + kPlotWidth * (std::clamp(std::log10(x), x0, x1) - x0) / (x1 - x0) : kLeft;
  };
  auto yOf = [&](double y) {
    return y > 0 ? kTop + kPlotHeight * (1 - (std::clamp(std::log10(y), y0, y1) - y0) / (y1 - y0)) : kTop + kPlotHeight;
  };

  std::string out = svgOpen(chart.id, chart.title);
  for (double d = x0; d <= x1; ++d) {
    const double x = xOf(std::pow(10.0, d));
    out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>", x, kTop,
                       kTop + kPlotHeight);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, kTop + kPlotHeight + 16,
                       number(std::pow(10.0, d)));
  }
  for (double d = y0; d <= y1; ++d) {
    const double y = yOf(std::pow(10.0, d));
    out += fmt::format("<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", kLeft,
                       kLeft + kPlotWidth, y, y);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 4,
                       number(std::pow(10.0, d)));
  }
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", kLeft, kTop, kTop + kPlotHeight);
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>\n", kLeft, kLeft + kPlotWidth,
                     kTop + kPlotHeight);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + kPlotWidth / 2,
                     kHeight - 18, escape(chart.xLabel));
  out += fmt::format("<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\">{}</text>\n",
                     kTop + kPlotHeight / 2, kTop + kPlotHeight / 2, escape(chart.yLabel));

  std::vector<Series> entries;
  for (const Line& line : chart.lines) {
    std::string path;
    for (const auto& [x, y] : line.points) {
      path += fmt::format("{}{:.2f},{:.2f}", path.empty() ? "M" : " L", xOf(x), yOf(y));
    }
    out += fmt::format("<path class=\"roof\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>\n",
                       path, escape(line.color), escape(line.name));
    entries.push_back({line.name, line.color});
  }
  for (size_t i = 0; i < chart.points.size(); ++i) {
    const Point& p = chart.points[i];
    const bool onScale = p.x > 0 && p.y > 0;
    out += fmt::format("<circle class=\"point\" data-index=\"{}\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"5\" fill=\"{}\" "
                       "fill-opacity=\"{}\"><title>{}</title></circle>\n",
                       i, xOf(p.x), yOf(p.y), escape(p.color), onScale ? "0.8" : "0", escape(p.label));
  }
  entries.insert(entries.end(), chart.legend.begin(), chart.legend.end());
  if (!entries.empty()) out += legend(entries);
  return out + "</svg>\n";
}

Page::Page(std::string title) : title_(std::move(title)) {}

void Page::addHeading(std::string_view text) { body_ += fmt::format("<h2>{}</h2>\n", escape(text)); }

void Page::addParagraph(std::string_view text) { body_ += fmt::format("<p class=\"note\">{}</p>\n", escape(text)); }

void Page::addVerdict(bool passed) {
  body_ += fmt::format("<p class=\"verdict\">{}</p>\n", passed ? "PASSED" : "FAILED");
}

void Page::addFacts(const std::vector<std::pair<std::string, std::string>>& facts) {
  body_ += "<dl class=\"facts\">\n";
  for (const auto& [name, value] : facts) body_ += fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(name), escape(value));
  body_ += "</dl>\n";
}

void Page::addHtml(std::string html) { body_ += std::move(html); }

std::string Page::render() const {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{0}</title>\n"
      "<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n{2}</body>\n</html>\n",
      escape(title_), kStyle, body_);
}

}  // namespace sable::tools::html
