#!/usr/bin/env python3
"""ctests `regress.local` and `regress.slurm`: `sable regress` on a small plan.

    check_regress.py local --sable BIN --shared DIR --expected FILE --work DIR
    check_regress.py slurm --sable BIN --shared DIR --expected FILE --work DIR --cluster SCRIPT

local: the plan on 2 workers must pass (every corpus test of the expected-pass list it covers
passes, every random seed and the model); a bad plan is refused naming the field before anything
runs; --dry-run runs nothing; a hanging shard is reported as timed out with its log after one
resubmission; --merge DIR reproduces the merged report; an interrupt ends the run with 130 and
leaves no process behind.
slurm: brings up the one-node cluster (scripts/slurm-cluster.sh), runs the plan as a job array,
requires the merged result to equal the --local run's, checks that an interrupt cancels the job,
and stops the cluster whatever happens (exit 77 when Slurm or munge is not installed).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def write_plan(work, name, plan):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as fh:
        json.dump(plan, fh, indent=1)
    return path


def small_plan(shared):
    """A plan of every suite kind that runs in well under a minute on the functional model."""
    suites = [
        {"kind": "random", "first_seed": 1, "seeds": 6, "configurations": ["s16", "s8"]},
        {"kind": "models", "models": ["builtin:tiny_cnn"]},
    ]
    corpus = os.path.join(shared, "corpus")
    if os.path.isdir(corpus):
        suites.insert(0, {"kind": "corpus", "path": corpus, "filter": "^(add|relu|conv_2d|max_pool_2d|softmax)_"})
    else:
        print(f"note: no corpus at {corpus}: the plan has no corpus suite")
    return {"name": "ctest-small", "shard_size": 60, "timeout_seconds": 300, "backends": ["func"],
            "configurations": ["s16"], "suites": suites}


def run(command, **kwargs):
    started = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    return result, time.monotonic() - started


def read_merged(folder):
    with open(os.path.join(folder, "regress.json")) as fh:
        return json.load(fh)


def read_expected(path):
    with open(path) as fh:
        return {line.strip() for line in fh if line.strip() and not line.startswith("#")}


def run_plan(sable, plan, folder, mode):
    result, seconds = run([sable, "regress", plan, "--out", folder] + mode)
    print(f"$ sable regress {os.path.basename(plan)} {' '.join(mode)}: exit {result.returncode}, {seconds:.1f} s")
    print(result.stdout[-3000:])
    return result, seconds


def check_passing_run(merged, expected):
    """The small plan's merged report: complete, every covered expected test passed."""
    check(merged["incomplete_shards"] == 0, f"incomplete shards: {merged['incomplete']}")
    statuses = {}
    for test in merged["tests"]:
        statuses[(test["suite"], test["configuration"], test["name"])] = test["status"]
    random = [k for k in statuses if k[0] == "random"]
    check(len(random) == 12, f"6 seeds on s16 and s8 expected, got {len(random)}")
    for key in random:
        check(statuses[key] == "passed", f"{key}: {statuses[key]}")
    check(statuses.get(("models", "s16", "builtin:tiny_cnn")) == "passed", "builtin:tiny_cnn did not pass")
    corpus = [k for k in statuses if k[0] == "corpus"]
    regressions = [k[2] for k in corpus if k[2] in expected and statuses[k] != "passed"]
    check(not regressions, f"expected-pass corpus tests that did not pass: {regressions}")
    totals = merged["totals"]
    check(totals["passed"] + totals["failed"] + totals["skipped"] == len(merged["tests"]),
          "the totals do not add up to the tests listed")
    check(len(merged["failures"]) == totals["failed"], "one failure record per failed test expected")
    for failure in merged["failures"]:
        check(failure["command"], f"failure without a reproducing command: {failure}")
    return len(corpus)


def without_attempts(merged):
    """The merged report minus how many attempts each shard took (a resubmission is not a result)."""
    copy = json.loads(json.dumps(merged))
    for shard in copy["shard_list"] + copy["incomplete"]:
        shard.pop("attempts", None)
    return copy


def processes_mentioning(text):
    """Live processes whose command line mentions `text` or whose working folder is under it."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            folder = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if (text in command or folder.startswith(text)) and state != "Z":
            found.append(f"{pid}: {command}")
    return found


def interrupt_after(command, folder, seconds):
    """Starts `command`, waits until a shard runs (its log appears) and `seconds` more, sends SIGINT;
    returns the exit status and output."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    logs = os.path.join(folder, "logs")
    while time.monotonic() < deadline and process.poll() is None:
        if os.path.isdir(logs) and any(n.endswith(".log") for n in os.listdir(logs)):
            break
        time.sleep(0.1)
    time.sleep(seconds)
    process.send_signal(signal.SIGINT)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise Failure("sable regress did not end within 60 s of SIGINT")
    return process.returncode, output


