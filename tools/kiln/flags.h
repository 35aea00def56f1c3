// Flags of the option groups several commands share (src/app/options.h): one registration per group,
// so a flag has the same name and help in every command that takes it.
#pragma once

#include <CLI/CLI.hpp>

#include "app/options.h"

namespace kiln::cli {

// Which of the worker flags a command takes.
enum WorkerFlag { kPython = 1, kInterpret = 2, kReplay = 4, kRecord = 8, kAllWorkerFlags = 15 };

void AddWorkerFlags(CLI::App* sub, app::WorkerFlags* f, int which = kAllWorkerFlags);
// --format (checked against the known formats when `check_format`), and --entry/--bench when `files`.
void AddTaskFlags(CLI::App* sub, app::TaskOptions* f, bool files = true, bool check_format = false);
void AddRecordsFlags(CLI::App* sub, app::RecordsOptions* f);
// --llm-url, --llm-model, --llm-api-key, timeouts, retries, concurrency, prices, --max-cost, --no-llm-cache and
// the sampling (--temperature, --top-p, --max-tokens).
void AddLlmFlags(CLI::App* sub, app::LlmFlags* f);

// Validation in one place (issue 15): a usage error exits 2 with a message naming the flag.
inline constexpr int kUsageExit = 2;
// A finite number in [lo, hi]: CLI::Range lets NaN through (`--timeout nan` used to be accepted).
CLI::Validator FiniteRange(double lo, double hi);
// A CLI11 parse error -> its message (help and --version: exit 0); every other one exits kUsageExit (CLI11's
// own codes, 105/106/109/..., are not kiln's documented contract).
int ExitForParseError(CLI::App& app, const CLI::ParseError& e);

}  // namespace kiln::cli
