#include "mlts_report.h"

#include <cctype>

#include <fmt/format.h>

#include "html_report.h"

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

// The CSS class of an outcome (html_report's page colours them): "SUCCESS" → "success", ...
std::string outcomeClass(const std::string& outcome) {
  std::string cls;
  for (char c : outcome) cls += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return cls;
}

std::string ms(const nlohmann::json& value) { return value.is_number() ? fmt::format("{:.2f}", value.get<double>()) : ""; }

html::Table latencyTable(const nlohmann::json& report) {
  html::Table table;
  table.id = "latency";
  table.header = {"model", "device", "outcome", "operations on the device", "compile (ms)", "median (ms)", "p90 (ms)",
                  "samples", "plan"};
  table.numeric = {4, 5, 6, 7};
  for (const auto& b : report.value("benchmarks", nlohmann::json::array())) {
    const std::string outcome = text(b.value("outcome", nlohmann::json()));
    std::string ops = fmt::format("{} of {}", text(b.value("supportedOperations", nlohmann::json())),
                                  text(b.value("operations", nlohmann::json())));
    const bool ran = b.value("ran", false);
    if (!ran && outcome == "SUCCESS") ops += " (not run: the device does not run the whole model)";
    std::vector<std::string> row = {text(b["model"]), text(b["device"]),
                                    outcome + (b.value("detail", "").empty() ? "" : ": " + b.value("detail", "")), ops};
    if (ran) {
      const auto& latency = b["latencyMs"];
      row.insert(row.end(), {ms(b["compileMs"]), ms(latency["median"]), ms(latency["p90"]),
                             std::to_string(latency["samples"].size()), text(b.value("plan", nlohmann::json()))});
    } else {
      row.resize(9);
    }
    table.rows.push_back(std::move(row));
    table.classes.push_back({"", "", outcomeClass(outcome)});
  }
  return table;
}

html::Table accuracyTable(const nlohmann::json& report) {
  html::Table table;
  table.id = "accuracy";
  table.header = {"model", "device", "top-1 agreement", "bit-exact outputs", "max |difference| (quantized units)",
                  "deterministic", "result"};
  table.numeric = {2, 3, 4};
  for (const auto& b : report.value("benchmarks", nlohmann::json::array())) {
    if (!b.contains("accuracy")) continue;
    const auto& a = b["accuracy"];
    const bool pass = a.value("pass", false);
    table.rows.push_back({text(b["model"]), text(b["device"]),
                          fmt::format("{:.0f}% of {} inputs", 100 * a.value("top1Agreement", 0.0), text(a["inputs"])),
                          fmt::format("{:.2f}% ({} of {})", 100 * a.value("bitExactFraction", 0.0),
                                      text(a["identicalElements"]), text(a["elements"])),
                          text(a["maxAbsDifference"]), b.value("deterministic", false) ? "yes" : "no",
                          pass ? "pass" : "FAIL"});
    table.classes.push_back({"", "", "", "", "", "", pass ? "success" : "failure"});
  }
  return table;
}

html::Table suiteTable(const nlohmann::json& report) {
  html::Table table;
  table.id = "suite";
  table.header = {"case", "what it does", "class", "time (ms)", "detail"};
  table.numeric = {3};
  for (const auto& c : report["suite"].value("cases", nlohmann::json::array())) {
    const std::string outcome = text(c["outcome"]);
    table.rows.push_back({text(c["name"]), text(c["description"]), outcome, ms(c["milliseconds"]), text(c["detail"])});
    table.classes.push_back({"", "", outcomeClass(outcome)});
  }
  return table;
}

}  // namespace

std::string htmlReport(const nlohmann::json& report) {
  html::Page page("sable mlts");
  page.addVerdict(report.value("passed", false));
  page.addFacts({{"build", text(report["version"])},
                 {"models", text(report["modelsDir"])},
                 {"inputs", joined(report["inputs"])},
                 {"iterations per model and device", text(report["iterations"]) + " (the first a warm-up)"}});
  page.addHeading("Latency");
  page.addParagraph("Wall clock per execution (the request built once), and the compilation (prepareModel) separately.");
  page.addHtml(html::table(latencyTable(report)));
  page.addHeading("Accuracy against " + text(report["referenceDevice"]));
  page.addParagraph("Outputs on every input compared with the CPU reference device's; tolerance " +
                    text(report["tolerance"]) + " quantized units.");
  page.addHtml(html::table(accuracyTable(report)));
  if (report.contains("suite")) {
    page.addHeading("Crash/hang suite");
    page.addParagraph("On " + text(report["suite"]["device"]) + " with " + text(report["suite"]["model"]) +
                      "; each case in a process of its own.");
    page.addHtml(html::table(suiteTable(report)));
  }
  return page.render();
}

}  // namespace sable::tools::mlts
