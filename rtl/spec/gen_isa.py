#!/usr/bin/env python3
"""Generates the hardware contract's derived files from rtl/spec/sable_isa.json.

  gen_isa.py --header OUT.h       C/C++ header (firmware, sim, umd): sable/isa.h
  gen_isa.py --sv-package OUT.sv  SystemVerilog package (rtl): sable_pkg.sv
  gen_isa.py --docs OUT.md        reference document: docs/isa.md
  gen_isa.py --check-docs FILE.md exits 1 when FILE.md differs from what --docs would write

The spec is validated first (overlapping fields, field outside its word, duplicate opcodes or
offsets): a broken spec fails the build with a message naming the problem.
"""
import argparse
import json
import pathlib
import sys

SPEC_DEFAULT = pathlib.Path(__file__).with_name("sable_isa.json")
WORDS = 8


def fail(message):
    sys.exit(f"gen_isa.py: {message}")


def num(value):
    return int(value, 0) if isinstance(value, str) else int(value)


def c_int32(value):
    """An int32 as a C constant expression of type int (-2^31 has no literal of its own)."""
    return "(-2147483647 - 1)" if value == -2**31 else f"({value})" if value < 0 else str(value)


def emit_c_range(emit, pb, item):
    """The range of a parameter block's item, when the spec gives one: a value outside is BAD_FIELD."""
    if "min" in item:
        name = f"SABLE_{pb['name']}_PARAM_{item['name'].upper()}"
        emit(f"#define {name}_MIN {c_int32(item['min'])} /* the range of {item['name']}: outside, BAD_FIELD */")
        emit(f"#define {name}_MAX {c_int32(item['max'])}")


def fnv1a32(text):
    h = 0x811C9DC5
    for byte in text.encode():
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


class Spec:
    def __init__(self, path):
        self.raw = json.loads(pathlib.Path(path).read_text())
        r = self.raw
        self.isa_major = r["isa_version"]["major"]
        self.isa_minor = r["isa_version"]["minor"]
        cfgs = r["configurations"]
        self.config_fields = cfgs["_order"]
        self.config_docs = cfgs["_fields"]
        self.default_config = cfgs["default"]
        self.configs = {}
        for name, values in cfgs.items():
            if name.startswith("_") or name == "default":
                continue
            missing = [f for f in self.config_fields if f not in values]
            if missing:
                fail(f"configuration {name} lacks {missing}")
            if values["vector_lanes"] != values["array_dim"]:
                fail(f"configuration {name}: vector_lanes must equal array_dim")
            canonical = ";".join(f"{f}={values[f]}" for f in self.config_fields)
            self.configs[name] = dict(values, config_id=fnv1a32(canonical))
        if self.default_config not in self.configs:
            fail(f"default configuration {self.default_config} is not defined")
        self.stream = r["stream"]
        self.channels = r["dependency_channels"]
        self.queues = r["queues"]
        self.common = r["common_fields"]
        self.commands = r["commands"]
        self.param_blocks = r["param_blocks"]
        self.registers = r["registers"]
        self.counters = r["counters"]
        self.hostif = r["host_interface"]
        self.errors = r["error_causes"]
        self.check()

    def check(self):
        def check_fields(owner, fields):
            used = [0] * WORDS
            for f in fields:
                w, lsb, width = f["word"], f["lsb"], f["width"]
                if not (0 <= w < WORDS) or lsb < 0 or width < 1 or lsb + width > 32:
                    fail(f"{owner}.{f['name']}: outside its word")
                mask = ((1 << width) - 1) << lsb
                if used[w] & mask:
                    fail(f"{owner}.{f['name']}: overlaps another field")
                used[w] |= mask
            return used

        check_fields("stream header", self.stream["header"])
        opcodes = set()
        queue_names = {q["name"] for q in self.queues}
        for c in self.commands:
            op = num(c["opcode"])
            if op in opcodes or op > 0xFF:
                fail(f"command {c['name']}: duplicate or oversized opcode")
            opcodes.add(op)
            if c["queue"] not in queue_names:
                fail(f"command {c['name']}: unknown queue {c['queue']}")
            check_fields(c["name"], self.common + c["fields"])
        offsets = set()
        for reg in self.registers:
            off = num(reg["offset"])
            if off in offsets or off % 4:
                fail(f"register {reg['name']}: duplicate or unaligned offset")
            offsets.add(off)
        base = num(self.counters["base"])
        for i, _ in enumerate(self.counters["list"]):
            if base + 8 * i in offsets or base + 8 * i + 4 in offsets:
                fail("counter block overlaps a register")
        hostif_offsets = set()
        for reg in self.hostif["registers"]:
            off = num(reg["offset"])
            if off in hostif_offsets or off % 4 or off > 0xFF:
                fail(f"host-interface register {reg['name']}: duplicate, unaligned or beyond 0xFF")
            hostif_offsets.add(off)
        window = 1 << self.hostif["window_bits"]
        csr, hostif = num(self.hostif["csr_window"]), num(self.hostif["hostif_window"])
        if csr == hostif or csr >= window or hostif >= window or csr % 0x10000 or hostif % 0x10000:
            fail("host_interface: csr_window and hostif_window must be distinct 64 KiB windows below 2^window_bits")
        codes = [e["code"] for e in self.errors]
        if len(set(codes)) != len(codes):
            fail("duplicate error cause code")
        for pb in self.param_blocks:
            items = pb.get("arrays", []) + pb.get("words", [])
            names = {item["name"].upper() for item in items}
            for item in items:
                owner = f"parameter block {pb['name']}.{item['name']}"
                if ("min" in item) != ("max" in item):
                    fail(f"{owner}: a range needs both min and max")
                if "min" not in item:
                    continue
                lo, hi = item["min"], item["max"]
                if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)):
                    fail(f"{owner}: min and max must be integers")
                if not -2**31 <= lo <= hi <= 2**31 - 1:
                    fail(f"{owner}: needs -2^31 <= min <= max <= 2^31 - 1")
                for suffix in ("_MIN", "_MAX"):
                    if item["name"].upper() + suffix in names:
                        fail(f"{owner}: its constant {item['name'].upper()}{suffix} is another item's name")

    def queue_masks(self, queue):
        lower = queue.lower()
        wait = sum(1 << ch["bit"] for ch in self.channels if ch["consumer"] == lower)
        signal = sum(1 << ch["bit"] for ch in self.channels if ch["producer"] == lower)
        return wait, signal

    def defined_masks(self, command):
        masks = [0] * WORDS
        for f in self.common + command["fields"]:
            masks[f["word"]] |= ((1 << f["width"]) - 1) << f["lsb"]
        return masks


