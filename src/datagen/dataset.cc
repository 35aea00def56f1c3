// The SFT records: instruction, reasoning template, the three output formats.
#include "datagen/dataset.h"

#include <fmt/format.h>

namespace kiln::datagen {

namespace {

const char* kSystem =
    "You are an expert in writing Triton GPU kernels. You rewrite PyTorch programs as fast, correct Triton.";

}  // namespace

std::string Instruction(const std::string& program) {
  return fmt::format(
      "You are given a PyTorch program: a class Model, get_inputs() that builds its inputs and get_init_inputs() "
      "that builds its constructor arguments. Write a Triton implementation as a Python module with a class "
      "ModelNew: same constructor arguments and the same forward signature as Model, returning the same result, "
      "with all computation done by your own @triton.jit kernels (no torch operators for the computation, no "
      "calls into torch.compile, cuBLAS or other libraries).\n\n"
      "Triton guidance:\n"
      "- A kernel runs as a grid of programs; tl.program_id(axis) selects the block a program owns, and "
      "tl.arange builds the block's offsets. Mask every load and store at the edges (offsets < numel).\n"
      "- Fuse elementwise work into the kernels that load the data; keep reductions (sum, max, softmax, norms) "
      "within one program when a row fits a block, and accumulate in float32 for float16/bfloat16 inputs.\n"
      "- Launch with an explicit grid, e.g. kernel[(triton.cdiv(n, BLOCK),)](..., BLOCK=1024), and choose "
      "num_warps for the block size. Use tl.dot on tiles for matrix products.\n"
      "- Allocate outputs with torch.empty / torch.empty_strided on the input's device.\n\n"
      "First explain your reasoning step by step, then give the complete module in one ```python block.\n\n"
      "PyTorch program:\n```python\n{}```\n",
      program);
}

std::string Response(const SampleText& s) {
  return s.reasoning + "\n\n```python\n" + s.candidate + "```\n";
}

std::string CompilerReasoning(const std::vector<std::string>& families, const std::vector<KernelNote>& kernels,
                              const std::vector<std::string>& symbols) {
  std::string fam;
  for (const auto& f : families) fam += (fam.empty() ? "" : ", ") + f;
  std::string out = fmt::format(
      "Step 1: read the program. Its forward combines {} operators. Each chain of operators that reads and writes "
      "tensors of the same iteration space can be fused into one kernel, so intermediates stay in registers "
      "instead of round-tripping through global memory.\n",
      fam.empty() ? "basic" : fam);
  out += fmt::format("Step 2: plan the kernels. {} kernel{} enough:\n", kernels.size(),
                     kernels.size() == 1 ? " is" : "s are");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelNote& k = kernels[i];
    std::string why;
    if (k.kind == "pointwise") {
      why = "every output element depends only on the input elements at the same (or a broadcast) position, so "
            "each program handles a contiguous block of XBLOCK elements with masked loads and stores";
    } else if (k.kind == "persistent reduction") {
      why = "a whole row fits in one block (R0_BLOCK), so each program loads XBLOCK rows at once, reduces along "
            "the row with tl.sum/tl.max and reuses the loaded row for the elementwise work around the reduction";
    } else if (k.kind == "looped reduction") {
      why = "a row is too long for one block, so each program walks the row in R0_BLOCK chunks, accumulating "
            "partial results in registers, then finishes the reduction";
    } else if (k.kind == "template (GEMM)") {
      why = "the matrix product is tiled: each program computes one BLOCK_M x BLOCK_N tile of the output, "
            "looping over K in BLOCK_K steps with tl.dot on tiles loaded from A and B, accumulating in float32, "
            "with the elementwise epilogue applied to the tile before the store";
    } else {
      why = "it computes its part of the result block by block";
    }
    out += fmt::format("  {}. {} ({}): {}.\n", i + 1, k.name, k.kind, why);
  }
  if (symbols.empty()) {
    out += "Step 3: launch. The forward allocates each intermediate and output buffer with torch.empty_strided "
           "(the layout the next kernel expects) and launches the kernels in order with explicit grids, block "
           "sizes, num_warps and num_stages chosen for these shapes.\n";
  } else {
    std::string binds;
    for (const auto& s : symbols) binds += (binds.empty() ? "" : ", ") + s;
    out += fmt::format(
        "Step 3: launch. The sizes are read from the inputs ({}), so the same kernels serve any size of those dims: "
        "the forward computes each buffer's size and stride, the element counts the kernels take and each grid "
        "(the element count divided by the block size, rounded up) from them, allocates the buffers with "
        "torch.empty_strided and launches the kernels in order with fixed block sizes, num_warps and num_stages.\n",
        binds);
  }
  out += "Step 4: check. The masks cover the tails of every block; reductions accumulate in float32; the result "
         "has the shape, dtype and layout of the PyTorch program's output.";
  return out;
}

nlohmann::json MessagesRecord(const SampleText& s) {
  return {{"id", s.id},
          {"messages",
           nlohmann::json::array({{{"role", "system"}, {"content", kSystem}},
                                  {{"role", "user"}, {"content", Instruction(s.program)}},
                                  {{"role", "assistant"}, {"content", Response(s)}}})},
          {"meta", s.meta}};
}

nlohmann::json AlpacaRecord(const SampleText& s) {
  return {{"id", s.id}, {"system", kSystem}, {"instruction", Instruction(s.program)}, {"input", ""},
          {"output", Response(s)}, {"meta", s.meta}};
}

nlohmann::json SharegptRecord(const SampleText& s) {
  return {{"id", s.id},
          {"system", kSystem},
          {"conversations", nlohmann::json::array({{{"from", "human"}, {"value", Instruction(s.program)}},
                                                   {{"from", "gpt"}, {"value", Response(s)}}})},
          {"meta", s.meta}};
}

namespace {

void EraseAll(std::string* s, const std::string& what) {
  for (size_t p; (p = s->find(what)) != std::string::npos;) s->erase(p, what.size());
}

std::string Trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::string ReasoningOf(const std::string& response, const std::string& code) {
  std::string text = response;
  std::string c = Trimmed(code);
  size_t at = c.empty() ? std::string::npos : text.rfind(c);
  if (at != std::string::npos) {
    size_t open = text.rfind("```", at);
    size_t begin = at;  // unfenced code: the code alone is cut
    if (open != std::string::npos) {
      size_t nl = text.rfind('\n', open);
      begin = nl == std::string::npos ? 0 : nl + 1;
    }
    size_t close = text.find("```", at + c.size());
    size_t end = close == std::string::npos ? text.size() : text.find('\n', close);
    if (end == std::string::npos) end = text.size();
    text = text.substr(0, begin) + text.substr(end);
  }
  EraseAll(&text, "<think>");
  EraseAll(&text, "</think>");
  return Trimmed(text);
}

}  // namespace kiln::datagen
