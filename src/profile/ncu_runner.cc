#include "profile/ncu_runner.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "common/strings.h"
#include "profile/metrics.h"

namespace kiln::profile {

namespace {

std::string Tail(const std::string& s, size_t max_lines = 25, size_t max_bytes = 4000) {
  std::string t = s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ' || t.back() == '\r')) t.pop_back();
  size_t pos = t.size(), count = 0;
  while (pos > 0) {
    size_t nl = t.rfind('\n', pos - 1);
    if (nl == std::string::npos) break;
    if (++count >= max_lines) return t.substr(nl + 1);
    pos = nl;
  }
  return t;
}

std::vector<std::string> ErrorLines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (line.rfind("==ERROR==", 0) == 0) out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

}  // namespace

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                   "_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) {
        if (c == '\'')
          out += "'\\''";
        else
          out += c;
      }
      out += '\'';
    }
  }
  return out;
}

Result<std::string> FindNcu(const std::string& hint) {
  std::vector<std::string> searched;
  auto try_one = [&](const std::string& p) -> std::optional<std::string> {
    searched.push_back(p);
    return FindProgram(p);
  };
  if (!hint.empty()) {
    if (auto p = try_one(hint)) return *p;
    return Unavailable(fmt::format("ncu not found at {} (given with --ncu)", hint));
  }
  if (const char* env = std::getenv("KILN_NCU"); env && *env) {
    if (auto p = try_one(env)) return *p;
  }
  if (auto p = FindProgram("ncu")) return *p;
  searched.push_back("PATH");
  std::vector<std::string> found;
  if (DIR* d = opendir("/opt/nvidia/nsight-compute")) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      found.push_back("/opt/nvidia/nsight-compute/" + n + "/ncu");
    }
    closedir(d);
  }
  std::sort(found.rbegin(), found.rend());  // newest version first (lexicographic on YYYY.N.N)
  searched.push_back("/opt/nvidia/nsight-compute/*/ncu");
  for (const auto& f : found) {
    if (access(f.c_str(), X_OK) == 0) return f;
  }
  std::vector<std::string> cuda = {"/usr/local/cuda/bin/ncu"};
  if (DIR* d = opendir("/usr/local")) {
    std::vector<std::string> more;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("cuda-", 0) == 0) more.push_back("/usr/local/" + n + "/bin/ncu");
    }
    closedir(d);
    std::sort(more.rbegin(), more.rend());
    cuda.insert(cuda.end(), more.begin(), more.end());
  }
  for (const auto& f : cuda) {
    searched.push_back(f);
    if (access(f.c_str(), X_OK) == 0) return f;
  }
  std::string where;
  for (const auto& s : searched) where += (where.empty() ? "" : ", ") + s;
  return Unavailable(
      fmt::format("ncu (Nsight Compute) not found; searched {}. Install Nsight Compute or pass --ncu PATH "
                  "(or set KILN_NCU)",
                  where));
}

std::vector<std::string> BuildNcuArgv(const NcuOptions& opts, const std::string& ncu,
                                      const std::vector<std::string>& target) {
  const auto& metrics = opts.metrics.empty() ? DefaultMetrics() : opts.metrics;
  std::string list;
  for (const auto& m : metrics) list += (list.empty() ? "" : ",") + m;
  std::vector<std::string> argv = {ncu};
  if (opts.clock_control_none) argv.insert(argv.end(), {"--clock-control", "none"});
  if (opts.print_units_base) argv.insert(argv.end(), {"--print-units", "base"});
  argv.insert(argv.end(), {"--csv", "--page", "raw", "--metrics", list});
  if (!opts.nvtx_include.empty()) argv.insert(argv.end(), {"--nvtx", "--nvtx-include", opts.nvtx_include});
  argv.insert(argv.end(), {"-k", "regex:" + opts.kernel_regex});
  argv.insert(argv.end(), {"--launch-skip", std::to_string(opts.launch_skip)});
  if (opts.launch_count > 0) argv.insert(argv.end(), {"--launch-count", std::to_string(opts.launch_count)});
  argv.insert(argv.end(), {"--target-processes", "all"});
  argv.insert(argv.end(), target.begin(), target.end());
  return argv;
}

const char* NcuFailureName(NcuFailure f) {
  switch (f) {
    case NcuFailure::kNone: return "none";
    case NcuFailure::kNcuMissing: return "ncu_missing";
    case NcuFailure::kNoPermission: return "no_permission";
    case NcuFailure::kKernelNotFound: return "kernel_not_found";
    case NcuFailure::kTargetCrashed: return "target_crashed";
    case NcuFailure::kTimeout: return "timeout";
    case NcuFailure::kUnknownMetric: return "unknown_metric";
    case NcuFailure::kBadOutput: return "bad_output";
  }
  return "?";
}