# ---------------------------------------------------------------------------------------------
def c_header(spec):
    out = []
    emit = out.append
    emit("/* Generated by rtl/spec/gen_isa.py from rtl/spec/sable_isa.json. Do not edit. */")
    emit("/* The Sable NPU hardware contract: registers, command encodings, hardware configurations.")
    emit(" * Freestanding C (stdint.h only), usable from the firmware, the simulator and the UMD. */")
    emit("#ifndef SABLE_ISA_H\n#define SABLE_ISA_H\n\n#include <stdint.h>\n")
    emit(f"#define SABLE_ISA_VERSION_MAJOR {spec.isa_major}u")
    emit(f"#define SABLE_ISA_VERSION_MINOR {spec.isa_minor}u")
    emit("#define SABLE_ISA_VERSION ((SABLE_ISA_VERSION_MAJOR << 16) | SABLE_ISA_VERSION_MINOR)")
    emit(f"#define SABLE_HW_REVISION {spec.raw['hw_revision']}u")
    emit(f"#define SABLE_DEVICE_ID {spec.raw['device_id']}u\n")

    emit("/* ---- Hardware configurations ---- */")
    emit("struct sable_hw_config {\n  const char *name;\n  uint32_t config_id;")
    for f in spec.config_fields:
        emit(f"  uint32_t {f}; /* {spec.config_docs[f]} */")
    emit("};")
    names = list(spec.configs)
    for i, name in enumerate(names):
        cfg = spec.configs[name]
        emit(f"#define SABLE_HW_CONFIG_{name.upper()} {i}u")
        emit(f"#define SABLE_HW_CONFIG_{name.upper()}_ID 0x{cfg['config_id']:08X}u")
    emit(f"#define SABLE_HW_CONFIG_COUNT {len(names)}u")
    emit(f"#define SABLE_HW_CONFIG_DEFAULT SABLE_HW_CONFIG_{spec.default_config.upper()}")
    # Unused in a translation unit that includes the header only for its register names (the
    # kernel module's files: its build fails on any warning).
    emit("static const struct sable_hw_config sable_hw_configs[SABLE_HW_CONFIG_COUNT] __attribute__((unused)) = {")
    for name in names:
        cfg = spec.configs[name]
        values = ", ".join(str(cfg[f]) for f in spec.config_fields)
        emit(f"  {{\"{name}\", 0x{cfg['config_id']:08X}u, {values}}},")
    emit("};")
    emit("/* Scratchpad lines of array_dim bytes, and accumulator rows of array_dim int32 values. */")
    emit("static inline uint32_t sable_hw_config_scratchpad_lines(const struct sable_hw_config *c) {")
    emit("  return c->scratchpad_kib * 1024u / c->array_dim;\n}")
    emit("static inline uint32_t sable_hw_config_accumulator_rows(const struct sable_hw_config *c) {")
    emit("  return c->accumulator_kib * 1024u / (4u * c->array_dim);\n}\n")

    emit("/* ---- Command stream ---- */")
    st = spec.stream
    emit(f"#define SABLE_STREAM_MAGIC {st['magic']}u")
    emit(f"#define SABLE_STREAM_FORMAT_MAJOR {st['format_version']['major']}u")
    emit(f"#define SABLE_STREAM_FORMAT_MINOR {st['format_version']['minor']}u")
    emit(f"#define SABLE_STREAM_HEADER_BYTES {st['header_bytes']}u")
    emit(f"#define SABLE_COMMAND_BYTES {st['command_bytes']}u")
    emit(f"#define SABLE_COMMAND_WORDS {WORDS}u")
    emit(f"#define SABLE_STREAM_ALIGNMENT {st['alignment']}u")
    emit("#define SABLE_REGION_ENTRY_BYTES 16u /* region table entry: u64 base, u64 size */")
    for f in st["header"]:
        emit_accessors(emit, "sable_stream_header", "SABLE_STREAM_HEADER", f)
    emit("")

    emit("/* Dependency channels: bits of a command's wait and signal fields. */")
    for ch in spec.channels:
        emit(f"#define SABLE_DEP_{ch['name']} (1u << {ch['bit']}) /* {ch['doc']} */")
    emit(f"#define SABLE_TOKEN_COUNTER_MAX {spec.raw['token_counter_max']}u")
    emit(f"#define SABLE_DEP_CHANNELS {len(spec.channels)}u")
    emit("enum sable_queue {")
    for q in spec.queues:
        emit(f"  SABLE_QUEUE_{q['name']} = {q['id']}, /* {q['doc']} */")
    emit("};")
    for q in spec.queues:
        wait, signal = spec.queue_masks(q["name"])
        emit(f"#define SABLE_QUEUE_{q['name']}_WAIT_MASK 0x{wait:X}u")
        emit(f"#define SABLE_QUEUE_{q['name']}_SIGNAL_MASK 0x{signal:X}u")
    emit("")

    emit("/* Opcodes. */")
    for c in spec.commands:
        emit(f"#define SABLE_OP_{c['name']} {c['opcode']}u")
    emit("/* The queue that executes an opcode, or -1 for an unknown opcode. */")
    emit("static inline int sable_opcode_queue(uint32_t opcode) {\n  switch (opcode) {")
    for c in spec.commands:
        emit(f"    case SABLE_OP_{c['name']}: return SABLE_QUEUE_{c['queue']};")
    emit("    default: return -1;\n  }\n}")
    emit("static inline const char *sable_opcode_name(uint32_t opcode) {\n  switch (opcode) {")
    for c in spec.commands:
        emit(f"    case SABLE_OP_{c['name']}: return \"{c['name']}\";")
    emit("    default: return 0;\n  }\n}")
    emit("/* Bits of command word `word` that some field of the opcode defines; the rest must be 0. */")
    emit("static inline uint32_t sable_cmd_defined_mask(uint32_t opcode, uint32_t word) {")
    emit("  switch (opcode) {")
    for c in spec.commands:
        masks = ", ".join(f"0x{m:08X}u" for m in spec.defined_masks(c))
        emit(f"    case SABLE_OP_{c['name']}: {{ static const uint32_t m[{WORDS}] = {{{masks}}}; return word < {WORDS}u ? m[word] : 0u; }}")
    emit("    default: return 0u;\n  }\n}\n")

    emit("/* Field tables, for tools that handle commands generically (assembler, disassembler). */")
    emit("struct sable_field_desc {\n  const char *name;\n  uint8_t word;\n  uint8_t lsb;\n  uint8_t width;\n  uint8_t is_signed;\n};")
    emit("static inline const struct sable_field_desc *sable_cmd_fields(uint32_t opcode, uint32_t *count) {")
    emit("  switch (opcode) {")
    for c in spec.commands:
        entries = ", ".join(f"{{\"{f['name']}\", {f['word']}, {f['lsb']}, {f['width']}, {1 if f.get('signed') else 0}}}"
                            for f in c["fields"])
        n = len(c["fields"])
        if n:
            emit(f"    case SABLE_OP_{c['name']}: {{ static const struct sable_field_desc f[{n}] = {{{entries}}}; *count = {n}u; return f; }}")
        else:
            emit(f"    case SABLE_OP_{c['name']}: *count = 0u; return 0;")
    emit("    default: *count = 0u; return 0;\n  }\n}")
    emit("static inline uint32_t sable_opcode_by_name(const char *name, int *found) {")
    emit("  static const struct { const char *name; uint32_t opcode; } ops[] = {")
    emit(",\n".join(f"    {{\"{c['name']}\", {c['opcode']}u}}" for c in spec.commands))
    emit("  };")
    emit("  for (uint32_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {")
    emit("    const char *a = ops[i].name, *b = name;")
    emit("    while (*a && *a == *b) { ++a; ++b; }")
    emit("    if (*a == *b) { *found = 1; return ops[i].opcode; }")
    emit("  }")
    emit("  *found = 0;\n  return 0;\n}\n")
    emit("/* Fields of every command. */")
    for f in spec.common:
        emit_accessors(emit, "sable_cmd", "SABLE_CMD", f)
    for c in spec.commands:
        lname = c["name"].lower()
        emit(f"\n/* {c['name']} ({c['queue'].lower()} queue) */")
        for f in c["fields"]:
            emit_accessors(emit, f"sable_cmd_{lname}", f"SABLE_CMD_{c['name']}", f)
            for ename, evalue in f.get("enum", {}).items():
                emit(f"#define SABLE_{c['name']}_{f['name'].upper()}_{ename} {evalue}u")
    emit("")

    emit("/* ---- Parameter blocks in the scratchpad ---- */")
    for pb in spec.param_blocks:
        if "arrays" in pb:
            for a in pb["arrays"]:
                emit(f"#define SABLE_{pb['name']}_PARAM_{a['name'].upper()} {a['index']}u /* array: {a['doc']} */")
                emit_c_range(emit, pb, a)
            emit(f"#define SABLE_{pb['name']}_PARAM_ARRAYS {len(pb['arrays'])}u")
            emit(f"/* Byte offset of lane `lane` of array `array` in the {pb['name']} block. */")
            emit(f"static inline uint32_t sable_{pb['name'].lower()}_param_offset(uint32_t array_dim, uint32_t array, uint32_t lane) {{")
            emit("  return array * 4u * array_dim + 4u * lane;\n}")
            emit(f"static inline uint32_t sable_{pb['name'].lower()}_param_lines(uint32_t array_dim) {{")
            emit(f"  (void)array_dim; /* each array is array_dim int32 = 4 lines, whatever array_dim */")
            emit(f"  return SABLE_{pb['name']}_PARAM_ARRAYS * 4u;\n}}")
        elif "table" in pb:
            t = pb["table"]
            emit(f"#define SABLE_{pb['name']}_TABLE_ENTRIES {t['entries']}u /* {pb['name']} table entries */")
            emit(f"#define SABLE_{pb['name']}_TABLE_ENTRY_BYTES {t['entry_bytes']}u")
            emit(f"static inline uint32_t sable_{pb['name'].lower()}_param_lines(uint32_t array_dim) {{")
            emit(f"  return ({t['entries'] * t['entry_bytes']}u + array_dim - 1u) / array_dim;\n}}")
        else:
            for w in pb["words"]:
                emit(f"#define SABLE_{pb['name']}_PARAM_{w['name'].upper()} {w['index']}u /* word: {w['doc']} */")
                emit_c_range(emit, pb, w)
            emit(f"#define SABLE_{pb['name']}_PARAM_WORDS {len(pb['words'])}u")
            emit(f"static inline uint32_t sable_{pb['name'].lower()}_param_lines(uint32_t array_dim) {{")
            emit(f"  return (SABLE_{pb['name']}_PARAM_WORDS * 4u + array_dim - 1u) / array_dim;\n}}")
    emit("#define SABLE_LUT_ENTRIES 256u\n")

    emit("/* ---- Registers (byte offsets in the CSR window) ---- */")
    for reg in spec.registers:
        emit(f"#define SABLE_REG_{reg['name']} {reg['offset']}u /* {reg['access']}: {reg['doc']} */")
        for f in reg.get("fields", []):
            p = f"SABLE_REG_{reg['name']}_{f['name']}"
            emit(f"#define {p}_LSB {f['lsb']}u")
            emit(f"#define {p}_WIDTH {f['width']}u")
            emit(f"#define {p}_MASK 0x{(((1 << f['width']) - 1) << f['lsb']):08X}u")
    cnt = spec.counters
    emit(f"#define SABLE_REG_COUNTERS_BASE {cnt['base']}u")
    emit("#define SABLE_REG_COUNTER_LO(i) (SABLE_REG_COUNTERS_BASE + 8u * (i))")
    emit("#define SABLE_REG_COUNTER_HI(i) (SABLE_REG_COUNTERS_BASE + 8u * (i) + 4u)")
    for i, c in enumerate(cnt["list"]):
        emit(f"#define SABLE_COUNTER_{c['name']} {i}u /* {c['doc']} */")
    emit(f"#define SABLE_COUNTER_COUNT {len(cnt['list'])}u")
    emit("static inline const char *sable_counter_name(uint32_t counter) {\n  switch (counter) {")
    for i, c in enumerate(cnt["list"]):
        emit(f"    case {i}u: return \"{c['name'].lower()}\";")
    emit("    default: return 0;\n  }\n}\n")

    hi = spec.hostif
    emit("/* ---- sable_subsystem's AXI4-Lite window and its host-interface block ---- */")
    emit(f"#define SABLE_SUBSYSTEM_CSR_WINDOW 0x{num(hi['csr_window']):05X}u")
    emit(f"#define SABLE_SUBSYSTEM_HOSTIF_WINDOW 0x{num(hi['hostif_window']):05X}u")
    emit(f"#define SABLE_SUBSYSTEM_WINDOW_BITS {hi['window_bits']}u")
    for reg in hi["registers"]:
        emit(f"#define SABLE_HOSTIF_REG_{reg['name']} 0x{num(reg['offset']):02X}u /* {reg['access']}: {reg['doc']} */")
        for f in reg.get("fields", []):
            p = f"SABLE_HOSTIF_REG_{reg['name']}_{f['name']}"
            emit(f"#define {p}_LSB {f['lsb']}u")
            emit(f"#define {p}_MASK 0x{(((1 << f['width']) - 1) << f['lsb']):08X}u")
    emit("")

    emit("/* ---- Error causes (ERROR_CAUSE register, completion records, job status) ---- */")
    for e in spec.errors:
        emit(f"#define SABLE_ERROR_{e['name']} {e['code']}u /* {e['doc']} */")
    emit(f"#define SABLE_ERROR_COUNT {len(spec.errors)}u")
    emit("static inline const char *sable_error_cause_name(uint32_t cause) {\n  switch (cause) {")
    for e in spec.errors:
        emit(f"    case {e['code']}u: return \"{e['name']}\";")
    emit("    default: return 0;\n  }\n}")
    emit("\n#endif /* SABLE_ISA_H */")
    return "\n".join(out) + "\n"


