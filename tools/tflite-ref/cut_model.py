#!/usr/bin/env python3
"""Cuts a .tflite model down to a run of its operators, to find where Sable and TFLite part
(scripts/compare-tflite.sh on each piece, docs/tflite.md):

    cut_model.py MODEL.tflite OUT.tflite FIRST LAST

OUT runs operators FIRST..LAST (subgraph 0, in the file's order) only: its input is FIRST's input 0
and its output LAST's output 0 (with FIRST = LAST, one operator on its own; an operator whose other
inputs are activations written earlier cannot be cut out so). The copy is patched in place: the
operators vector is shortened and its offsets moved, the subgraph's inputs and outputs vectors get
one element (a vector is never lengthened), so every other byte stays where it was."""
import struct
import sys


class Flatbuffer:
    def __init__(self, data):
        self.b = bytearray(data)

    def u32(self, p):
        return struct.unpack_from("<I", self.b, p)[0]

    def i32(self, p):
        return struct.unpack_from("<i", self.b, p)[0]

    def field(self, table, i):
        vtable = table - self.i32(table)
        size = struct.unpack_from("<H", self.b, vtable)[0]
        offset = struct.unpack_from("<H", self.b, vtable + 4 + 2 * i)[0] if 4 + 2 * i < size else 0
        return table + offset if offset else None

    def vector(self, table, i):
        """(position of element 0, length) of vector field i; (0, 0) when absent."""
        p = self.field(table, i)
        if p is None:
            return 0, 0
        v = p + self.u32(p)
        return v + 4, self.u32(v)

    def table_at(self, vector, k):
        p = vector[0] + 4 * k
        return p + self.u32(p)


def cut(data, first, last):
    fb = Flatbuffer(data)
    if len(data) < 8 or bytes(data[4:8]) != b"TFL3":
        raise ValueError("not a TFLite file (no TFL3 identifier)")
    subgraph = fb.table_at(fb.vector(fb.u32(0), 2), 0)
    operators = fb.vector(subgraph, 3)
    if not 0 <= first <= last < operators[1]:
        raise ValueError(f"operators {first}..{last}: the model has {operators[1]} (0..{operators[1] - 1})")
    first_op, last_op = fb.table_at(operators, first), fb.table_at(operators, last)
    ins, outs = fb.vector(first_op, 1), fb.vector(last_op, 2)
    if ins[1] == 0 or outs[1] == 0:
        raise ValueError("the first operator has no input or the last no output")
    model_input, model_output = fb.i32(ins[0]), fb.i32(outs[0])
    for i, k in enumerate(range(first, last + 1)):  # offsets are relative to their own position
        old, new = operators[0] + 4 * k, operators[0] + 4 * i
        struct.pack_into("<I", fb.b, new, old + fb.u32(old) - new)
    struct.pack_into("<I", fb.b, operators[0] - 4, last - first + 1)
    for i, tensor in ((1, model_input), (2, model_output)):
        v = fb.vector(subgraph, i)
        if v[1] == 0:
            raise ValueError("the subgraph has no inputs or outputs vector to rewrite")
        struct.pack_into("<I", fb.b, v[0] - 4, 1)
        struct.pack_into("<i", fb.b, v[0], tensor)
    return bytes(fb.b), model_input, model_output


def main():
    if len(sys.argv) != 5:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    try:
        first, last = int(sys.argv[3]), int(sys.argv[4])
        with open(sys.argv[1], "rb") as f:
            out, model_input, model_output = cut(f.read(), first, last)
    except (OSError, ValueError, struct.error) as e:
        print(f"cut_model: {e}", file=sys.stderr)
        return 2
    with open(sys.argv[2], "wb") as f:
        f.write(out)
    print(f"{sys.argv[2]}: operators {first}..{last}, input tensor {model_input}, output tensor {model_output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