Classified ClassifyNcuOutcome(const NcuOutcome& o, const std::vector<std::string>& metrics,
                              const std::string& kernel_regex) {
  Classified c;
  const std::string all = o.run.out + "\n" + o.run.err;
  if (o.run.timed_out) {
    c.failure = NcuFailure::kTimeout;
    c.status = Timeout(
        fmt::format("ncu did not finish in {:.0f} s (killed with its process group); profiling replays the "
                    "kernel many times, so raise KILN_NCU_TIMEOUT_S or profile a smaller case. Output tail:\n{}",
                    o.run.seconds, Tail(all)));
    return c;
  }
  if (Contains(all, "ERR_NVGPUCTRPERM")) {
    c.failure = NcuFailure::kNoPermission;
    c.status = Unavailable(
        "ncu has no permission to read the GPU performance counters (ERR_NVGPUCTRPERM). Run as "
        "root, or allow profiling for all users (modprobe option "
        "`nvidia NVreg_RestrictProfilingToAdminUsers=0`, then reload the driver); see "
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM");
    return c;
  }
  // Metrics ncu does not know: any of ours named on an ==ERROR== line.
  for (const auto& line : ErrorLines(all)) {
    for (const auto& m : metrics) {
      if (Contains(line, m) &&
          std::find(c.unknown_metrics.begin(), c.unknown_metrics.end(), m) == c.unknown_metrics.end()) {
        c.unknown_metrics.push_back(m);
      }
    }
  }
  bool has_rows = o.parsed.ok() && !o.parsed->kernels.empty();
  if (!has_rows && !c.unknown_metrics.empty()) {
    c.failure = NcuFailure::kUnknownMetric;
    std::string names;
    for (const auto& m : c.unknown_metrics) names += (names.empty() ? "" : ", ") + m;
    c.status = InvalidArgument(fmt::format("ncu does not know the metric(s) {}", names));
    return c;
  }
  bool exited_ok = o.run.exit.exited && o.run.exit.code == 0;
  if (!exited_ok && !has_rows) {
    c.failure = NcuFailure::kTargetCrashed;
    c.status = Internal(fmt::format("the profiled program failed under ncu ({}). Its output ends with:\n{}",
                                    o.run.exit.Describe(),
                                    Tail(o.run.err.empty() ? o.run.out : o.run.err + "\n" + Tail(o.run.out, 8))));
    return c;
  }
  if (!has_rows) {
    bool no_kernels = Contains(all, "No kernels were profiled");
    if (o.parsed.ok() || no_kernels) {
      c.failure = NcuFailure::kKernelNotFound;
      c.status =
          NotFound(fmt::format("no kernel launch matching regex:{} was profiled (the program ran and exited normally). "
                               "Check the kernel name, --launch-skip (the launches before the profiled one), and that "
                               "the case launches a kernel at all",
                               kernel_regex));
      return c;
    }
    c.failure = NcuFailure::kBadOutput;
    c.status = ParseError(
        fmt::format("ncu output has no raw CSV table ({}). Output tail:\n{}", o.parsed.status().message(), Tail(all)));
    return c;
  }
  return c;  // kNone; a non-zero exit with rows still counts (the rows are real)
}

CommandExecutor DefaultExecutor() {
  return [](const SpawnOptions& o, std::chrono::milliseconds t) { return RunCommand(o, t); };
}

Result<NcuRun> NcuRunner::Run(const std::vector<std::string>& target) {
  last_failure_ = NcuFailure::kNone;
  auto ncu = FindNcu(opts_.ncu_path);
  if (!ncu.ok()) {
    last_failure_ = NcuFailure::kNcuMissing;
    return ncu.status();
  }
  std::chrono::seconds timeout = opts_.timeout;
  if (const char* t = std::getenv("KILN_NCU_TIMEOUT_S"); t && *t) timeout = std::chrono::seconds(std::atoi(t));
  NcuRun result;
  NcuOptions opts = opts_;
  if (opts.metrics.empty()) opts.metrics = DefaultMetrics();
  for (int attempt = 0; attempt < 2; ++attempt) {
    SpawnOptions so;
    so.argv = BuildNcuArgv(opts, *ncu, target);
    so.env_set = opts.env;
    so.cwd = opts.cwd;
    so.pipe_stdin = false;
    so.stderr_keep_bytes = 256 * 1024;
    auto run = exec_(so, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
    if (!run.ok()) {
      last_failure_ = NcuFailure::kNcuMissing;
      return Unavailable(fmt::format("cannot start ncu ({}): {}", *ncu, run.status().message()));
    }
    result.seconds += run->seconds;
    NcuOutcome o{*run, ParseNcuRawCsv(run->out)};
    Classified c = ClassifyNcuOutcome(o, opts.metrics, opts.kernel_regex);
    if (c.failure == NcuFailure::kUnknownMetric && attempt == 0) {
      for (const auto& m : c.unknown_metrics) {
        opts.metrics.erase(std::remove(opts.metrics.begin(), opts.metrics.end(), m), opts.metrics.end());
        result.dropped_metrics.push_back(m);
      }
      continue;
    }
    if (c.failure != NcuFailure::kNone) {
      last_failure_ = c.failure;
      return Status(c.status.code(), c.status.message() + "\n  command: " + ShellJoin(so.argv));
    }
    result.report = std::move(o.parsed).value();
    result.csv_text = run->out;
    result.argv = so.argv;
    return result;
  }
  last_failure_ = NcuFailure::kUnknownMetric;
  return InvalidArgument("ncu rejected the metric list twice; see the messages above");
}

}  // namespace kiln::profile