def emit_accessors(emit, prefix, macro, f):
    name = f["name"]
    w, lsb, width = f["word"], f["lsb"], f["width"]
    mask = (1 << width) - 1
    m = f"{macro}_{name.upper()}"
    emit(f"#define {m}_WORD {w}u")
    emit(f"#define {m}_LSB {lsb}u")
    emit(f"#define {m}_WIDTH {width}u")
    if f.get("signed"):
        emit(f"#define {m}_MIN (-{1 << (width - 1)})")
        emit(f"#define {m}_MAX {(1 << (width - 1)) - 1}")
        emit(f"static inline int32_t {prefix}_get_{name}(const uint32_t *w) {{")
        emit(f"  uint32_t v = (w[{w}] >> {lsb}) & 0x{mask:X}u;")
        emit(f"  return (int32_t)(v ^ 0x{1 << (width - 1):X}u) - {1 << (width - 1)};\n}}")
        emit(f"static inline void {prefix}_set_{name}(uint32_t *w, int32_t v) {{")
        emit(f"  w[{w}] = (w[{w}] & ~(0x{mask:X}u << {lsb})) | (((uint32_t)v & 0x{mask:X}u) << {lsb});\n}}")
    else:
        emit(f"#define {m}_MAX 0x{mask:X}u")
        emit(f"static inline uint32_t {prefix}_get_{name}(const uint32_t *w) {{")
        emit(f"  return (w[{w}] >> {lsb}) & 0x{mask:X}u;\n}}")
        emit(f"static inline void {prefix}_set_{name}(uint32_t *w, uint32_t v) {{")
        emit(f"  w[{w}] = (w[{w}] & ~(0x{mask:X}u << {lsb})) | ((v & 0x{mask:X}u) << {lsb});\n}}")


