// Writes the seed corpus of stream_validator_fuzz (tests/fuzz/stream_validator/): streams the
// validator accepts, cut from real compiled programs for s16 — tiny_cnn whole, windows of layers
// of conv_bench and MobileNet v1/v2 (each layer's commands and an END, kept when the validator
// accepts the window on its own), random graphs (tests/support/random_graph.h) and, when a corpus
// folder is given, small corpus models — each with the limits of its program (its region count,
// its constant region bounded by the constants' size; stream_validator_input.h). A seed is kept
// only when it is at most kMaxSeedBytes and brings an (opcode, wait, signal) combination or an
// opcode transition no earlier seed has, so the corpus stays a couple of dozen small files.
// Usage: make_stream_seeds DIR [CORPUS_DIR]   (scripts/fuzz.sh --regenerate-seeds)
#include <cctype>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "random_graph.h"
#include "sable/runtime/builtin_models.h"
#include "sable/runtime/corpus.h"
#include "sable/umd/compiler/compiler.h"
#include "stream_validator_input.h"

namespace {

constexpr size_t kMaxSeedBytes = 4096;
constexpr size_t kMaxSeeds = 32;
// Commands of a window (its END apart) that fit kMaxSeedBytes with the header and the trailer.
constexpr size_t kMaxWindowCommands =
    (kMaxSeedBytes - SABLE_STREAM_HEADER_BYTES - sable::fuzz::kStreamTrailerBytes) / SABLE_COMMAND_BYTES - 1;

namespace compiler = sable::umd::compiler;

class SeedWriter {
 public:
  explicit SeedWriter(std::filesystem::path dir) : dir_(std::move(dir)) { sable::fuzz::s16DeviceConfig(&config_); }