def local_checks(a, work):
    sable = a.sable
    plan = write_plan(work, "small", small_plan(a.shared))
    expected = read_expected(a.expected)

    # A plan naming an unknown backend is refused, naming the field, and nothing is created.
    bad = write_plan(work, "bad", dict(small_plan(a.shared), backends=["func", "gpu"]))
    bad_folder = os.path.join(work, "bad-run")
    result, _ = run_plan(sable, bad, bad_folder, ["--local", "2"])
    check(result.returncode == 2, f"a bad plan: exit {result.returncode}, expected 2")
    check("plan.backends: unknown backend 'gpu'" in result.stdout, "the error does not name the field")
    check(not os.path.exists(bad_folder), "a refused plan created its folder")
    bad = write_plan(work, "bad2", {"name": "x", "suites": [{"kind": "random", "seeds": 2, "configurations": ["s99"]}]})
    result, _ = run_plan(sable, bad, bad_folder, ["--local", "1"])
    check(result.returncode == 2 and "suites[0].configurations: unknown configuration 's99'" in result.stdout,
          "an unknown configuration is not refused naming the field")

    # --dry-run lists the shards and runs nothing.
    dry_folder = os.path.join(work, "dry")
    result, _ = run_plan(sable, plan, dry_folder, ["--dry-run"])
    check(result.returncode == 0 and "ctest-small: " in result.stdout, "--dry-run failed")
    check(not os.path.exists(dry_folder), "--dry-run created the run's folder")

    folder = os.path.join(work, "local")
    result, seconds = run_plan(sable, plan, folder, ["--local", "2"])
    check(result.returncode in (0, 1), f"sable regress --local 2 exited with {result.returncode}")
    merged = read_merged(folder)
    corpus = check_passing_run(merged, expected)
    print(f"local: {len(merged['tests'])} tests ({corpus} corpus) in {merged['shards']} shards, {seconds:.1f} s")
    check(os.path.exists(os.path.join(folder, "regress.html")), "no regress.html")

    # --merge reproduces the report from the shards' results.
    with open(os.path.join(folder, "regress.json")) as fh:
        first = fh.read()
    result, _ = run([sable, "regress", "--merge", folder])
    with open(os.path.join(folder, "regress.json")) as fh:
        check(fh.read() == first, "--merge wrote a different report")

    # A shard that outlives the timeout is killed, resubmitted once, and reported as timed out
    # with its log, never as passed.
    hang = write_plan(work, "hang", {"name": "hang", "timeout_seconds": 0.2, "shard_size": 50,
                                     "suites": [{"kind": "random", "first_seed": 1, "seeds": 50}]})
    hang_folder = os.path.join(work, "hang")
    result, _ = run_plan(sable, hang, hang_folder, ["--local", "1"])
    check(result.returncode == 1, f"a timed-out shard: exit {result.returncode}, expected 1")
    merged = read_merged(hang_folder)
    check(merged["incomplete_shards"] == 1 and merged["totals"]["passed"] == 0, "the timed-out shard counted as run")
    shard = merged["incomplete"][0]
    check(shard["outcome"] == "timed out", f"outcome {shard['outcome']}, expected timed out")
    check(shard["attempts"] == 2, "a timed-out shard is resubmitted once")
    check(shard["log"] and os.path.exists(os.path.join(hang_folder, shard["log"])), "no log of the timed-out shard")
    check("SHARD 0 timed out" in result.stdout, "the timed-out shard is not printed")
    check(not processes_mentioning(hang_folder), "processes of the timed-out shard are left")

    # A shard whose command dies of a signal (here SIGSEGV sent from outside, on both attempts) is
    # reported as crashed with its log, never as passed.
    crash = write_plan(work, "crash", {"name": "crash", "shard_size": 400,
                                       "suites": [{"kind": "random", "first_seed": 1, "seeds": 400}]})
    crash_folder = os.path.join(work, "crash")
    process = subprocess.Popen([sable, "regress", crash, "--out", crash_folder, "--local", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    seen = {}
    while process.poll() is None and time.monotonic() < deadline:
        for entry in processes_mentioning(crash_folder):
            pid, command = entry.split(": ", 1)
            if "umd_compiler_random_graph_test" not in command:
                continue
            # A second in, once it has started its device server (killed while starting one, it
            # would leave the shim's spawn lock file in /dev/shm).
            first = seen.setdefault(pid, time.monotonic())
            if time.monotonic() - first > 1.0:
                os.kill(int(pid), signal.SIGSEGV)
        time.sleep(0.05)
    output, _ = process.communicate(timeout=60)
    print(output[-2000:])
    check(process.returncode == 1, f"a crashed shard: exit {process.returncode}, expected 1")
    merged = read_merged(crash_folder)
    shard = merged["incomplete"][0] if merged["incomplete"] else {}
    check(shard.get("outcome") == "crashed" and shard.get("attempts") == 2,
          f"the shard is not reported as crashed after two attempts: {shard}")
    check("killed by signal 11" in shard["message"], f"the signal is not named: {shard['message']}")
    check(merged["totals"]["passed"] == 0 and merged["totals"]["not_run"] == 400, "a crashed shard's seeds counted")

    # An interrupt kills the workers and their commands.
    long_plan = write_plan(work, "long", {"name": "long", "shard_size": 5,
                                          "suites": [{"kind": "random", "first_seed": 1, "seeds": 400}]})
    long_folder = os.path.join(work, "interrupted")
    status, output = interrupt_after([sable, "regress", long_plan, "--out", long_folder, "--local", "2"],
                                     long_folder, 1.0)
    check(status == 130, f"interrupted run: exit {status}, expected 130\n{output[-2000:]}")
    time.sleep(0.5)
    left = processes_mentioning(long_folder)
    check(not left, f"processes left after the interrupt: {left}")
    return merged


def slurm_checks(a, work):
    env = dict(os.environ, SABLE_SLURM_DIR=os.path.join(work, "cluster"))
    started = subprocess.run([a.cluster, "start"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    print(started.stdout)
    if started.returncode == SKIP:
        return SKIP
    try:
        check(started.returncode == 0, f"the cluster did not start (exit {started.returncode})")
        env["SLURM_CONF"] = os.path.join(env["SABLE_SLURM_DIR"], "slurm.conf")
        os.environ.update(SLURM_CONF=env["SLURM_CONF"])
        plan = write_plan(work, "small", small_plan(a.shared))
        slurm_folder = os.path.join(work, "slurm")
        result, slurm_seconds = run_plan(a.sable, plan, slurm_folder, ["--slurm", "--partition", "regress"])
        check(result.returncode in (0, 1), f"sable regress --slurm exited with {result.returncode}")
        local_folder = os.path.join(work, "local")
        result, local_seconds = run_plan(a.sable, plan, local_folder, ["--local", "2"])
        check(result.returncode in (0, 1), f"sable regress --local 2 exited with {result.returncode}")
        slurm, local = read_merged(slurm_folder), read_merged(local_folder)
        check_passing_run(slurm, read_expected(a.expected))
        check(without_attempts(slurm) == without_attempts(local), "the Slurm run's merged result differs from --local's")
        print(f"slurm: {len(slurm['tests'])} tests, same as --local 2; {slurm_seconds:.1f} s (local {local_seconds:.1f} s)")

        # An interrupt cancels the job array.
        long_plan = write_plan(work, "long", {"name": "long", "shard_size": 5,
                                              "suites": [{"kind": "random", "first_seed": 1, "seeds": 400}]})
        long_folder = os.path.join(work, "slurm-interrupted")
        status, output = interrupt_after([a.sable, "regress", long_plan, "--out", long_folder, "--slurm"],
                                         long_folder, 1.0)
        check(status == 130, f"interrupted Slurm run: exit {status}, expected 130\n{output[-2000:]}")
        check("cancelled Slurm job" in output, "the interrupt did not say it cancelled the job")
        deadline = time.monotonic() + 30
        queued = "?"
        while time.monotonic() < deadline:
            queued = subprocess.run(["squeue", "--noheader"], stdout=subprocess.PIPE, text=True, env=env).stdout.strip()
            if not queued:
                break
            time.sleep(0.5)
        check(not queued, f"jobs left in the queue after the interrupt: {queued}")
        return 0
    finally:
        stopped = subprocess.run([a.cluster, "stop"], env=env)
        if stopped.returncode != 0:
            print(f"warning: stopping the cluster exited with {stopped.returncode}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["local", "slurm"])
    ap.add_argument("--sable", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cluster", help="scripts/slurm-cluster.sh")
    a = ap.parse_args()
    # ctest's timeout sends SIGTERM: end through the `finally` that stops the cluster.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    try:
        if a.mode == "local":
            local_checks(a, a.work)
            status = 0
        else:
            status = slurm_checks(a, a.work)
    except Failure as failure:
        print(f"FAIL: {failure}")
        return 1
    if status == SKIP:
        return SKIP
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
