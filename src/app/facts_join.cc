#include "app/facts_join.h"

#include "analysis/model.h"
#include "diagnose/static_facts.h"
#include "profile/profile_task.h"
#include "pyast/pyast.h"

namespace kiln::app {

namespace {

Result<std::vector<exec::KernelFacts>> StaticFactsOf(const SourceText& s) {
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(s.text, s.path));
  KILN_ASSIGN_OR_RETURN(auto model, analysis::AnalyzeModule(*tree));
  return diagnose::StaticFacts(model);
}

}  // namespace

Status JoinFacts(profile::ProfileRun* run, const std::optional<SourceText>& source,
                 std::vector<exec::KernelFacts> given) {
  Status status = Status::Ok();
  if (source) {
    auto sf = StaticFactsOf(*source);
    if (sf.ok())
      given = exec::MergeFacts(given, *sf);
    else
      status = sf.status();
  }
  for (auto& k : run->kernels) {
    std::vector<exec::KernelFacts> mine;
    if (k.facts) mine.push_back(*k.facts);
    for (const auto& f : given)
      if (f.name == k.name()) mine = exec::MergeFacts(mine, {f});
    if (!mine.empty()) k.facts = mine.front();
  }
  return status;
}

}  // namespace kiln::app
