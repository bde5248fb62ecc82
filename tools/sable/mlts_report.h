// `sable mlts --html FILE`: the run's JSON report (as `--json` writes it) as one self-contained
// HTML page (html_report.h) — latency, accuracy and suite tables, the suite's classes in colour. No
// scripts, no external resources: the page opens from a file anywhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sable::tools::mlts {

// The page for a report of `sable mlts` (keys as mlts_command.cc writes them).
std::string htmlReport(const nlohmann::json& report);

}  // namespace sable::tools::mlts
