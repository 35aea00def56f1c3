// kiln/rewrite: the planning interface every rewrite implements (internal).
//
// A plan turns a request into an EditSet against the original text, or refuses with
// InvalidArgument and the reason. Check() is "does the plan succeed"; Apply() applies the plan,
// re-parses and checks the invariants.
#pragma once

#include <string>
#include <vector>

#include "rewrite/internal.h"

namespace kiln::rewrite::internal {

struct Ctx {
  const Tree& tree;
  const ModuleModel& model;
  const Kernel& kernel;
  std::vector<int> launches;  // target launches (indices into model.launches)
  std::string_view text() const { return tree.text(); }
};

struct Plan {
  EditSet edits;
  std::vector<std::string> notes;
  // Argument lists of launches whose callee is chosen at run time where every edit is gated on the callee
  // (`(NEW if fx is K else OLD)`): host edits there reach the target kernel only.
  std::vector<Span> gated;
};

// Refusal helper: InvalidArgument with the reason.
inline Status Refuse(std::string why) { return InvalidArgument(std::move(why)); }

Result<Plan> PlanSetParams(const Ctx& c, const SetParams& r);
Result<Plan> PlanInsertAutotune(const Ctx& c, const InsertAutotune& r);
Result<Plan> PlanGroupMSwizzle(const Ctx& c, const GroupMSwizzle& r);
Result<Plan> PlanEvictionHints(const Ctx& c, const EvictionHints& r);
Result<Plan> PlanDotPrecision(const Ctx& c, const DotPrecision& r);
Result<Plan> PlanPipelineLoop(const Ctx& c, const PipelineLoop& r);
Result<Plan> PlanSplitK(const Ctx& c, const SplitK& r);
Result<Plan> PlanPersistentGrid(const Ctx& c, const PersistentGrid& r);
Result<Plan> PlanRowsPerProgram(const Ctx& c, const RowsPerProgram& r);
Result<Plan> PlanRemoveMasks(const Ctx& c, const RemoveMasks& r);
Result<Plan> PlanLiftLiterals(const Ctx& c, const LiftLiterals& r);

// How the grid of launch `l` relates to constexpr `name` (analysis::RelateGrid).
inline GridRelation RelateGrid(const Ctx& c, const Launch& l, const std::string& name) {
  return analysis::RelateGrid(c.tree, l, name);
}

// Appends a parameter to the kernel signature (after the last parameter).
Status AppendKernelParam(const Ctx& c, EditSet& edits, const std::string& param_text);

}  // namespace kiln::rewrite::internal
