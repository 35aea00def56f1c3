// kiln/serve: code extraction and the Triton gate moved to the response module (src/response/extract.h),
// shared with `kiln bench`; serve keeps its names.
#pragma once

#include "response/extract.h"

namespace kiln::serve {

using response::ExtractCode;
using response::Extracted;
using response::Gate;
using response::TritonGate;

}  // namespace kiln::serve