  // The program's stream whole when small enough, else windows of its layers.
  void addProgram(const std::string& name, const compiler::CompiledProgram& program) {
    const size_t commands = (program.stream.size() - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES;
    if (program.stream.size() + sable::fuzz::kStreamTrailerBytes <= kMaxSeedBytes) {
      addStream(name, program, 0, commands - 1);
      return;
    }
    for (size_t i = 0; i < program.layers.size(); ++i) {
      const compiler::LayerReport& layer = program.layers[i];
      // A layer too long for a seed contributes its first kMaxWindowCommands commands.
      addStream(name + "_layer" + std::to_string(i), program, layer.firstCommand,
                std::min<size_t>(layer.stats.commands, kMaxWindowCommands));
    }
  }

  size_t written() const { return written_; }
  bool full() const { return written_ >= kMaxSeeds; }

 private:
  // Commands [first, first + count) of the program and its END, under the program's limits.
  void addStream(const std::string& name, const compiler::CompiledProgram& program, size_t first, size_t count) {
    if (full() || count == 0) return;
    const size_t commands = (program.stream.size() - SABLE_STREAM_HEADER_BYTES) / SABLE_COMMAND_BYTES;
    if (first + count > commands - 1) return;  // the last command is END
    const size_t streamBytes = SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * (count + 1);
    if (streamBytes + sable::fuzz::kStreamTrailerBytes > kMaxSeedBytes) return;
    std::vector<uint8_t> input(program.stream.begin(), program.stream.begin() + SABLE_STREAM_HEADER_BYTES);
    const auto command = [&](size_t i) { return program.stream.data() + SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * i; };
    for (size_t i = first; i < first + count; ++i) input.insert(input.end(), command(i), command(i) + SABLE_COMMAND_BYTES);
    input.insert(input.end(), command(commands - 1), command(commands - 1) + SABLE_COMMAND_BYTES);
    uint32_t header[SABLE_COMMAND_WORDS];
    std::memcpy(header, input.data(), SABLE_STREAM_HEADER_BYTES);
    sable_stream_header_set_length(header, static_cast<uint32_t>(streamBytes));
    sable_stream_header_set_command_count(header, static_cast<uint32_t>(count + 1));
    std::memcpy(input.data(), header, SABLE_STREAM_HEADER_BYTES);
    sable::fuzz::appendStreamTrailer(input, static_cast<uint8_t>(program.regionCount),
                                     static_cast<uint8_t>(program.constantRegion),
                                     static_cast<uint32_t>(program.constants.size()));
    // A window of a layer waits, at its start, for tokens its predecessors signalled: the waits
    // of the command the validator finds stuck are cleared until it accepts the window (bounded:
    // one command per round), or the window is dropped.
    for (size_t round = 0;; ++round) {
      sable::fuzz::StreamInput parsed;
      sable::fuzz::splitStreamInput(input.data(), input.size(), &parsed);
      sable_fw_validation result{};
      const uint32_t cause = sable::fuzz::validateStreamInput(parsed, config_, &result);
      if (cause == SABLE_ERROR_NONE) break;
      if (cause != SABLE_ERROR_DEADLOCK || result.command > count || round > count) return;
      uint8_t* stuck = input.data() + SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * result.command;
      uint32_t w[SABLE_COMMAND_WORDS];
      std::memcpy(w, stuck, SABLE_COMMAND_BYTES);
      if (sable_cmd_get_wait(w) == 0) return;  // a token counter overflow: not a missing token
      sable_cmd_set_wait(w, 0);
      std::memcpy(stuck, w, SABLE_COMMAND_BYTES);
    }
    // New behaviour only: an (opcode, wait, signal) or an opcode transition not yet seen.
    bool fresh = false;
    uint32_t previous = 0xFFFFFFFFu;
    for (size_t c = 0; c <= count; ++c) {
      uint32_t w[SABLE_COMMAND_WORDS];
      std::memcpy(w, input.data() + SABLE_STREAM_HEADER_BYTES + SABLE_COMMAND_BYTES * c, SABLE_COMMAND_BYTES);
      const uint32_t opcode = sable_cmd_get_opcode(w);
      fresh |= seen_.insert({opcode, sable_cmd_get_wait(w), sable_cmd_get_signal(w)}).second;
      fresh |= transitions_.insert({previous, opcode}).second;
      previous = opcode;
    }
    if (!fresh) return;
    std::ofstream out(dir_ / (name + ".bin"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size()));
    std::printf("%s: %zu commands, %zu bytes\n", name.c_str(), count + 1, input.size());
    ++written_;
  }

  std::filesystem::path dir_;
  sable_fw_device_config config_{};
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen_;
  std::set<std::pair<uint32_t, uint32_t>> transitions_;
  size_t written_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: make_stream_seeds DIR [CORPUS_DIR]\n");
    return 2;
  }
  const sable_hw_config& s16 = sable_hw_configs[SABLE_HW_CONFIG_S16];
  SeedWriter writer(argv[1]);
  for (const char* name : {"tiny_cnn", "conv_bench", "mobilenet_v1", "mobilenet_v2"}) {
    auto model = sable::runtime::makeBuiltinModel(name);
    if (!model.ok()) {
      std::fprintf(stderr, "make_stream_seeds: builtin:%s: %s\n", name, model.error().message.c_str());
      return 1;
    }
    auto program = compiler::compileModel(*model, s16);
    if (!program.ok()) {
      std::fprintf(stderr, "make_stream_seeds: compiling builtin:%s: %s\n", name, program.error().message.c_str());
      return 1;
    }
    writer.addProgram(name, *program);
  }
  for (uint32_t seed = 1; seed <= 200 && !writer.full(); ++seed) {
    sable::testing::RandomGraphOptions options;
    options.maxOperations = 3;
    const sable::testing::RandomGraph graph = sable::testing::generateRandomGraph(seed, options);
    auto program = compiler::compileModel(graph.model, s16);
    if (program.ok()) writer.addProgram("random_graph_" + std::to_string(seed), *program);
  }
  if (argc == 3) {
    auto files = sable::runtime::findCorpusFiles({argv[2]});
    if (!files.ok()) {
      std::fprintf(stderr, "make_stream_seeds: %s\n", files.error().message.c_str());
      return 1;
    }
    for (const auto& path : *files) {
      auto reader = sable::runtime::CorpusReader::open(path);
      if (!reader.ok()) continue;
      while (auto test = reader->next()) {
        if (writer.full()) break;
        if (!test->ok()) continue;
        auto program = compiler::compileModel((*test)->model, s16);
        if (program.ok()) {
          std::string name = "corpus_" + (*test)->name;
          for (char& c : name) {
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
          }
          writer.addProgram(name, *program);
        }
      }
    }
  }
  std::printf("make_stream_seeds: %zu seeds in %s\n", writer.written(), argv[1]);
  return writer.written() == 0 ? 1 : 0;
}
