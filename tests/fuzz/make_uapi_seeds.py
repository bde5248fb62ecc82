#!/usr/bin/env python3
"""Writes the seeds of the UAPI fuzz target (tests/fuzz/uapi/) in the layout of uapi_input.h: the
request sequences a well-behaved client sends (create objects, register a signed copy program,
submit, wait, query, release, free), two clients at once with refused cross-client requests, a
device reset between jobs, rejected registrations, and clients that close with work pending.
Run by scripts/fuzz.sh --regenerate-seeds; keep the operation numbers in step with UapiOp."""
import struct
import sys
from pathlib import Path

(BO_CREATE, BO_FREE, BO_GET, BO_WRITE, PROGRAM_REGISTER, PROGRAM_RELEASE, JOB_SUBMIT, FENCE_WAIT, FENCE_QUERY,
 JOB_STATUS, FENCE_RELEASE, RESET) = range(12)


def req(op, a=0, b=0, c=0, v=0):
    return struct.pack("<BBBBI", op, a, b, c, v)


def client_copy(client, lines=8, wait=True, release=True):
    """Objects 0 (stream), 1 (input), 2 (output) of `client`, a copy of `lines` lines 1 → 2."""
    a = client
    seq = [req(BO_CREATE, a, 0, 0, 4096), req(BO_CREATE, a, 0, 0, 4096), req(BO_CREATE, a, 0, 0, 8192),
           req(BO_WRITE, a, 1, 200, 0), req(PROGRAM_REGISTER, a, lines, 0, 0), req(JOB_SUBMIT, a, 0, 0x21, 0)]
    if wait:
        seq += [req(FENCE_WAIT, a, 0, 49), req(FENCE_QUERY, a, 0), req(JOB_STATUS, a, 0)]
    if release:
        seq += [req(FENCE_RELEASE, a, 0), req(PROGRAM_RELEASE, a, 0, 1), req(BO_FREE, a, 2), req(BO_FREE, a, 1),
                req(BO_FREE, a, 0)]
    return seq


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.bin"):
        old.unlink()
    seeds = {
        "copy": client_copy(0),
        "copy_16_lines": client_copy(0, lines=16),
        "two_clients": client_copy(0, release=False) + client_copy(1, release=False) + [
            # client 1 uses client 0's object, program and fence: all refused
            req(BO_GET, 1 | 2, 1), req(BO_FREE, 1 | 2, 1), req(JOB_SUBMIT, 1 | 2, 0, 0x21),
            req(FENCE_WAIT, 1 | 2, 0, 1), req(JOB_STATUS, 1 | 2, 0), req(FENCE_RELEASE, 1 | 2, 0),
            req(PROGRAM_RELEASE, 1 | 2, 0)],
        "reset_between_jobs": client_copy(0, release=False) + [
            req(RESET), req(JOB_SUBMIT, 0, 0, 0x21), req(PROGRAM_RELEASE, 0, 0),
            req(PROGRAM_REGISTER, 0, 4, 0, 0), req(JOB_SUBMIT, 0, 0, 0x21), req(FENCE_WAIT, 0, 1, 49),
            req(JOB_STATUS, 0, 1)],
        "rejected_registrations": [
            req(BO_CREATE, 0, 0, 0, 4096), req(PROGRAM_REGISTER, 0, 8, 1, 0), req(PROGRAM_REGISTER, 0, 8, 2, 0),
            req(PROGRAM_REGISTER, 0, 0, 0, 0), req(PROGRAM_REGISTER, 0, 8, 4, 0x10025),
            req(PROGRAM_REGISTER, 0 | 16, 8, 0, 7), req(BO_CREATE, 1, 0, 0, 4096),
            req(PROGRAM_REGISTER, 1, 8, 8, 0)],
        "closed_with_jobs_pending": client_copy(0, lines=16, wait=False, release=False) + [
            req(JOB_SUBMIT, 0 | 32, 0, 0x21, 3 << 24), req(JOB_SUBMIT, 0 | 128, 0, 0x21, 10)],
        "bad_buffer_tables": client_copy(0, wait=False, release=False) + [
            req(JOB_SUBMIT, 0 | 8, 0, 0x21, (1 << 8) | (0 << 1)), req(JOB_SUBMIT, 0 | 8, 0, 0x21, (99999 << 8) | (1 << 1)),
            req(JOB_SUBMIT, 0 | 8, 0, 0x21, (5 << 8) | (2 << 1) | 1), req(JOB_SUBMIT, 0 | 16, 0, 0x21, 1 << 3),
            req(JOB_SUBMIT, 0 | 64, 0, 0x21), req(JOB_SUBMIT, 0 | 4, 0, 0x21, 12345)],
    }
    for name, seq in seeds.items():
        (out / f"{name}.bin").write_bytes(b"".join(seq))
    print(f"make_uapi_seeds: {len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "uapi")
