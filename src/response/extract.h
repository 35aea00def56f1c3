// kiln/response: the code in a model's raw response, and the rule-based gate (docs/serve.md, "Format
// rules"). Both are part of the rule-based reward, so they are plain, documented and deterministic.
//
//   1. <think>...</think> sections are removed; an unclosed <think> hides everything after it.
//   2. Fenced blocks: a line opening with ``` (up to three spaces before it) and an optional language,
//      closed by a line of ``` alone. A block left open at the end runs to the end (truncated output);
//      it is taken but the format component is 0.
//   3. Of the blocks whose language is python, py, python3, triton or empty, the last one holding
//      "@triton.jit" is the code, else the last such block.
//   4. Without any fence, the whole text is the code when it holds "@triton.jit" or an import line
//      (format 0); otherwise there is no code.
// The gate passes when the code defines a @triton.jit function and launches one of them
// (`name[grid](...)`); whether torch does the work instead is kiln's verdict's business (rejected).
#pragma once

#include <string>
#include <string_view>

namespace kiln::response {

struct Extracted {
  bool has_code = false;
  std::string code;
  bool format_ok = false;  // the code came from a closed fenced block of a Python language
  std::string how;         // "fenced", "unterminated_fence", "unfenced", "none", "code" (given as code)
};

Extracted ExtractCode(std::string_view response);

struct Gate {
  bool pass = false;
  std::string reason;  // why not, when it fails
};

Gate TritonGate(std::string_view code);

}  // namespace kiln::response
