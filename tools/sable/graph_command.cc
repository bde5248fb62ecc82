// `sable graph MODEL [--dot FILE] [--device auto|NAME]`: the model as a Graphviz graph — model
// inputs and outputs, operations with the device each runs on and the HAL version it needs, and
// the tensors between them with their types and shapes (docs/runtime.md).
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commands.h"
#include "sable/hal/validation.h"
#include "sable/runtime/device.h"
#include "sable/runtime/partition.h"
#include "tool_support.h"

namespace sable::tools {
namespace {

struct GraphArgs {
  std::string model;
  std::string dot;  // empty: standard output
  std::string device = "auto";
  std::string backend = "func";
};

// DOT's double-quoted strings: backslash and quote escaped, newlines as \n.
std::string dotString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string shapeText(const hal::Operand& operand) {
  if (operand.dimensions.empty()) return "scalar";
  return fmt::format("[{}]", fmt::join(operand.dimensions, ","));
}

std::string tensorText(const hal::Operand& operand) {
  std::string text = fmt::format("{} {}", hal::toString(operand.type), shapeText(operand));
  if (operand.scale != 0.0f) text += fmt::format(" s={:.6g} z={}", operand.scale, operand.zeroPoint);
  return text;
}

// A fill colour per device, stable for a run.
std::string colourOf(const std::string& device) {
  if (device == "cpu-reference") return "#dfe7f2";
  if (device.starts_with("sable-npu")) return "#f6d8b8";
  if (device.starts_with("unsupported")) return "#f4b6b6";
  return "#e4e4e4";
}

int graph(const GraphArgs& args) {
  if (auto selected = selectNpuBackend(args.backend); !selected.ok()) {
    std::cerr << "sable graph: " << selected.error().message << "\n";
    return 2;
  }
  auto model = loadModel(args.model);
  if (!model.ok()) {
    std::cerr << "sable graph: " << model.error().message << "\n";
    return 2;
  }
  auto version = hal::validateModel(*model);
  if (!version.ok()) {
    std::cerr << "sable graph: the model is not valid: " << version.error().message << "\n";
    return 2;
  }
  const hal::Subgraph& main = model->main;

  // Where each operation runs: the partitioning's choice over every device, or one device's
  // support.
  std::vector<std::string> deviceOf(main.operations.size());
  std::vector<std::string> notes;
  if (args.device == "auto") {
    const auto devices = runtime::availableDevices();
    auto placement = runtime::placeOperations(*model, devices);
    if (!placement.ok()) {
      std::cerr << "sable graph: " << placement.error().message << "\n";
      return 1;
    }
    for (size_t k = 0; k < main.operations.size(); ++k) deviceOf[k] = devices[placement->deviceOfOperation[k]]->name();
    for (const std::string& unused : placement->unusedDevices) notes.push_back("not used: " + unused);
  } else {
    auto device = runtime::findDevice(args.device);
    if (!device.ok()) {
      std::cerr << "sable graph: " << device.error().message << "\n";
      return 2;
    }
    auto supported = (*device)->getSupportedOperations(*model);
    if (!supported.ok()) {
      std::cerr << "sable graph: " << args.device << ": " << supported.error().message << "\n";
      return 1;
    }
    for (size_t k = 0; k < main.operations.size(); ++k) {
      deviceOf[k] = (*supported)[k] ? args.device : "unsupported on " + args.device;
    }
  }

  // Which operation writes each operand.
  std::map<uint32_t, size_t> producer;
  for (size_t k = 0; k < main.operations.size(); ++k) {
    for (uint32_t out : main.operations[k].outputs) producer[out] = k;
  }
  std::string dot = "digraph model {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  dot += fmt::format("  label={};\n  labelloc=t;\n",
                     dotString(fmt::format("{} — {} operations, needs HAL {}{}", args.model, main.operations.size(),
                                        hal::toString(*version), notes.empty() ? "" : "\n" + fmt::format("{}", fmt::join(notes, "\n")))));
  for (size_t i = 0; i < main.inputIndexes.size(); ++i) {
    const uint32_t index = main.inputIndexes[i];
    dot += fmt::format("  t{} [shape=ellipse, style=filled, fillcolor=\"#d7efd2\", label={}];\n", index,
                       dotString(fmt::format("input {}\n{}", i, tensorText(main.operands[index]))));
  }
  std::set<uint32_t> outputs(main.outputIndexes.begin(), main.outputIndexes.end());
  for (size_t i = 0; i < main.outputIndexes.size(); ++i) {
    const uint32_t index = main.outputIndexes[i];
    dot += fmt::format("  o{} [shape=ellipse, style=filled, fillcolor=\"#d7efd2\", label={}];\n", index,
                       dotString(fmt::format("output {}\n{}", i, tensorText(main.operands[index]))));
  }
  for (size_t k = 0; k < main.operations.size(); ++k) {
    const hal::Operation& op = main.operations[k];
    auto needs = hal::validateOperation(*model, main, op);
    std::string constants;
    for (uint32_t in : op.inputs) {
      const hal::Operand& operand = main.operands[in];
      const bool constant = operand.lifetime == hal::OperandLifeTime::CONSTANT_COPY ||
                            operand.lifetime == hal::OperandLifeTime::CONSTANT_REFERENCE;
      if (constant && !operand.dimensions.empty()) constants += "\n" + tensorText(operand);
    }
    dot += fmt::format("  op{} [shape=box, style=\"rounded,filled\", fillcolor=\"{}\", label={}];\n", k,
                       colourOf(deviceOf[k]),
                       dotString(fmt::format("{}: {}\n{} · HAL {}{}", k, hal::toString(op.type), deviceOf[k],
                                          needs.ok() ? hal::toString(*needs) : "?", constants)));
  }
  // Edges: each non-constant input from its producer (or a model input node).
  for (size_t k = 0; k < main.operations.size(); ++k) {
    for (uint32_t in : main.operations[k].inputs) {
      const hal::Operand& operand = main.operands[in];
      std::string from;
      if (auto p = producer.find(in); p != producer.end()) {
        from = fmt::format("op{}", p->second);
      } else if (operand.lifetime == hal::OperandLifeTime::SUBGRAPH_INPUT) {
        from = fmt::format("t{}", in);
      } else {
        continue;  // constants are listed in the operation's box
      }
      dot += fmt::format("  {} -> op{} [label={}];\n", from, k, dotString(fmt::format("#{} {}", in, shapeText(operand))));
    }
    for (uint32_t out : main.operations[k].outputs) {
      if (outputs.contains(out)) {
        dot += fmt::format("  op{} -> o{} [label={}];\n", k, out,
                           dotString(fmt::format("#{} {}", out, shapeText(main.operands[out]))));
      }
    }
  }
  dot += "}\n";
  if (args.dot.empty()) {
    std::cout << dot;
    return 0;
  }
  std::ofstream file(args.dot, std::ios::binary | std::ios::trunc);
  file << dot;
  file.close();
  if (!file) {
    std::cerr << "sable graph: cannot write " << args.dot << "\n";
    return 1;
  }
  std::cout << fmt::format("sable graph: {} operations written to {} (render: dot -Tsvg {} -o model.svg)\n",
                           main.operations.size(), args.dot, args.dot);
  return 0;
}

}  // namespace

CommandRunner addGraphCommand(CLI::App& app) {
  auto args = std::make_shared<GraphArgs>();
  CLI::App* cmd = app.add_subcommand("graph", "Write a model as a Graphviz graph: operations, the device each runs "
                                              "on and the HAL version it needs, tensors with types and shapes");
  cmd->add_option("model", args->model, kModelHelp)->required();
  cmd->add_option("--dot", args->dot, "Write the graph to FILE (default: standard output)");
  cmd->add_option("--device", args->device,
                  "auto: the device the partitioning picks for each operation; or a device name: which "
                  "operations it supports");
  cmd->add_option("--backend", args->backend, kBackendHelp);
  return [args] { return graph(*args); };
}

}  // namespace sable::tools
