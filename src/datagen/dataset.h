// kiln/datagen: the SFT records datagen writes (docs/datagen.md, "Output").
//
// One sample is (a PyTorch program, its verified Triton implementation, the reasoning that leads there).
// The instruction follows AutoTriton's style: the task (rewrite the PyTorch module as Triton, class
// ModelNew, same interface), Triton-specific guidance, and the program. The response is the reasoning,
// then the code in a ```python block. For the compiler route the reasoning is written from a template over
// what the conversion knows of each kernel (its kind, what it computes, its launch).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::datagen {

struct SampleText {
  std::string id;
  std::string program;    // the PyTorch module
  std::string candidate;  // the verified ModelNew module
  std::string reasoning;
  std::string route;      // "inductor" or "llm"
  nlohmann::json meta;    // origin, families, ops, verdict facts...
};

std::string Instruction(const std::string& program);
std::string Response(const SampleText& s);

// One kernel as the reasoning template sees it.
struct KernelNote {
  std::string name, kind, comment;
};
// The compiler route's reasoning: how the program maps onto the kernels that implement it. symbols: a dynamic
// candidate's size bindings ("s77 = x.size(0)"): its launch step says the sizes come from the inputs.
std::string CompilerReasoning(const std::vector<std::string>& families, const std::vector<KernelNote>& kernels,
                              const std::vector<std::string>& symbols = {});

// The three formats: TRL chat `messages`, alpaca (instruction/input/output), sharegpt (conversations).
nlohmann::json MessagesRecord(const SampleText& s);
nlohmann::json AlpacaRecord(const SampleText& s);
nlohmann::json SharegptRecord(const SampleText& s);

// The LLM route (--llm): its built-in prompt template (prompts/datagen.txt, gen's template syntax).
const char* DefaultLlmPromptText();
// The reasoning of a model's answer: the answer without the fenced block that `code` was taken from (a
// block left open runs to the end) and without <think> tags (their content is reasoning), trimmed. "" when
// nothing but the code is there.
std::string ReasoningOf(const std::string& response, const std::string& code);

}  // namespace kiln::datagen
