#!/usr/bin/env python3
"""One device server for two `sable` processes (docs/device-lifetime.md, "Lifetime" and "Recovery").

two-terminals: `sable run builtin:mobilenet_v1 --device sable-npu` starts sable-simd; while it
runs, `sable conformance CORPUS --device sable-npu --filter FILTER` attaches to that server. The
run exits first: the conformance must lose no test, and its server must be the run's to the end.

server-killed: under a running `sable conformance`, its server is SIGKILLed: the tests in flight
fail (DEVICE_UNAVAILABLE), the next ones restart a server and pass.

Usage: shared_server_test.py MODE SABLE SABLE_SIMD CORPUS FILTER
Exit 77 (skipped) when CORPUS does not exist.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def server_pid(device):
    """The pid in the device's lock file while a live server holds it, else 0."""
    try:
        with open(f"/dev/shm/sable.{device}.lock") as lock:
            pid = int(lock.read().strip() or 0)
    except (OSError, ValueError):
        return 0
    if pid <= 0:
        return 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return 0
    return pid


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    fail(f"timed out after {seconds} s waiting for {what}")


def summary(output):
    """(passed, failed, skipped) from the conformance's summary line (its last: progress lines say the same)."""
    matches = re.findall(r"(\d+) passed, (\d+) failed, (\d+) skipped", output)
    if not matches:
        fail(f"no summary line in the conformance's output:\n{output[-2000:]}")
    return tuple(int(n) for n in matches[-1])


def leftovers(device):
    return [name for name in os.listdir("/dev/shm") if name.startswith(f"sable.{device}.")]


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    mode, sable, simd, corpus, test_filter = sys.argv[1:]
    if not os.path.isdir(corpus):
        print(f"SKIP: no conformance corpus at {corpus}")
        return 77
    device = f"shared-{mode}-{os.getpid()}"
    env = dict(os.environ)
    # A long idle time: on a loaded machine the run may spend more than the default 10 s compiling
    # without a connection, and the server must still be the run's when the conformance attaches
    # (the test stops it at the end).
    env.update({"SABLE_SIMD": simd, "SABLE_DEVICE": device, "SABLE_SIMD_ARGS": "--memory-mib 64 --exit-when-idle 120"})
    logs = tempfile.mkdtemp(prefix="sable-shared-server-")
    conformance_cmd = [sable, "conformance", corpus, "--device", "sable-npu", "--filter", test_filter, "--verbose"]

    if mode == "two-terminals":
        run_out = open(os.path.join(logs, "run.txt"), "w+")
        run = subprocess.Popen([sable, "run", "builtin:mobilenet_v1", "--device", "sable-npu"], env=env,
                               stdout=run_out, stderr=subprocess.STDOUT)
        started = wait_for(lambda: server_pid(device) or (run.poll() is not None and -1), 60,
                           "the run to start sable-simd")
        if started < 0:
            run_out.seek(0)
            fail(f"the run exited before a server was seen:\n{run_out.read()}")
        conformance = subprocess.Popen(conformance_cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
        run_status = run.wait(timeout=600)
        conformance_running = conformance.poll() is None
        output, _ = conformance.communicate(timeout=900)
        run_out.seek(0)
        if run_status != 0:
            fail(f"the run exited with {run_status}:\n{run_out.read()}")
        if not conformance_running:
            fail("the conformance ended before the run: the scenario was not exercised (choose a longer --filter)")
        passed, failed, skipped = summary(output)
        print(f"conformance: {passed} passed, {failed} failed, {skipped} skipped; the run exited while it ran")
        if failed != 0 or conformance.returncode != 0:
            fail(f"the conformance lost tests when the run exited:\n{output[-4000:]}")
        if passed == 0:
            fail("no conformance test ran on the NPU")
        if "started sable-simd" in output:
            fail(f"the conformance started a server of its own: the run's server was not shared:\n{output[-2000:]}")
        if server_pid(device) != started:
            fail(f"the run's server (pid {started}) did not serve the conformance to the end")
    elif mode == "server-killed":
        # Line-buffered, so that each test's verdict arrives as it is decided.
        conformance = subprocess.Popen(["stdbuf", "-oL"] + conformance_cmd, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)
        lines = []
        first = 0
        for line in conformance.stdout:
            lines.append(line)
            # The server is killed once a few tests have passed on it: the next ones are in flight.
            if not first and sum(1 for l in lines if l.startswith("passed")) >= 5:
                first = server_pid(device)
                if not first:
                    fail("no server while the conformance runs")
                os.kill(first, signal.SIGKILL)
        conformance.wait(timeout=900)
        output = "".join(lines)
        if not first:
            fail(f"the conformance ended before its server could be killed (choose a longer --filter):\n{output[-2000:]}")
        passed, failed, skipped = summary(output)
        restarted = output.count("started sable-simd")
        print(f"conformance: {passed} passed, {failed} failed, {skipped} skipped; server pid {first} "
              f"SIGKILLed, {restarted - 1} restart(s)")
        failures = [line for line in output.splitlines() if line.startswith("FAILED")]
        print("\n".join(failures))
        # The tests in flight when the server died: the conformance runs one at a time.
        if failed > 1:
            fail(f"{failed} tests failed after one server kill (at most the one in flight may):\n" +
                 "\n".join(failures))
        if restarted < 2:
            fail(f"no server was started again after the kill:\n{output[-2000:]}")
        if passed == 0:
            fail("no conformance test passed")
    else:
        print(__doc__)
        return 2

    # The last server, stopped, leaves nothing in /dev/shm.
    last = server_pid(device)
    if last:
        os.kill(last, signal.SIGTERM)
    wait_for(lambda: not server_pid(device), 30, "the server to exit")
    wait_for(lambda: not leftovers(device), 10, f"/dev/shm to be clean: {leftovers(device)}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