# ---------------------------------------------------------------------------------------------
def sv_package(spec):
    out = []
    emit = out.append
    emit("// Generated by rtl/spec/gen_isa.py from rtl/spec/sable_isa.json. Do not edit.")
    emit("// The Sable NPU hardware contract for the RTL: registers, command encodings, configurations.")
    emit("// A package defines every constant of the contract; no single design uses them all.")
    emit("/* verilator lint_off UNUSEDPARAM */")
    emit("package sable_pkg;")
    emit(f"  localparam int unsigned ISA_VERSION_MAJOR = {spec.isa_major};")
    emit(f"  localparam int unsigned ISA_VERSION_MINOR = {spec.isa_minor};")
    emit(f"  localparam int unsigned HW_REVISION = {spec.raw['hw_revision']};")
    emit(f"  localparam logic [31:0] DEVICE_ID = 32'h{num(spec.raw['device_id']):08X};")
    emit("")
    emit("  // Hardware configurations; the RTL's parameters default to CFG_*.")
    for name, cfg in spec.configs.items():
        up = name.upper()
        emit(f"  localparam logic [31:0] CFG_{up}_CONFIG_ID = 32'h{cfg['config_id']:08X};")
        for f in spec.config_fields:
            emit(f"  localparam int unsigned CFG_{up}_{f.upper()} = {cfg[f]};")
    d = spec.default_config.upper()
    emit(f"  localparam logic [31:0] CFG_CONFIG_ID = CFG_{d}_CONFIG_ID;")
    for f in spec.config_fields:
        emit(f"  localparam int unsigned CFG_{f.upper()} = CFG_{d}_{f.upper()};")
    emit("")
    st = spec.stream
    emit(f"  localparam logic [31:0] STREAM_MAGIC = 32'h{num(st['magic']):08X};")
    emit(f"  localparam int unsigned STREAM_FORMAT_MAJOR = {st['format_version']['major']};")
    emit(f"  localparam int unsigned STREAM_HEADER_BYTES = {st['header_bytes']};")
    emit(f"  localparam int unsigned COMMAND_BYTES = {st['command_bytes']};")
    emit(f"  localparam int unsigned COMMAND_BITS = {st['command_bytes'] * 8};")
    emit(f"  localparam int unsigned TOKEN_COUNTER_MAX = {spec.raw['token_counter_max']};")
    for ch in spec.channels:
        emit(f"  localparam int unsigned DEP_{ch['name']} = {ch['bit']};")
    for q in spec.queues:
        wait, signal = spec.queue_masks(q["name"])
        emit(f"  localparam logic [3:0] QUEUE_{q['name']}_WAIT_MASK = 4'h{wait:X};")
        emit(f"  localparam logic [3:0] QUEUE_{q['name']}_SIGNAL_MASK = 4'h{signal:X};")
    emit("")
    # Opcodes and error causes are localparams, not enums: Yosys 0.23 cannot resolve an enum's
    # members inside the package's own functions (docs/rtl.md, "The synthesizable subset").
    for c in spec.commands:
        emit(f"  localparam logic [7:0] OP_{c['name']} = 8'h{num(c['opcode']):02X};")
    emit("")
    emit("  // Command fields: bit position in the 256-bit command (word * 32 + lsb) and width.")
    for f in spec.common:
        emit(f"  localparam int unsigned CMD_{f['name'].upper()}_LSB = {f['word'] * 32 + f['lsb']};")
        emit(f"  localparam int unsigned CMD_{f['name'].upper()}_WIDTH = {f['width']};")
    for c in spec.commands:
        for f in c["fields"]:
            m = f"CMD_{c['name']}_{f['name'].upper()}"
            emit(f"  localparam int unsigned {m}_LSB = {f['word'] * 32 + f['lsb']};")
            emit(f"  localparam int unsigned {m}_WIDTH = {f['width']};")
            for ename, evalue in f.get("enum", {}).items():
                emit(f"  localparam int unsigned {c['name']}_{f['name'].upper()}_{ename} = {evalue};")
    emit("")
    emit("  // Per command, the bits of its own fields (not the common header: opcode, wait, signal). An")
    emit("  // engine that reads only these keeps only these of its command (sable_grant_stall's CMD_USED).")
    for c in spec.commands:
        mask = sum(((1 << f["width"]) - 1) << (f["word"] * 32 + f["lsb"]) for f in c["fields"])
        emit(f"  localparam logic [{WORDS * 32 - 1}:0] CMD_{c['name']}_FIELDS = {WORDS * 32}'h{mask:0{WORDS * 8}X};")
    emit("")
    for pb in spec.param_blocks:
        for item in pb.get("arrays", []) + pb.get("words", []):
            emit(f"  localparam int unsigned {pb['name']}_PARAM_{item['name'].upper()} = {item['index']};")
            if "min" in item:
                sv = lambda v: "-2147483647 - 1" if v == -2**31 else str(v)
                emit(f"  localparam int {pb['name']}_PARAM_{item['name'].upper()}_MIN = {sv(item['min'])};")
                emit(f"  localparam int {pb['name']}_PARAM_{item['name'].upper()}_MAX = {sv(item['max'])};")
        if "table" in pb:
            emit(f"  localparam int unsigned {pb['name']}_TABLE_ENTRIES = {pb['table']['entries']};")
            emit(f"  localparam int unsigned {pb['name']}_TABLE_ENTRY_BYTES = {pb['table']['entry_bytes']};")
    emit("")
    emit("  // Registers: byte offsets in the CSR window.")
    for reg in spec.registers:
        emit(f"  localparam logic [11:0] REG_{reg['name']} = 12'h{num(reg['offset']):03X};")
        for f in reg.get("fields", []):
            emit(f"  localparam int unsigned REG_{reg['name']}_{f['name']}_LSB = {f['lsb']};")
            emit(f"  localparam int unsigned REG_{reg['name']}_{f['name']}_WIDTH = {f['width']};")
    emit(f"  localparam logic [11:0] REG_COUNTERS_BASE = 12'h{num(spec.counters['base']):03X};")
    for i, c in enumerate(spec.counters["list"]):
        emit(f"  localparam int unsigned COUNTER_{c['name']} = {i};")
    emit(f"  localparam int unsigned COUNTER_COUNT = {len(spec.counters['list'])};")
    hi = spec.hostif
    emit("")
    emit("  // sable_subsystem's AXI4-Lite window and its host-interface block (sable_hostif).")
    emit(f"  localparam logic [31:0] SUBSYSTEM_CSR_WINDOW = 32'h{num(hi['csr_window']):05X};")
    emit(f"  localparam logic [31:0] SUBSYSTEM_HOSTIF_WINDOW = 32'h{num(hi['hostif_window']):05X};")
    emit(f"  localparam int unsigned SUBSYSTEM_WINDOW_BITS = {hi['window_bits']};")
    for reg in hi["registers"]:
        emit(f"  localparam logic [7:0] HOSTIF_{reg['name']} = 8'h{num(reg['offset']):02X};")
        for f in reg.get("fields", []):
            emit(f"  localparam int unsigned HOSTIF_{reg['name']}_{f['name']}_LSB = {f['lsb']};")
    emit("")
    emit("  // Bits of command word `word` that some field of the opcode defines; the rest must be 0.")
    emit("  function automatic logic [31:0] cmd_defined_mask(input logic [7:0] opcode, input int unsigned word);")
    # A flat vector, not logic [7:0][31:0], and the result assigned to the function's name, not
    # returned: Yosys 0.23 parses neither (docs/rtl.md, "The synthesizable subset").
    emit("    logic [255:0] m;")
    emit("    case (opcode)")
    for c in spec.commands:
        masks = ", ".join(f"32'h{m:08X}" for m in reversed(spec.defined_masks(c)))
        emit(f"      OP_{c['name']}: m = {{{masks}}};")
    emit("      default: m = '0;")
    emit("    endcase")
    emit("    cmd_defined_mask = word < 8 ? m[32*word[2:0] +: 32] : 32'h0;")
    emit("  endfunction")
    emit("")
    emit("  // The queue that executes a command (QUEUE_* ids); opcode_known() tells a valid opcode.")
    for q in spec.queues:
        emit(f"  localparam logic [1:0] QUEUE_{q['name']} = 2'd{q['id']};")
    emit("  function automatic logic [1:0] opcode_queue(input logic [7:0] opcode);")
    emit("    case (opcode)")
    for c in spec.commands:
        emit(f"      OP_{c['name']}: opcode_queue = QUEUE_{c['queue']};")
    emit("      default: opcode_queue = QUEUE_DISPATCH;")
    emit("    endcase")
    emit("  endfunction")
    emit("  function automatic logic opcode_known(input logic [7:0] opcode);")
    emit("    case (opcode)")
    emit("      " + ", ".join(f"OP_{c['name']}" for c in spec.commands) + ": opcode_known = 1'b1;")
    emit("      default: opcode_known = 1'b0;")
    emit("    endcase")
    emit("  endfunction")
    emit("")
    for e in spec.errors:
        emit(f"  localparam logic [7:0] ERROR_{e['name']} = 8'd{e['code']};")
    emit("endpackage")
    emit("/* verilator lint_on UNUSEDPARAM */")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
