// `sable regress PLAN.json [--local N | --slurm [--partition P] | --dry-run] [--out DIR]` and
// `sable regress --merge DIR`: runs a regression plan as shards (regress.h) on worker processes of
// this machine or as one Slurm job array, resubmits the shards that did not complete once, and
// merges their results into DIR/regress.json and DIR/regress.html. docs/regress.md.
//
// Every shard, local or on Slurm, runs through `sable regress --run-shard ID --out DIR`: it starts
// the shard's command in a process group of its own with a device name of its own (so each task
// has its own sable-simd), kills the group when the plan's timeout passes, and writes
// DIR/results/ID.json. Local and Slurm runs thus produce their results the same way.
//
// Exit status: 0 every test passed, 1 failures or shards that did not complete, 2 usage and plan
// errors, 130 interrupted (Slurm jobs cancelled, workers killed).
#include <fcntl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>
#include <cmath>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "progress.h"
#include "regress.h"
#include "sable/isa.h"

namespace sable::tools {
namespace {

namespace fs = std::filesystem;
using namespace regress;
using Json = nlohmann::json;

constexpr int kExitFailures = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;
// How long a shard's command has to end after SIGTERM before it is killed.
constexpr double kTerminateGraceSeconds = 5;

struct RegressArgs {
  std::string plan;
  size_t local = 0;
  bool slurm = false;
  std::string partition;
  bool dryRun = false;
  std::string merge;
  std::string out;
  long runShard = -1;  // internal: the shard a worker or Slurm task runs
  int attempt = 1;
};

volatile std::sig_atomic_t gInterrupted = 0;
void onInterrupt(int) { gInterrupted = 1; }

// SIGINT, SIGTERM (Slurm's scancel, a CI's timeout) and SIGHUP end a run in order: the shards'
// process groups are killed and Slurm jobs cancelled instead of left running.
void catchInterrupts() {
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void sleepSeconds(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

fs::path selfExecutable() {
  std::error_code error;
  return fs::read_symlink("/proc/self/exe", error);
}

// The run's folder: what the shards are, and where their outputs, logs and results go.
struct RunFolder {
  fs::path dir;
  fs::path shardsFile() const { return dir / "shards.json"; }
  fs::path resultFile(size_t id) const { return dir / "results" / fmt::format("{}.json", id); }
  std::string logName(size_t id, int attempt) const { return fmt::format("logs/{}.attempt{}.log", id, attempt); }
};

struct RunDescription {
  std::string planName;
  double timeoutSeconds = 0;
  std::vector<Shard> shards;
};

hal::Result<void> writeFileAtomically(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + fmt::format(".tmp{}", getpid());
  {
    std::ofstream out(temporary);
    out << text;
    if (!out.flush()) return hal::generalFailure("cannot write '{}'", temporary.string());
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) return hal::generalFailure("cannot rename '{}': {}", temporary.string(), error.message());
  return {};
}

hal::Result<void> writeRun(const RunFolder& run, const RunDescription& description) {
  std::error_code error;
  for (const char* sub : {"output", "logs", "results"}) {
    fs::create_directories(run.dir / sub, error);
    if (error) return hal::invalidArgument("cannot create '{}': {}", (run.dir / sub).string(), error.message());
  }
  Json shards = Json::array();
  for (const auto& shard : description.shards) shards.push_back(toJson(shard));
  Json json = {{"plan", description.planName}, {"timeout_seconds", description.timeoutSeconds}, {"shards", shards}};
  return writeFileAtomically(run.shardsFile(), json.dump(1));
}

hal::Result<RunDescription> readRun(const RunFolder& run) {
  std::ifstream in(run.shardsFile());
  if (!in) return hal::invalidArgument("'{}' is not the folder of a regress run (no shards.json)", run.dir.string());
  Json json = Json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.contains("shards")) {
    return hal::invalidArgument("'{}' is malformed", run.shardsFile().string());
  }
  RunDescription description;
  description.planName = json.value("plan", "");
  description.timeoutSeconds = json.value("timeout_seconds", 1800.0);
  for (const auto& entry : json["shards"]) {
    auto shard = shardFromJson(entry);
    if (!shard.ok()) return std::move(shard).error();
    if (shard->id != description.shards.size()) return hal::invalidArgument("shards.json: shard ids out of order");
    description.shards.push_back(std::move(*shard));
  }
  return description;
}

std::optional<ShardResult> readResult(const RunFolder& run, size_t id) {
  std::ifstream in(run.resultFile(id));
  if (!in) return std::nullopt;
  Json json = Json::parse(in, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  auto result = shardResultFromJson(json);
  if (!result.ok()) return std::nullopt;
  return std::move(*result);
}

// The last `lines` lines of a file.
std::string fileTail(const fs::path& path, size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  return fmt::format("{}", fmt::join(tail, "\n"));
}

// Device servers started by a shard's command detach from it (setsid; docs/device-lifetime.md "Lifetime")
// and would serve on, idle, for a while after the shard: they are found by the marker the shard's
// environment carries (a server inherits its client's environment) and stopped, so that a shard
// leaves nothing running whichever way it ended.
constexpr const char* kShardMarker = "SABLE_REGRESS_SHARD";

std::vector<pid_t> processesMarked(const std::string& marker) {
  std::vector<pid_t> found;
  const std::string entry = std::string(kShardMarker) + "=" + marker;
  std::error_code error;
  for (const auto& process : fs::directory_iterator("/proc", error)) {
    const std::string name = process.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream environ(process.path() / "environ", std::ios::binary);
    for (std::string variable; std::getline(environ, variable, '\0');) {
      if (variable == entry) {
        found.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
    }
  }
  return found;
}

void stopMarkedProcesses(const std::string& marker) {
  auto marked = processesMarked(marker);
  if (!marked.empty()) {
    for (pid_t pid : marked) kill(pid, SIGTERM);
    for (int waited = 0; waited < 40 && !(marked = processesMarked(marker)).empty(); ++waited) sleepSeconds(0.05);
    for (pid_t pid : marked) kill(pid, SIGKILL);
  }
  // Reaps what was inherited (see runShard's subreaper; the command itself is reaped already),
  // waiting a little for those just killed; an inherited process still alive then is left to init.
  for (int waited = 0; waited < 40; ++waited) {
    const pid_t reaped = waitpid(-1, nullptr, WNOHANG);
    if (reaped < 0) break;  // no child left
    if (reaped == 0) sleepSeconds(0.05);
  }
}

// --- one shard ---------------------------------------------------------------------------------

int runShard(const RunFolder& run, size_t id, int attempt) {
  auto description = readRun(run);
  if (!description.ok()) {
    std::cerr << "sable regress: " << description.error().message << "\n";
    return kExitUsage;
  }
  if (id >= description->shards.size()) {
    std::cerr << "sable regress: no shard " << id << " in " << run.shardsFile().string() << "\n";
    return kExitUsage;
  }
  catchInterrupts();
  // The servers the command starts detach (double fork): as a subreaper this process inherits
  // them rather than an init that may not reap (a container's), and reaps them once stopped.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const Shard& shard = description->shards[id];
  ShardResult result;
  result.id = id;
  result.attempt = attempt;
  result.log = run.logName(id, attempt);
  const fs::path log = run.dir / result.log;
  const fs::path output = run.dir / shard.output;
  std::error_code error;
  fs::remove(output, error);
  // The device name is this process's: unique on the node, whichever worker or task runs it.
  const std::string device = fmt::format("regress-{}-{}", getpid(), id);

  std::vector<std::string> environment;
  for (const auto& [name, value] : shard.environment) environment.push_back(name + "=" + value);
  environment.push_back("SABLE_DEVICE=" + device);
  environment.push_back(std::string(kShardMarker) + "=" + device);
  const int logFd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (logFd < 0) {
    std::cerr << "sable regress: cannot write " << log.string() << ": " << std::strerror(errno) << "\n";
    return kExitUsage;
  }
  const std::string header = fmt::format("# shard {} attempt {} on device {}\n# {}\n", id, attempt, device,
                                         shellCommand(shard.environment, shard.argv));
  [[maybe_unused]] const ssize_t headerBytes = write(logFd, header.data(), header.size());
  std::vector<char*> argv;
  std::vector<std::string> words = shard.argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  const double start = now();
  const pid_t child = fork();
  if (child < 0) {
    std::cerr << "sable regress: fork: " << std::strerror(errno) << "\n";
    return kExitUsage;
  }
  if (child == 0) {
    // Its own process group: a timeout or an interrupt kills the command with every process it
    // started (its sable-simd).
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (chdir(run.dir.c_str()) != 0) _exit(126);
    dup2(logFd, STDOUT_FILENO);
    dup2(logFd, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    for (auto& assignment : environment) putenv(assignment.data());
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "sable regress: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(child, child);  // also here: no race with the kill below
  close(logFd);

  int status = 0;
  bool timedOut = false;
  double terminatedAt = -1;
  while (true) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (gInterrupted) {
      kill(-child, SIGKILL);
      waitpid(child, &status, 0);
      stopMarkedProcesses(device);
      return kExitInterrupted;
    }
    const double elapsed = now() - start;
    if (terminatedAt < 0 && elapsed > description->timeoutSeconds) {
      timedOut = true;
      terminatedAt = elapsed;
      kill(-child, SIGTERM);
    } else if (terminatedAt >= 0 && elapsed > terminatedAt + kTerminateGraceSeconds) {
      kill(-child, SIGKILL);
    }
    sleepSeconds(0.05);
  }
  // Whatever the command left in its group (a server that ignored its parent's end) goes too.
  kill(-child, SIGKILL);
  stopMarkedProcesses(device);
  result.seconds = now() - start;

  const std::string tail = fileTail(log, 20);
  if (timedOut) {
    result.outcome = Outcome::kTimedOut;
    result.message = fmt::format("still running after the plan's timeout of {:g} s: killed", description->timeoutSeconds);
  } else if (WIFSIGNALED(status)) {
    result.outcome = Outcome::kCrashed;
    result.message = fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (WEXITSTATUS(status) > 1) {
    result.outcome = Outcome::kFailed;
    result.message = fmt::format("exited with status {}", WEXITSTATUS(status));
  } else {
    std::optional<Json> outputJson;
    if (std::ifstream in(output); in) {
      Json parsed = Json::parse(in, nullptr, false);
      if (!parsed.is_discarded()) outputJson = std::move(parsed);
    }
    auto tests = readShardOutput(shard, WEXITSTATUS(status), outputJson, tail);
    if (tests.ok()) {
      result.outcome = Outcome::kCompleted;
      result.tests = std::move(*tests);
    } else {
      result.outcome = Outcome::kFailed;
      result.message = tests.error().message;
    }
  }
  if (result.outcome != Outcome::kCompleted && !tail.empty()) result.message += "; the log ends:\n" + tail;
  if (auto written = writeFileAtomically(run.resultFile(id), toJson(result).dump(1)); !written.ok()) {
    std::cerr << "sable regress: " << written.error().message << "\n";
    return kExitUsage;
  }
  return 0;
}

// --- running shards: workers of this machine, or a Slurm job array -----------------------------

// Counts what the results so far say, for the progress line.
struct Tally {
  uint64_t failedTests = 0, incomplete = 0;
  void add(const std::optional<ShardResult>& result) {
    if (!result || result->outcome != Outcome::kCompleted) {
      ++incomplete;
      return;
    }
    for (const auto& test : result->tests) failedTests += test.status != "passed" && test.status != "skipped";
  }
  std::string detail() const { return fmt::format("{} failed tests, {} incomplete shards", failedTests, incomplete); }
};

// Runs `ids` on `workers` processes (`sable regress --run-shard`), each in its own process group.
// false when interrupted (the workers are killed).
bool runLocally(const RunFolder& run, const std::vector<size_t>& ids, int attempt, size_t workers,
                ProgressReporter& progress, uint64_t& done, Tally& tally) {
  const std::string self = selfExecutable().string();
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < ids.size() || !running.empty()) {
    if (gInterrupted) {
      for (const auto& [pid, id] : running) kill(-pid, SIGTERM);
      for (const auto& [pid, id] : running) waitpid(pid, nullptr, 0);
      return false;
    }
    while (next < ids.size() && running.size() < workers) {
      const std::vector<std::string> words = {self, "regress", "--out", run.dir.string(), "--run-shard",
                                              std::to_string(ids[next]), "--attempt", std::to_string(attempt)};
      const pid_t pid = fork();
      if (pid == 0) {
        setpgid(0, 0);
        std::vector<char*> argv;
        std::vector<std::string> copy = words;
        for (auto& word : copy) argv.push_back(word.data());
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
      }
      if (pid < 0) {
        std::cerr << "sable regress: fork: " << std::strerror(errno) << "\n";
        break;
      }
      setpgid(pid, pid);
      running[pid] = ids[next++];
    }
    int status = 0;
    const pid_t ended = waitpid(-1, &status, WNOHANG);
    if (ended > 0 && running.count(ended)) {
      tally.add(readResult(run, running[ended]));
      running.erase(ended);
      progress.update(++done, tally.detail());
      continue;
    }
    sleepSeconds(0.05);
    progress.update(done, tally.detail());
  }
  return true;
}

// Runs a shell command, returning its exit status and standard output.
std::pair<int, std::string> capture(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string trim(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// Submits `ids` as one job array (each task `sable regress --run-shard $SLURM_ARRAY_TASK_ID`) and
// waits for it to leave the queue. false when submitting failed or the run was interrupted (the
// job is cancelled); `error` says which.
bool runOnSlurm(const RunFolder& run, const RunDescription& description, const std::vector<size_t>& ids, int attempt,
                const std::string& partition, ProgressReporter& progress, uint64_t& done, Tally& tally,
                std::string& error) {
  std::vector<std::string> indexes;
  for (size_t id : ids) indexes.push_back(std::to_string(id));
  const std::string task = shellCommand({}, {selfExecutable().string(), "regress", "--out", run.dir.string(),
                                             "--attempt", std::to_string(attempt), "--run-shard"}) +
                           " \"$SLURM_ARRAY_TASK_ID\"";
  // Slurm's own limit a little beyond the plan's timeout: the task enforces the timeout and
  // reports the hang; Slurm's limit only catches a task that could not.
  const long minutes = static_cast<long>(std::ceil(description.timeoutSeconds / 60)) + 5;
  std::vector<std::string> sbatch = {"sbatch", "--parsable", "--job-name=sable-regress-" + description.planName,
                                     "--array=" + fmt::format("{}", fmt::join(indexes, ",")),
                                     "--ntasks=1", "--cpus-per-task=1", fmt::format("--time={}", minutes),
                                     "--chdir=" + run.dir.string(),
                                     "--output=" + (run.dir / "logs" / "slurm-%A_%a.out").string(), "--wrap=exec " + task};
  if (!partition.empty()) sbatch.push_back("--partition=" + partition);
  const auto [status, output] = capture(shellCommand({}, sbatch) + " 2>&1");
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  const std::string job = trim(output.substr(0, output.find(';')));
  if (status != 0 || job.empty() || !std::all_of(job.begin(), job.end(), ::isdigit)) {
    error = fmt::format("sbatch failed (status {}): {}", status, trim(output));
    return false;
  }
  progress.clearLine();
  std::cerr << "sable regress: Slurm job " << job << " (" << ids.size() << " tasks)\n";
  std::set<size_t> pending(ids.begin(), ids.end());
  while (true) {
    if (gInterrupted) {
      capture("scancel " + job + " 2>&1");
      progress.clearLine();
      std::cerr << "sable regress: interrupted: cancelled Slurm job " << job << "\n";
      return false;
    }
    for (auto it = pending.begin(); it != pending.end();) {
      if (auto result = readResult(run, *it); result && result->attempt == attempt) {
        tally.add(result);
        progress.update(++done, tally.detail());
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    if (pending.empty()) break;
    // A job that left the queue (or that Slurm forgot) has ended; what it did not write is lost.
    const auto [queueStatus, queued] = capture("squeue --noheader --jobs=" + job + " --format=%i 2>/dev/null");
    if (queueStatus != 0 || trim(queued).empty()) {
      // One last look: a task may have written its result just before it left the queue.
      for (size_t id : pending) {
        if (auto result = readResult(run, id); result && result->attempt == attempt) tally.add(result);
        else tally.add(std::nullopt);
        progress.update(++done, tally.detail());
      }
      break;
    }
    sleepSeconds(1);
    progress.update(done, tally.detail());
  }
  return true;
}

// --- merging ------------------------------------------------------------------------------------

int mergeRun(const RunFolder& run) {
  auto description = readRun(run);
  if (!description.ok()) {
    std::cerr << "sable regress: " << description.error().message << "\n";
    return kExitUsage;
  }
  std::vector<std::optional<ShardResult>> results;
  for (const auto& shard : description->shards) results.push_back(readResult(run, shard.id));
  const auto merged = merge(description->planName, description->shards, results);
  const fs::path json = run.dir / "regress.json", page = run.dir / "regress.html";
  if (auto written = writeFileAtomically(json, merged.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
      !written.ok()) {
    std::cerr << "sable regress: " << written.error().message << "\n";
    return kExitUsage;
  }
  if (auto written = writeFileAtomically(page, renderHtml(merged, results)); !written.ok()) {
    std::cerr << "sable regress: " << written.error().message << "\n";
    return kExitUsage;
  }
  for (const auto& shard : merged["incomplete"]) {
    std::cout << fmt::format("SHARD {} {} ({} {} {}; {}): {}\n  log: {}\n  command: {}\n", shard["id"].get<size_t>(),
                             shard["outcome"].get<std::string>(), shard["suite"].get<std::string>(),
                             shard["backend"].get<std::string>(), shard["configuration"].get<std::string>(),
                             shard["scope"].get<std::string>(), shard["message"].get<std::string>(),
                             (run.dir / shard["log"].get<std::string>()).string(), shard["command"].get<std::string>());
  }
  for (const auto& failure : merged["failures"]) {
    std::cout << fmt::format("FAILED  {} {} {} {}: {}\n  command: {}\n", failure["suite"].get<std::string>(),
                             failure["backend"].get<std::string>(), failure["configuration"].get<std::string>(),
                             failure["name"].get<std::string>(), failure["reason"].get<std::string>(),
                             failure["command"].get<std::string>());
  }
  const auto& totals = merged["totals"];
  std::cout << fmt::format("{}: {} passed, {} failed, {} skipped, {} not run; {} of {} shards incomplete\n",
                           description->planName, totals["passed"].get<uint64_t>(), totals["failed"].get<uint64_t>(),
                           totals["skipped"].get<uint64_t>(), totals["not_run"].get<uint64_t>(),
                           merged["incomplete_shards"].get<uint64_t>(), merged["shards"].get<uint64_t>())
            << "report: " << json.string() << ", " << page.string() << std::endl;
  return passed(merged) ? 0 : kExitFailures;
}

// --- the plan -----------------------------------------------------------------------------------

int runPlan(const RegressArgs& args) {
  Vocabulary vocabulary;
  vocabulary.configurations.clear();
  for (const auto& config : sable_hw_configs) vocabulary.configurations.push_back(config.name);
#ifndef SABLE_HAVE_RTL
  vocabulary.backends = {"func"};  // this build has no verilated NPU
#endif
  auto plan = readPlan(args.plan, vocabulary);
  if (!plan.ok()) {
    std::cerr << "sable regress: " << plan.error().message << "\n";
    return kExitUsage;
  }
  const fs::path sable = selfExecutable();
  Tools tools{sable.string(), (sable.parent_path() / "../../tests/umd/umd_compiler_random_graph_test").lexically_normal().string()};
  for (size_t i = 0; i < plan->suites.size(); ++i) {
    if (plan->suites[i].kind == SuiteKind::kRandom && access(tools.randomGraphTest.c_str(), X_OK) != 0) {
      std::cerr << "sable regress: suites[" << i << "]: random graphs need " << tools.randomGraphTest
                << " (build the target umd_compiler_random_graph_test)\n";
      return kExitUsage;
    }
  }
  auto shards = makeShards(*plan, tools, [](const Suite& suite) { return listCorpusTests(suite.paths, suite.filter); });
  if (!shards.ok()) {
    std::cerr << "sable regress: " << shards.error().message << "\n";
    return kExitUsage;
  }
  if (args.dryRun) {
    for (const auto& shard : *shards) {
      std::cout << fmt::format("shard {} ({} {} {}): {}\n", shard.id, shard.suiteName, shard.backend, shard.configuration,
                               shellCommand(shard.environment, shard.argv));
    }
    std::cout << plan->name << ": " << shards->size() << " shards\n";
    return 0;
  }
  RunFolder run{fs::absolute(args.out.empty() ? "regress-" + plan->name : args.out)};
  if (fs::exists(run.shardsFile())) {
    // Results of an earlier run would be taken for this one's.
    std::cerr << "sable regress: " << run.dir.string() << " holds an earlier run: choose another --out\n";
    return kExitUsage;
  }
  if (auto written = writeRun(run, {plan->name, plan->timeoutSeconds, *shards}); !written.ok()) {
    std::cerr << "sable regress: " << written.error().message << "\n";
    return kExitUsage;
  }
  if (args.slurm && capture("command -v sbatch").first != 0) {
    std::cerr << "sable regress: --slurm needs sbatch, squeue and scancel on $PATH\n";
    return kExitUsage;
  }
  catchInterrupts();
  auto progress = ProgressReporter::onStderr("regress", "shards", shards->size());
  uint64_t done = 0;
  Tally tally;
  std::vector<size_t> ids(shards->size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  // The first round, then once more the shards that did not complete (a crash of the machine, a
  // lost task, a hang that was not the code's).
  for (int attempt = 1; attempt <= 2 && !ids.empty(); ++attempt) {
    for (size_t id : ids) {
      std::error_code error;
      fs::remove(run.resultFile(id), error);
    }
    std::string error;
    const bool finished = args.slurm ? runOnSlurm(run, {plan->name, plan->timeoutSeconds, *shards}, ids, attempt,
                                                  args.partition, progress, done, tally, error)
                                     : runLocally(run, ids, attempt, args.local, progress, done, tally);
    if (!finished) {
      progress.clearLine();
      if (!error.empty()) {
        std::cerr << "sable regress: " << error << "\n";
        return kExitUsage;
      }
      std::cerr << "sable regress: interrupted\n";
      return kExitInterrupted;
    }
    std::vector<size_t> retry;
    for (size_t id : ids) {
      if (auto result = readResult(run, id); !result || result->outcome != Outcome::kCompleted) retry.push_back(id);
    }
    if (!retry.empty() && attempt == 1) {
      progress.clearLine();
      std::cerr << "sable regress: " << retry.size() << " shard(s) did not complete; running them once more\n";
      progress.setTotal(shards->size() + retry.size());
      tally.incomplete -= retry.size();
    }
    ids = std::move(retry);
  }
  progress.finish();
  return mergeRun(run);
}

int runRegress(const RegressArgs& args) {
  if (args.runShard >= 0) {
    if (args.out.empty()) {
      std::cerr << "sable regress: --run-shard needs --out DIR\n";
      return kExitUsage;
    }
    return runShard({fs::absolute(args.out)}, static_cast<size_t>(args.runShard), args.attempt);
  }
  if (!args.merge.empty()) {
    if (!args.plan.empty() || args.local || args.slurm || args.dryRun) {
      std::cerr << "sable regress: --merge DIR takes no plan and no other mode\n";
      return kExitUsage;
    }
    return mergeRun({fs::absolute(args.merge)});
  }
  if (args.plan.empty()) {
    std::cerr << "sable regress: no plan given (usage: sable regress PLAN.json --local N | --slurm [--partition P] | "
                 "--dry-run; sable regress --merge DIR)\n";
    return kExitUsage;
  }
  const int modes = (args.local > 0) + args.slurm + args.dryRun;
  if (modes != 1) {
    std::cerr << "sable regress: choose one of --local N (N >= 1), --slurm, --dry-run\n";
    return kExitUsage;
  }
  if (!args.partition.empty() && !args.slurm) {
    std::cerr << "sable regress: --partition goes with --slurm\n";
    return kExitUsage;
  }
  return runPlan(args);
}

}  // namespace

CommandRunner addRegressCommand(CLI::App& app) {
  auto args = std::make_shared<RegressArgs>();
  auto* command = app.add_subcommand("regress", "Run a regression plan as shards, locally or as a Slurm job array");
  command->add_option("plan", args->plan, "The plan (JSON: suites, backends, configurations, shard size; docs/regress.md)");
  command->add_option("--local", args->local, "Run the shards on N worker processes of this machine");
  command->add_flag("--slurm", args->slurm, "Submit the shards as one Slurm job array (sbatch --array) and wait");
  command->add_option("--partition", args->partition, "The Slurm partition (default: the cluster's)");
  command->add_flag("--dry-run", args->dryRun, "Validate the plan and print the shards' commands; run nothing");
  command->add_option("--merge", args->merge, "Merge the results of the run in DIR (regress.json, regress.html)");
  command->add_option("--out", args->out,
                      "The run's folder (default: regress-PLANNAME): shards.json, output/, logs/, results/, "
                      "regress.json, regress.html; on a cluster, a shared filesystem");
  // The worker's entry point (local workers and Slurm tasks): not for people.
  command->add_option("--run-shard", args->runShard)->group("");
  command->add_option("--attempt", args->attempt)->group("");
  return [args] { return runRegress(*args); };
}

}  // namespace sable::tools
