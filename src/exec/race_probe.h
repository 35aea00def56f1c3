// kiln/exec: the reference module with its program order reversed, a probe for racing writes.
//
// Programs that store different values to one address race: the last writer wins, and on a GPU which program
// comes last is nearly the same from run to run (blocks start in order of their ids), so reruns of the
// reference show only some of its racing elements (TritonBench-G's quantize_copy_kv: a fifth of its slots per
// run; kv_cache_copy: none between its reruns). A candidate that schedules its work differently then differs
// from the reference there, and the verdict wrongly blamed it, even the task's own code against itself
// (docs/verdicts.md, "Racing writes"). The same module with every `tl.program_id(axis)` in its @triton.jit
// functions read as `(tl.num_programs(axis) - 1 - tl.program_id(axis))` computes what it computed, program by
// program, with the programs started in the opposite order: a write-write race's winner flips, so one run of it
// exposes the racing elements. The worker runs it among the reference's reruns (evaluate.py, _stable_probe).
//
// Refused (no probe) where programs may wait on one another, which a reversed start order could deadlock:
// atomic_cas / atomic_xchg, volatile loads, `while` loops in a @triton.jit function; and where nothing changes
// (no program_id call, no @triton.jit function).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::exec {

struct RaceProbe {
  std::optional<std::string> source;  // the module with its program order reversed
  std::string why;                    // when there is none: why not
};

RaceProbe ReversedProgramOrder(std::string_view module_text);

}  // namespace kiln::exec