def docs(spec):
    # One line per paragraph and one table row per 32-bit word (its fields in one cell), so the
    # page stays short enough to read through; Markdown renders both the same as wrapped text.
    out = []
    emit = out.append
    emit("<!-- Generated by rtl/spec/gen_isa.py from rtl/spec/sable_isa.json. Do not edit: change the")
    emit("     spec and run `python3 rtl/spec/gen_isa.py --docs docs/isa.md`. -->")
    emit(f"# Sable NPU instruction set and registers (ISA {spec.isa_major}.{spec.isa_minor})\n")
    emit("This is the hardware contract between the RTL (`rtl/`), the functional model (`sim/func`), the "
         "firmware and the compiler. It is generated, like `sable/isa.h` and `sable_pkg.sv`, from "
         "`rtl/spec/sable_isa.json`, the one source of truth. "
         f"Device ID register: `{spec.raw['device_id']}` ({spec.raw['device_id_text']}); "
         f"hardware revision {spec.raw['hw_revision']}.\n")

    emit("## Hardware configurations\n")
    emit("The configuration is read from the HWCFG registers; `CONFIG_ID` is the FNV-1a hash of "
         "`field=value;` over the fields below in this order, so a stream compiled for one "
         f"configuration is refused by another. Default: `{spec.default_config}`.\n")
    names = list(spec.configs)
    emit("| field | " + " | ".join(names) + " | meaning |")
    emit("|---|" + "---|" * len(names) + "---|")
    emit("| config_id | " + " | ".join(f"`0x{spec.configs[n]['config_id']:08X}`" for n in names) + " | |")
    for f in spec.config_fields:
        emit(f"| {f} | " + " | ".join(str(spec.configs[n][f]) for n in names) + f" | {spec.config_docs[f]} |")
    emit("")
    emit("Device memory is reached only through a job's *regions*: a region table of `{u64 base, u64 size}` "
         "entries that the firmware builds from the job's buffer table; DMA commands name a region and a "
         "byte offset.\n")

    emit("## Command stream\n")
    st = spec.stream
    emit(f"A stream is a {st['header_bytes']}-byte header followed by {st['command_bytes']}-byte commands (eight "
         f"little-endian 32-bit words each), {st['alignment']}-byte aligned in device memory. Magic {st['magic']} "
         f"({st['magic_text']}), format version {st['format_version']['major']}.{st['format_version']['minor']}.\n")
    field_table(emit, st["header"])
    emit("### Queues and dependency tokens\n")
    emit("The command processor fetches the stream in order and dispatches each command to the queue "
         "of its opcode (each queue holds `queue_depth` commands; dispatch stalls while the target "
         "queue is full). Queues execute in order and independently. Before a command starts, it takes "
         "one token from every channel in its `wait` field (waiting until each has one); when it has "
         "finished, it adds one token to every channel in its `signal` field. A queue may only wait on "
         f"channels it consumes and signal channels it produces. Token counters saturate at {spec.raw['token_counter_max']}: "
         "a stream that would exceed that, or that waits for a token never signalled, is rejected "
         "(DEADLOCK) by the firmware before it runs.\n")
    emit("| channel | bit | from | to | meaning |\n|---|---|---|---|---|")
    for ch in spec.channels:
        emit(f"| {ch['name']} | {ch['bit']} | {ch['producer']} | {ch['consumer']} | {ch['doc']} |")
    emit("")
    emit("| queue | id | may wait on | may signal | commands (opcode) | meaning |\n|---|---|---|---|---|---|")
    for q in spec.queues:
        wait, signal = spec.queue_masks(q["name"])
        commands = ", ".join(f"[{c['name']}](#{c['name'].lower()}) `{c['opcode']}`"
                             for c in sorted(spec.commands, key=lambda c: num(c["opcode"])) if c["queue"] == q["name"])
        emit(f"| {q['name']} | {q['id']} | `0x{wait:X}` | `0x{signal:X}` | {commands} | {q['doc']} |")
    emit("")
    emit("Every command has these fields in word 0; bits that no field of the command defines must be 0 "
         "(BAD_FIELD otherwise).\n")
    field_table(emit, spec.common)
    emit("## Commands\n")
    for c in spec.commands:
        emit(f"### {c['name']}\n")
        unit = {None: "", "none": ", no unit"}.get(c.get("unit"), f", {c.get('unit')} unit")
        emit(f"Opcode `{c['opcode']}`, {c['queue'].lower()} queue{unit}. {c['doc']}\n")
        if c["fields"]:
            field_table(emit, c["fields"])
    emit("## Parameter blocks\n")
    for pb in spec.param_blocks:
        emit(f"### {pb['name']}\n\n{pb['doc']}\n")
        if "table" in pb:
            continue
        items = pb.get("arrays", []) + pb.get("words", [])
        if any("min" in item for item in items):
            # A value outside its range is BAD_FIELD (the block's doc says when a range applies).
            emit("| index | name | range | meaning |\n|---|---|---|---|")
            for item in items:
                span = f"{item['min']}..{item['max']}".replace("-", "\u2212") if "min" in item else "any"
                emit(f"| {item['index']} | {item['name']} | {span} | {item['doc']} |")
        else:
            emit("| index | name | meaning |\n|---|---|---|")
            for item in items:
                emit(f"| {item['index']} | {item['name']} | {item['doc']} |")
        emit("")
    emit("## Rules every implementation follows\n")
    for rule in spec.raw.get("rules", []):
        emit(f"- {rule}")
    emit("")
    emit("## Registers\n")
    emit("32-bit registers on the AXI4-Lite slave; offsets in bytes.\n")
    register_table(emit, spec.registers)
    cnt = spec.counters
    emit(f"### Performance counters\n\n{cnt['doc']}\n")
    emit("| index | LO offset | name | meaning |\n|---|---|---|---|")
    base = num(cnt["base"])
    for i, c in enumerate(cnt["list"]):
        emit(f"| {i} | `0x{base + 8 * i:03X}` | {c['name']} | {c['doc']} |")
    emit("")
    hi = spec.hostif
    emit("## Host-interface block\n")
    emit(f"{hi['doc']} Windows: NPU registers at `{hi['csr_window']}`, host-interface block at "
         f"`{hi['hostif_window']}`, {hi['window_bits']} address bits decoded.\n")
    register_table(emit, hi["registers"])
    emit("## Error causes\n")
    emit("| code | name | meaning |\n|---|---|---|")
    for e in spec.errors:
        emit(f"| {e['code']} | {e['name']} | {e['doc']} |")
    return "\n".join(out) + "\n"


