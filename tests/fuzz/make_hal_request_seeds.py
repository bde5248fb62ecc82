#!/usr/bin/env python3
"""Writes the seeds of the HAL request fuzz target (tests/fuzz/hal_request/) in the layout of
hal_request_input.h: a valid request of the [2, 3] ADD on every execution path, the dynamic model
with its output's shape given, left unknown and too short, driver-managed buffers as an input and
as the output, fenced executions waiting for a fence (signalled, and with an error), deadlines and
the burst forgetting a slot. Run by scripts/fuzz.sh --regenerate-seeds."""
import struct
import sys
from pathlib import Path

PATHS = ["execute", "execute_1_2", "execute_sync", "execute_1_3", "execute_sync_1_3", "fenced", "burst"]


def arg(pool, offset, length, dims=None, no_value=False):
    flags = (1 if no_value else 0) | (2 if dims is not None else 0)
    out = struct.pack("<BBHH", flags, pool, offset, length)
    if dims is not None:
        out += struct.pack("<B", len(dims)) + bytes(dims)
    return out


def seed(path, model=0, flags=0, pools=((0, 18),), inputs=None, outputs=None, data=bytes(range(1, 13))):
    out = struct.pack("<BBBB", path, model, flags, len(pools))
    for kind, n in pools:
        out += struct.pack("<BH", kind, n)
    inputs = inputs if inputs is not None else [arg(0, 0, 6), arg(0, 6, 6)]
    outputs = outputs if outputs is not None else [arg(0, 12, 6)]
    out += struct.pack("<B", len(inputs)) + b"".join(inputs)
    out += struct.pack("<B", len(outputs)) + b"".join(outputs)
    return out + data


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.bin"):
        old.unlink()
    dynamic_inputs = [arg(0, 0, 6, [2, 3]), arg(0, 6, 6, [2, 3])]
    seeds = {f"{name}": seed(i, flags=1) for i, name in enumerate(PATHS)}
    seeds.update({
        "dynamic_output_shape_given": seed(3, model=1, inputs=dynamic_inputs, outputs=[arg(0, 12, 6, [2, 3])]),
        "dynamic_output_shape_unknown": seed(4, model=1, inputs=dynamic_inputs, outputs=[arg(0, 12, 6)]),
        "dynamic_output_too_short": seed(3, model=1, inputs=dynamic_inputs, outputs=[arg(0, 12, 3)]),
        "dynamic_burst": seed(6, model=1, flags=0x80, inputs=dynamic_inputs, outputs=[arg(0, 12, 6, [2, 3])]),
        # pool 1: a driver-managed buffer of the role input 0 (output 0), its dimensions the model's, filled
        # from 6 bytes (n = 6 << 4), addressed whole
        "buffer_input": seed(3, pools=((0, 18), (1, 6 << 4)), inputs=[arg(1, 0, 0), arg(0, 6, 6)]),
        "buffer_output": seed(4, pools=((0, 18), (2, 6 << 4)), outputs=[arg(1, 0, 0)]),
        "buffer_output_fenced": seed(5, pools=((0, 18), (2, 6 << 4)), outputs=[arg(1, 0, 0)]),
        "fenced_after_fence": seed(5, flags=0x20),
        "fenced_after_failed_fence": seed(5, flags=0x60),
        "deadline_passed": seed(3, flags=2),
        "deadline_in_a_second": seed(5, flags=4),
        "omitted_input": seed(4, inputs=[arg(0, 0, 0, no_value=True), arg(0, 6, 6)]),
    })
    for name, data in seeds.items():
        (out / f"{name}.bin").write_bytes(data)
    print(f"make_hal_request_seeds: {len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "hal_request")
