#include "stream_checks.h"

#include <algorithm>
#include <array>
#include <optional>
#include <variant>

#include <fmt/format.h>

namespace sable::devicetest {

using umd::Command;
using umd::Depthwise;
using umd::DmaLoad;
using umd::DmaStore;
using umd::Eltwise;
using umd::Lut;
using umd::Matmul;
using umd::Pool;
using umd::Postproc;
using umd::Softmax;
using umd::StreamCommand;
using umd::mnemonicOf;

std::string findScratchpadRace(const std::vector<StreamCommand>& commands, const sable_hw_config& config) {
  struct Access {
    uint64_t begin, end;
    bool write;
  };
  const uint32_t paramLines = sable_postproc_param_lines(config.array_dim);
  auto hull = [](uint64_t first, uint64_t nx, uint64_t ny, uint64_t sx, uint64_t sy) {
    return first + (ny - 1) * sy + (nx - 1) * sx + 1;
  };
  auto accesses = [&](const Command& c) {
    std::vector<Access> a;
    if (const auto* l = std::get_if<DmaLoad>(&c)) {
      a.push_back({l->sp_addr,
                   l->sp_addr + uint64_t{l->nz} * (l->pad_top + l->ny + l->pad_bottom) * (l->pad_left + l->nx + l->pad_right),
                   true});
    } else if (const auto* st = std::get_if<DmaStore>(&c)) {
      a.push_back({st->sp_addr, st->sp_addr + uint64_t{st->nz} * st->ny * st->nx, false});
    } else if (const auto* m = std::get_if<Matmul>(&c)) {
      a.push_back({m->weight_addr, uint64_t{m->weight_addr} + config.array_dim, false});
      a.push_back({m->input_addr, hull(m->input_addr, m->nx, m->ny, m->input_stride_x, m->input_stride_y), false});
    } else if (const auto* pp = std::get_if<Postproc>(&c)) {
      a.push_back({pp->param_addr, uint64_t{pp->param_addr} + paramLines, false});
      a.push_back({pp->output_addr, hull(pp->output_addr, pp->nx, pp->ny, pp->output_stride_x, pp->output_stride_y), true});
    } else if (const auto* d = std::get_if<Depthwise>(&c)) {
      const uint64_t taps = uint64_t{d->kernel_h} * d->kernel_w;
      a.push_back({d->weight_addr, d->weight_addr + taps, false});
      const uint64_t spanX = (uint64_t{d->nx} - 1) * d->stride_x + (uint64_t{d->kernel_w} - 1) * d->dilation_x + 1;
      const uint64_t spanY = (uint64_t{d->ny} - 1) * d->stride_y + (uint64_t{d->kernel_h} - 1) * d->dilation_y + 1;
      a.push_back({d->input_addr, hull(d->input_addr, spanX, spanY, d->input_stride_x, d->input_stride_y), false});
    } else if (const auto* po = std::get_if<Pool>(&c)) {
      a.push_back({po->input_addr, hull(po->input_addr, po->input_width, po->input_height, po->input_stride_x,
                                        po->input_stride_y),
                   false});
      a.push_back({po->output_addr, hull(po->output_addr, po->nx, po->ny, po->output_stride_x, po->output_stride_y), true});
    } else if (const auto* e = std::get_if<Eltwise>(&c)) {
      a.push_back({e->input_a_addr, hull(e->input_a_addr, e->count, 1, e->input_a_stride, 0), false});
      a.push_back({e->input_b_addr, hull(e->input_b_addr, e->count, 1, e->input_b_stride, 0), false});
      a.push_back({e->param_addr, uint64_t{e->param_addr} + sable_eltwise_param_lines(config.array_dim), false});
      a.push_back({e->output_addr, hull(e->output_addr, e->count, 1, e->output_stride, 0), true});
    } else if (const auto* t = std::get_if<Lut>(&c)) {
      a.push_back({t->input_addr, hull(t->input_addr, t->count, 1, t->input_stride, 0), false});
      a.push_back({t->table_addr, uint64_t{t->table_addr} + SABLE_LUT_ENTRIES / config.array_dim, false});
      a.push_back({t->output_addr, hull(t->output_addr, t->count, 1, t->output_stride, 0), true});
    } else if (const auto* s = std::get_if<Softmax>(&c)) {
      const uint64_t blocks = (uint64_t{s->length} + config.array_dim - 1) / config.array_dim;
      a.push_back({s->input_addr, hull(s->input_addr, s->rows, blocks, s->input_stride, s->input_block_stride), false});
      a.push_back({s->table_addr, uint64_t{s->table_addr} + sable_softmax_param_lines(config.array_dim), false});
      a.push_back({s->output_addr, hull(s->output_addr, s->rows, blocks, s->output_stride, s->output_block_stride),
                   true});
    }
    return a;
  };
  auto queueOf = [](const Command& c) -> int {
    if (std::holds_alternative<DmaLoad>(c)) return 0;
    if (std::holds_alternative<DmaStore>(c)) return 2;
    return 1;
  };
  // Vector clocks: clock[i][q] = how many commands of queue q have finished before command i starts.
  const size_t n = commands.size();
  std::vector<std::array<int64_t, 3>> clock(n);
  std::vector<int64_t> position(n);
  std::array<int64_t, 3> count{};
  std::array<std::optional<size_t>, 3> previous{};
  std::array<std::vector<size_t>, SABLE_DEP_CHANNELS> signals;
  std::array<size_t, SABLE_DEP_CHANNELS> taken{};
  for (size_t i = 0; i < n; ++i) {
    const int q = queueOf(commands[i].command);
    position[i] = count[q]++;
    clock[i] = {0, 0, 0};
    if (previous[q]) {
      const size_t p = *previous[q];
      for (int k = 0; k < 3; ++k) clock[i][k] = std::max(clock[i][k], clock[p][k]);
      clock[i][q] = std::max(clock[i][q], position[p] + 1);
    }
    previous[q] = i;
  }
  // Tokens: resolve in stream order (a signal by a later command in the stream still pairs).
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
      if (commands[i].deps.signal >> ch & 1u) signals[ch].push_back(i);
    }
  }
  // Propagate to a fixed point (clocks only grow).
  for (bool changed = true; changed;) {
    changed = false;
    taken.fill(0);
    std::array<std::optional<size_t>, 3> prev{};
    for (size_t i = 0; i < n; ++i) {
      const int q = queueOf(commands[i].command);
      std::array<int64_t, 3> c = clock[i];
      if (prev[q]) {
        for (int k = 0; k < 3; ++k) c[k] = std::max(c[k], clock[*prev[q]][k]);
      }
      for (uint32_t ch = 0; ch < SABLE_DEP_CHANNELS; ++ch) {
        if (!(commands[i].deps.wait >> ch & 1u)) continue;
        const size_t k = taken[ch]++;
        if (k >= signals[ch].size()) continue;  // a token from before these commands
        const size_t producer = signals[ch][k];
        const int pq = queueOf(commands[producer].command);
        for (int j = 0; j < 3; ++j) c[j] = std::max(c[j], clock[producer][j]);
        c[pq] = std::max(c[pq], position[producer] + 1);
      }
      if (c != clock[i]) {
        clock[i] = c;
        changed = true;
      }
      prev[q] = i;
    }
  }
  auto before = [&](size_t a, size_t b) { return clock[b][queueOf(commands[a].command)] > position[a]; };
  std::vector<std::vector<Access>> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = accesses(commands[i].command);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      if (queueOf(commands[a].command) == queueOf(commands[b].command)) continue;
      for (const Access& x : all[a]) {
        for (const Access& y : all[b]) {
          if (!(x.write || y.write) || x.end <= y.begin || y.end <= x.begin) continue;
          if (!before(a, b) && !before(b, a)) {
            return fmt::format("commands {} ({}) and {} ({}) touch scratchpad lines [{}, {}) and [{}, {}) unordered", a,
                               mnemonicOf(commands[a].command), b, mnemonicOf(commands[b].command), x.begin, x.end,
                               y.begin, y.end);
          }
        }
      }
    }
  }
  return {};
}

}  // namespace sable::devicetest
