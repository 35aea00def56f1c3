#include "flags.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace kiln::cli {

void AddWorkerFlags(CLI::App* sub, app::WorkerFlags* f, int which) {
  if (which & kPython)
    sub->add_option("--python", f->python,
                    "Python with torch+triton for the worker (default: $KILN_PYTHON, else python3)");
  if (which & kInterpret)
    sub->add_flag("--interpret", f->interpret, "Force Triton's interpreter in the worker (CPU; no timings)");
  if (which & kReplay)
    sub->add_option("--replay", f->replay, "Answer from a transcript recorded on a GPU instead of running a worker");
  if (which & kRecord)
    sub->add_option("--record", f->record, "Append every worker exchange to this transcript (JSON lines)");
}

void AddTaskFlags(CLI::App* sub, app::TaskOptions* f, bool files, bool check_format) {
  if (files) {
    sub->add_option("--entry", f->entry, "Entry function (kiln format; overrides TritonBench's)");
    sub->add_option("--bench", f->bench, "Bench file (kiln format)");
  }
  auto* format = sub->add_option("--format", f->format, "Task format (default: detect)");
  if (check_format) format->check(CLI::IsMember({"auto", "kernelbench", "tritonbench_g", "tritonbench_t", "kiln"}));
}

void AddRecordsFlags(CLI::App* sub, app::RecordsOptions* f) {
  sub->add_option("--db", f->db,
                  "Records database (default $XDG_CACHE_HOME/kiln/kiln.db or ~/.cache/kiln/kiln.db; env KILN_DB)");
  sub->add_flag("--no-db", f->no_db, "Neither read nor write the records database");
}

void AddLlmFlags(CLI::App* sub, app::LlmFlags* f) {
  llm::Config& c = f->config;
  sub->add_option("--llm-url", c.url,
                  "OpenAI-compatible endpoint: base URL (http://localhost:8000/v1) or .../chat/completions "
                  "(env KILN_LLM_URL)");
  sub->add_option("--llm-model", c.model, "Model name sent to the endpoint (env KILN_LLM_MODEL)");
  sub->add_option("--llm-api-key", c.api_key,
                  "API key, sent as a bearer token (prefer env KILN_LLM_API_KEY: flags show in process lists)");
  sub->add_option("--llm-timeout", c.timeout_s, "Seconds to wait for one answer")->check(FiniteRange(0.1, 86400))->capture_default_str();
  sub->add_option("--llm-retries", c.retries, "Retries after 429, 5xx, timeouts and dropped connections (exponential backoff, Retry-After honoured)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  sub->add_option("--llm-concurrency", c.concurrency, "Model calls in flight at once")->check(CLI::Range(1, 1024))->capture_default_str();
  sub->add_option("--llm-price-in", c.price_in_per_mtok, "USD per million prompt tokens, for the cost accounting (env KILN_LLM_PRICE_IN)")
      ->check(FiniteRange(0, 1e6));
  sub->add_option("--llm-price-out", c.price_out_per_mtok, "USD per million completion tokens (env KILN_LLM_PRICE_OUT)")
      ->check(FiniteRange(0, 1e6));
  sub->add_option("--max-cost", c.max_cost_usd, "Stop calling the model once this many USD were spent in this run (0: no limit)")
      ->check(FiniteRange(0, 1e9));
  sub->add_flag("--no-llm-cache", [&c](int64_t) { c.use_cache = false; },
                "Ask the model again even when the records database holds its answer to the same request");
  sub->add_option("--temperature", f->sampling.temperature, "Sampling temperature")->check(FiniteRange(0, 2))->capture_default_str();
  sub->add_option("--top-p", f->sampling.top_p, "Nucleus sampling")->check(FiniteRange(0, 1))->capture_default_str();
  sub->add_option("--max-tokens", f->sampling.max_tokens, "Most tokens in one answer")->check(CLI::Range(1, 10000000))->capture_default_str();
}

CLI::Validator FiniteRange(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          return fmt::format("{}: not a number", s);
        }
        if (used != s.size()) return fmt::format("{}: not a number", s);
        if (!std::isfinite(v) || v < lo || v > hi) return fmt::format("{}: expected a number from {} to {}", s, lo, hi);
        return "";
      },
      fmt::format("NUMBER in [{} - {}]", lo, hi));
}

int ExitForParseError(CLI::App& app, const CLI::ParseError& e) { return app.exit(e) == 0 ? 0 : kUsageExit; }

}  // namespace kiln::cli