def field_table(emit, fields):
    """One row per word: each field as `name` [bits]: meaning, in bit order."""
    words = {}
    for f in fields:
        hi = f["lsb"] + f["width"] - 1
        bits = f"{hi}:{f['lsb']}" if f["width"] > 1 else f"{f['lsb']}"
        kind = ", signed" if f.get("signed") else ""
        enum = ""
        if "enum" in f:
            enum = " Values: " + ", ".join(f"{k} = {v}" for k, v in f["enum"].items()) + "."
        words.setdefault(f["word"], []).append((f["lsb"], f"`{f['name']}` [{bits}{kind}]: {f['doc']}{enum}"))
    emit("| word | fields |\n|---|---|")
    for word in sorted(words):
        emit(f"| {word} | " + "<br>".join(text for _, text in sorted(words[word])) + " |")
    emit("")


def register_table(emit, registers):
    emit("| offset | name | access | meaning | fields |\n|---|---|---|---|---|")
    for reg in registers:
        fields = ", ".join(
            f"{f['name']} [{f['lsb'] + f['width'] - 1}:{f['lsb']}]" if f["width"] > 1 else f"{f['name']} [{f['lsb']}]"
            for f in reg.get("fields", []))
        emit(f"| `{reg['offset']}` | {reg['name']} | {reg['access']} | {reg['doc']} | {fields} |")
    emit("")


def write_if_changed(path, text):
    path = pathlib.Path(path)
    if path.exists() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default=SPEC_DEFAULT)
    parser.add_argument("--header")
    parser.add_argument("--sv-package")
    parser.add_argument("--docs")
    parser.add_argument("--check-docs")
    args = parser.parse_args()
    spec = Spec(args.spec)
    if args.header:
        write_if_changed(args.header, c_header(spec))
    if args.sv_package:
        write_if_changed(args.sv_package, sv_package(spec))
    if args.docs:
        write_if_changed(args.docs, docs(spec))
    if args.check_docs:
        current = pathlib.Path(args.check_docs).read_text() if pathlib.Path(args.check_docs).exists() else ""
        if current != docs(spec):
            sys.exit(f"{args.check_docs} is out of date with rtl/spec/sable_isa.json: run "
                     f"`python3 rtl/spec/gen_isa.py --docs {args.check_docs}`")


if __name__ == "__main__":
    main()
