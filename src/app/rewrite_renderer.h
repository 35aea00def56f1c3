// kiln/app: the tuning loop's Renderer over the rewrite module: a config -> SetParams, a list of
// configs -> InsertAutotune, a per-shape winner -> InsertAutotune keeping an autotuned original's
// configs.
#pragma once

#include <string>
#include <vector>

#include "search/interfaces.h"

namespace kiln::app {

class RewriteRenderer : public search::Renderer {
 public:
  RewriteRenderer(std::string source, std::string path, std::string kernel)
      : source_(std::move(source)), path_(std::move(path)), kernel_(std::move(kernel)) {}
  Result<std::string> Render(const search::Config& c) override;
  Result<std::string> RenderAutotune(const std::vector<search::Config>& configs) override;
  Result<std::string> RenderPerShape(const search::Config& winner, const search::Config& baseline,
                                     const search::ShapePins& pins) override;

 private:
  Result<std::string> RenderAutotune(const std::vector<search::Config>& configs, const search::ShapePins& pins);

  std::string source_, path_, kernel_;
};

}  // namespace kiln::app
