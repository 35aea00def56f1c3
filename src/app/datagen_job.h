// kiln/app: `kiln datagen`: execution-verified SFT data (a PyTorch program -> its Triton implementation),
// docs/datagen.md. A run is a pipeline of stages over one output folder, each stage's results kept there so
// that a second run resumes where the first stopped:
//
//   programs   harvested (--from: KernelBench modules, TritonBench-T operators) and composed (--compose N)
//              programs, minus benchmark tasks (unless --allow-benchmark)        -> programs.jsonl
//   capture    the worker runs each program in eager torch, compiles it with torch.compile and records
//              Inductor's output (GPU host; or --captures FILE recorded earlier)  -> captures.jsonl
//   convert    Inductor's output -> a standalone KernelBench ModelNew of plain @triton.jit kernels
//                                                                                -> candidates/*.py
//   verify     every candidate through kiln eval's batch (strict policy)          -> verify.jsonl
//   output     dedupe, SFT JSON lines (messages, alpaca, sharegpt), rejects, dataset card
//
// Candidates come from two routes: the compiler route (capture, convert) and, with --llm, the LLM route
// (a model's answer per program: its code and reasoning, datagen_llm.cc), verified and written the same way.
//
// Exit codes: 0 the run finished (rejects are data, not failures), 2 usage or infrastructure error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/options.h"

namespace kiln::app {

struct DatagenOptions {
  std::vector<std::string> from;  // program files or folders
  std::string format;             // "" (detect), kernelbench, tritonbench_t
  int compose = 0;                // composed programs to add
  uint64_t seed = 0;
  bool compose_small = false;     // tiny shapes (interpreter runs)
  std::string out;                // the run's folder
  std::string captures;           // recorded captures (JSON lines of kiln_worker.inductor_capture)
  std::string stop_after;         // "" (all), programs, capture, convert, verify
  bool allow_benchmark = false;
  std::string benchmarks;         // benchmark corpus root for exclusion ("" : $KILN_CORPUS_DIR or none)
  int jobs = -1;                  // capture processes (-1: cores)
  int gpus = -1;                  // GPUs the capture processes and the verification spread over (-1: all)
  double capture_timeout_s = 300;
  double capture_deadline_s = 0;  // start no capture after this many seconds (0: none)
  bool finish = false;            // evaluate nothing new: outputs from what earlier runs recorded
  // verification (kiln eval's batch)
  std::string protocol;
  int trials = 3;
  int verify_limit = -1;  // verify at most this many candidates not verified before (-1: all)
  double timeout_s = 120;
  int check_workers = -1;
  int workers = 1;
  int shapes = 2;  // composed programs: shapes verified (the program's and other batch sizes): the LLM route's,
                   // and the compiler route's from dynamic captures
  bool dynamic_shapes = false;  // capture with torch.compile(dynamic=True) (the worker's --dynamic)
  // the LLM route (--llm)
  bool use_llm = false;
  bool llm_only = false;        // no compiler route (no capture)
  LlmFlags llm;                 // endpoint, limits, sampling
  std::string prompt_template;  // "" : prompts/datagen.txt (built in)
  WorkerFlags worker;
  RecordsOptions records;
  bool quiet = false;
};

int RunDatagen(const DatagenOptions& o);

}  // namespace kiln::app
