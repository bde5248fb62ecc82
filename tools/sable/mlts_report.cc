#include "mlts_report.h"

#include <fmt/format.h>

namespace sable::tools::mlts {
namespace {

// A JSON value as table text: strings without quotes, numbers as JSON writes them.
std::string text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// A JSON array of strings as "a, b, c".
std::string joined(const nlohmann::json& values) {
  std::string out;
  for (const auto& value : values) out += (out.empty() ? "" : ", ") + text(value);
  return out;
}

std::string cell(std::string_view content, std::string_view cls = "") {
  return cls.empty() ? fmt::format("<td>{}</td>", htmlEscape(content))
                     : fmt::format("<td class=\"{}\">{}</td>", htmlEscape(cls), htmlEscape(content));
}

std::string headerRow(std::initializer_list<std::string_view> names) {
  std::string row = "<tr>";
  for (std::string_view name : names) row += fmt::format("<th>{}</th>", htmlEscape(name));
  return row + "</tr>\n";
}

// The CSS class of an outcome: "SUCCESS" → "success", ...
std::string outcomeClass(const std::string& outcome) {
  std::string cls;
  for (char c : outcome) cls += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return cls;
}

std::string ms(const nlohmann::json& value) { return value.is_number() ? fmt::format("{:.2f}", value.get<double>()) : ""; }

std::string latencyTable(const nlohmann::json& report) {
  std::string html = "<table>\n" + headerRow({"model", "device", "outcome", "operations on the device", "compile (ms)",
                                              "median (ms)", "p90 (ms)", "samples", "plan"});
  for (const auto& b : report.value("benchmarks", nlohmann::json::array())) {
    const std::string outcome = text(b.value("outcome", nlohmann::json()));
    std::string ops = fmt::format("{} of {}", text(b.value("supportedOperations", nlohmann::json())),
                                  text(b.value("operations", nlohmann::json())));
    const bool ran = b.value("ran", false);
    if (!ran && outcome == "SUCCESS") ops += " (not run: the device does not run the whole model)";
    html += "<tr>" + cell(text(b["model"])) + cell(text(b["device"])) +
            cell(outcome + (b.value("detail", "").empty() ? "" : ": " + b.value("detail", "")), outcomeClass(outcome)) +
            cell(ops);
    if (ran) {
      const auto& latency = b["latencyMs"];
      html += cell(ms(b["compileMs"]), "num") + cell(ms(latency["median"]), "num") + cell(ms(latency["p90"]), "num") +
              cell(std::to_string(latency["samples"].size()), "num") + cell(text(b.value("plan", nlohmann::json())));
    } else {
      html += "<td></td><td></td><td></td><td></td><td></td>";
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string accuracyTable(const nlohmann::json& report) {
  std::string html = "<table>\n" + headerRow({"model", "device", "top-1 agreement", "bit-exact outputs",
                                              "max |difference| (quantized units)", "deterministic", "result"});
  for (const auto& b : report.value("benchmarks", nlohmann::json::array())) {
    if (!b.contains("accuracy")) continue;
    const auto& a = b["accuracy"];
    const bool pass = a.value("pass", false);
    html += "<tr>" + cell(text(b["model"])) + cell(text(b["device"])) +
            cell(fmt::format("{:.0f}% of {} inputs", 100 * a.value("top1Agreement", 0.0), text(a["inputs"])), "num") +
            cell(fmt::format("{:.2f}% ({} of {})", 100 * a.value("bitExactFraction", 0.0), text(a["identicalElements"]),
                             text(a["elements"])),
                 "num") +
            cell(text(a["maxAbsDifference"]), "num") + cell(b.value("deterministic", false) ? "yes" : "no") +
            cell(pass ? "pass" : "FAIL", pass ? "success" : "failure") + "</tr>\n";
  }
  return html + "</table>\n";
}

std::string suiteTable(const nlohmann::json& report) {
  std::string html = "<table>\n" + headerRow({"case", "what it does", "class", "time (ms)", "detail"});
  for (const auto& c : report["suite"].value("cases", nlohmann::json::array())) {
    const std::string outcome = text(c["outcome"]);
    html += "<tr>" + cell(text(c["name"])) + cell(text(c["description"])) + cell(outcome, outcomeClass(outcome)) +
            cell(ms(c["milliseconds"]), "num") + cell(text(c["detail"])) + "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string htmlEscape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
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

std::string htmlReport(const nlohmann::json& report) {
  const bool passed = report.value("passed", false);
  std::string html = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>sable mlts</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.success { background: #c8f0c8; }
td.failure { background: #f6d08a; }
td.hang { background: #c8c8f6; }
td.crash { background: #f2a0a0; font-weight: bold; }
.verdict { font-size: 1.3em; font-weight: bold; }
</style></head><body>
)";
  html += "<h1>sable mlts</h1>\n";
  html += fmt::format("<p class=\"verdict\">{}</p>\n", passed ? "PASSED" : "FAILED");
  html += fmt::format("<p>build {} &middot; models from {} &middot; inputs: {} &middot; {} iterations per model and "
                      "device (the first a warm-up)</p>\n",
                      htmlEscape(text(report["version"])), htmlEscape(text(report["modelsDir"])),
                      htmlEscape(joined(report["inputs"])),
                      htmlEscape(text(report["iterations"])));
  html += "<h2>Latency</h2>\n<p>Wall clock per execution (the request built once), and the compilation "
          "(prepareModel) separately.</p>\n";
  html += latencyTable(report);
  html += fmt::format("<h2>Accuracy against {}</h2>\n<p>Outputs on every input compared with the CPU reference "
                      "device's; tolerance {} quantized units.</p>\n",
                      htmlEscape(text(report["referenceDevice"])), htmlEscape(text(report["tolerance"])));
  html += accuracyTable(report);
  if (report.contains("suite")) {
    html += fmt::format("<h2>Crash/hang suite</h2>\n<p>On {} with {}; each case in a process of its own.</p>\n",
                        htmlEscape(text(report["suite"]["device"])), htmlEscape(text(report["suite"]["model"])));
    html += suiteTable(report);
  }
  return html + "</body></html>\n";
}

}  // namespace sable::tools::mlts
