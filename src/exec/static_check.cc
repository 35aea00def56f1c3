#include "exec/static_check.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "pyast/syntax.h"

namespace kiln::exec {

using pyast::Node;

std::string RequiredEntry(const std::string& format, const std::string& task_entry) {
  if (format == "kernelbench") return "ModelNew";
  return task_entry;
}

namespace {

bool StartsWithName(std::string_view full, std::string_view prefix) {
  return full == prefix ||
         (full.size() > prefix.size() && full.substr(0, prefix.size()) == prefix && full[prefix.size()] == '.');
}

std::string_view Root(std::string_view full) { return full.substr(0, full.find('.')); }

std::string_view LastPart(std::string_view full) {
  size_t dot = full.rfind('.');
  return dot == std::string_view::npos ? full : full.substr(dot + 1);
}

struct Rule {
  const char* prefix;
  const char* rule;
  const char* why;
};

// Modules a candidate may not import (prefix match on the module path).
const Rule kForbiddenModules[] = {
    {"threading", "process_spawn", "threads"},
    {"_thread", "process_spawn", "threads"},
    {"multiprocessing", "process_spawn", "processes"},
    {"torch.multiprocessing", "process_spawn", "processes"},
    {"concurrent", "process_spawn", "threads or processes"},
    {"subprocess", "process_spawn", "processes"},
    {"pty", "process_spawn", "processes"},
    {"signal", "process_spawn", "signal handlers"},
    {"asyncio", "process_spawn", "concurrency outside the harness"},
    {"ctypes", "ctypes", "native code"},
    {"cffi", "ctypes", "native code"},
    {"torch.utils.cpp_extension", "native_code", "native code instead of Triton"},
    {"cupy", "native_code", "a GPU framework other than Triton"},
    {"pycuda", "native_code", "a GPU framework other than Triton"},
    {"numba", "native_code", "a GPU framework other than Triton"},
    {"socket", "network", "network access"},
    {"ssl", "network", "network access"},
    {"http", "network", "network access"},
    {"urllib", "network", "network access"},
    {"requests", "network", "network access"},
    {"mmap", "native_code", "shared memory"},
    {"shutil", "file_write", "file-system changes"},
    {"importlib", "dynamic_code", "dynamic imports that escape the static checks"},
    {"kiln_worker", "patched_worker", "access to the kiln harness"},
    {"__main__", "patched_worker", "access to the harness's main module"},
    {"inspect", "introspection", "introspection of the caller"},
    {"gc", "introspection", "introspection of live objects"},
    {"traceback", "introspection", "introspection of stack frames"},
    {"builtins", "introspection", "access to builtins"},
    {"torch.library", "patched_torch", "registering replacements for torch operators"},
    {"torch.overrides", "patched_torch", "overriding torch functions"},
    {"torch.utils._python_dispatch", "patched_torch", "intercepting torch dispatch"},
    {"triton.knobs", "patched_triton", "Triton's knobs, where the harness's launch hooks live"},
};

// Attribute or call targets (exact resolved names).
const Rule kForbiddenNames[] = {
    {"sys._getframe", "introspection", "reads the caller's stack frames"},
    {"sys._current_frames", "introspection", "reads other threads' stack frames"},
    {"sys.modules", "introspection", "pokes at loaded modules (the harness, the reference)"},
    {"sys.settrace", "introspection", "installs a tracer"},
    {"sys.setprofile", "introspection", "installs a profiler hook"},
    {"sys.meta_path", "introspection", "changes how modules load"},
    {"sys.path_hooks", "introspection", "changes how modules load"},
    {"sys.addaudithook", "introspection", "installs an audit hook"},
    {"os.system", "process_spawn", "runs a shell command"},
    {"os.popen", "process_spawn", "runs a shell command"},
    {"os.fork", "process_spawn", "forks the process"},
    {"os.forkpty", "process_spawn", "forks the process"},
    {"os.kill", "process_spawn", "signals processes"},
    {"os.killpg", "process_spawn", "signals processes"},
    {"os.setsid", "process_spawn", "leaves the worker's process group"},
    {"os.setpgid", "process_spawn", "leaves the worker's process group"},
    {"os.dup2", "process_spawn", "rewires file descriptors"},
    {"os.putenv", "patched_environment", "changes the environment"},
    {"os.unsetenv", "patched_environment", "changes the environment"},
    {"os.remove", "file_write", "deletes files"},
    {"os.unlink", "file_write", "deletes files"},
    {"os.rename", "file_write", "renames files"},
    {"os.replace", "file_write", "replaces files"},
    {"os.rmdir", "file_write", "deletes directories"},
    {"os.removedirs", "file_write", "deletes directories"},
    {"os.mkdir", "file_write", "creates directories"},
    {"os.makedirs", "file_write", "creates directories"},
    {"os.symlink", "file_write", "creates links"},
    {"os.link", "file_write", "creates links"},
    {"os.truncate", "file_write", "truncates files"},
    {"os.write", "file_write", "writes to a file descriptor"},
    {"os.open", "file_write", "opens raw file descriptors"},
    {"os.chmod", "file_write", "changes file modes"},
    {"torch.save", "file_write", "writes files"},
    {"numpy.save", "file_write", "writes files"},
    {"numpy.savez", "file_write", "writes files"},
    {"torch.manual_seed", "global_state", "reseeds the random generator the harness draws inputs from"},
    {"torch.seed", "global_state", "reseeds the random generator"},
    {"torch.random.manual_seed", "global_state", "reseeds the random generator"},
    {"torch.cuda.manual_seed", "global_state", "reseeds the random generator"},
    {"torch.cuda.manual_seed_all", "global_state", "reseeds the random generator"},
    {"torch.set_rng_state", "global_state", "rewinds the random generator"},
    {"torch.cuda.set_rng_state", "global_state", "rewinds the random generator"},
    {"random.seed", "global_state", "reseeds the random generator"},
    {"numpy.random.seed", "global_state", "reseeds the random generator"},
    {"torch.set_default_dtype", "global_state", "changes the default dtype for the reference too"},
    {"torch.set_default_device", "global_state", "changes the default device for the reference too"},
    {"torch.set_default_tensor_type", "global_state", "changes the default tensor type"},
    {"torch.set_float32_matmul_precision", "global_state", "lowers the reference's matmul precision"},
    {"torch.use_deterministic_algorithms", "global_state", "changes the reference's algorithms"},
    {"torch.set_flush_denormal", "global_state", "changes float behaviour process-wide"},
};

// Roots whose attributes a candidate may not assign (monkey-patching).
const char* kPatchRoots[] = {"torch",   "triton",    "time",     "builtins",    "sys",      "os",
                             "numpy",   "random",    "math",     "kiln_worker", "__main__", "gc",
                             "inspect", "functools", "operator", "timeit"};

// Attribute names that reach into frames and function internals, whatever the object.
const char* kIntrospectionAttrs[] = {"f_back",   "f_locals",       "f_globals",    "f_code",      "tb_frame",
                                     "gi_frame", "cr_frame",       "ag_frame",     "__globals__", "__closure__",
                                     "__code__", "__subclasses__", "__builtins__", "f_trace"};

// Builtins that escape static checking or spawn work elsewhere.
const char* kForbiddenBuiltins[] = {"exec", "eval", "compile", "__import__", "breakpoint"};

// Exception types broad enough to swallow a failing kernel (last name component).
const char* kBroadExceptions[] = {
    "Exception",   "BaseException",    "RuntimeError",          "CompilationError", "OutOfResources",
    "TritonError", "OutOfMemoryError", "AcceleratorError",      "InterpreterError", "AssertionError",
    "CudaError",   "CUDAError",        "TritonCompilationError"};

// Reason code for patching `full` (aligned with the worker's codes in docs/verdicts.md).
std::string PatchCode(std::string_view full) {
  std::string_view root = Root(full);
  if (root == "torch") return "patched_torch";
  if (root == "triton") return "patched_triton";
  if (root == "time" || root == "timeit") return "patched_timer";
  // The standard library helpers a harness leans on count as builtins (docs/verdicts.md).
  if (root == "builtins" || root == "math" || root == "operator" || root == "functools" || root == "random" ||
      root == "sys" || root == "gc" || root == "inspect") {
    return "patched_builtins";
  }
  if (root == "kiln_worker" || root == "__main__") return "patched_worker";
  if (StartsWithName(full, "os.environ")) return "patched_environment";
  return "patched_module";
}

class Checker {
 public:
  Checker(const pyast::Tree& tree, const StaticCheckOptions& opts) : tree_(tree), opts_(opts) {}

  std::vector<StaticFinding> Run() {
    Node root = tree_.root();
    CollectAliases(root);
    CollectLaunchers(root);
    CheckEntry(root);
    if (opts_.require_triton_kernel) CheckKernel(root);
    root.Walk([&](const Node& n) {
      Visit(n);
      return true;
    });
    return std::move(findings_);
  }

 private:
  void Add(const std::string& rule, const Node& n, std::string message) {
    auto key = std::make_pair(rule, n.span().begin.byte);
    if (!reported_.insert(key).second) return;
    findings_.push_back({rule, n.span(), std::move(message)});
  }

  // ---- names --------------------------------------------------------------------------------
  void CollectAliases(const Node& root) {
    root.Walk([&](const Node& n) {
      if (n.type() == "import_statement") {
        for (const auto& c : n.named_children()) {
          if (c.type() == "dotted_name") {
            std::string full(c.text());
            imported_.push_back({full, c});
            std::string root_name(Root(full));
            aliases_[root_name] = root_name;
          } else if (c.type() == "aliased_import") {
            std::string full(c.field("name").text());
            imported_.push_back({full, c});
            aliases_[std::string(c.field("alias").text())] = full;
          }
        }
      } else if (n.type() == "import_from_statement") {
        Node mod = n.field("module_name");
        std::string m(mod.text());
        if (mod.type() == "relative_import") m = "";  // a package-relative import: nothing we know
        for (const auto& c : n.named_children()) {
          if (c == mod) continue;
          std::string name, alias;
          if (c.type() == "dotted_name") {
            name = std::string(c.text());
            alias = name;
          } else if (c.type() == "aliased_import") {
            name = std::string(c.field("name").text());
            alias = std::string(c.field("alias").text());
          } else if (c.type() == "wildcard_import") {
            if (!m.empty()) imported_.push_back({m, c});
            continue;
          } else {
            continue;
          }
          std::string full = m.empty() ? name : m + "." + name;
          imported_.push_back({full, c});
          if (!m.empty()) aliases_[alias] = full;
        }
      }
      return true;
    });
    // Names the module defines itself shadow builtins (def compile(...) is not the builtin).
    root.Walk([&](const Node& n) {
      if (n.type() == "function_definition" || n.type() == "class_definition") {
        defined_.insert(std::string(n.field("name").text()));
      }
      return true;
    });
  }

  // Resolved dotted name of an identifier/attribute chain ("" when it does not resolve).
  std::string Resolve(const Node& n) const {
    std::string dotted = pyast::Dotted(n);
    std::string_view root = Root(dotted);
    auto it = aliases_.find(std::string(root));
    return it == aliases_.end() ? dotted : it->second + dotted.substr(root.size());
  }

  bool IsBuiltin(const Node& fn, std::string_view name) const {
    return fn.type() == "identifier" && fn.text() == name && !aliases_.count(std::string(name)) &&
           !defined_.count(std::string(name));
  }

  // ---- kernels and launches -----------------------------------------------------------------
  bool IsJitDecorator(const Node& dec) const {
    Node e = dec.named_child(0);
    if (e.type() == "call") e = e.field("function");
    std::string full = Resolve(e);
    return LastPart(full) == "jit" && (Root(full) == "triton" || full == "jit");
  }

  // torch.relu(...) is torch's relu, not the module's own relu().
  bool IsModuleAttr(const Node& attr) const {
    Node base = attr;
    while (base.type() == "attribute") base = base.field("object");
    return base.type() == "identifier" && aliases_.count(std::string(base.text()));
  }

  static bool IsLaunch(const Node& call) {
    return call.type() == "call" && call.field("function").type() == "subscript";
  }

  // Functions that launch a kernel, directly or through other module functions (fixed point).
  void CollectLaunchers(const Node& root) {
    std::map<std::string, std::set<std::string>> calls;
    std::set<std::string> direct;
    root.Walk([&](const Node& n) {
      if (n.type() != "function_definition") return true;
      std::string name(n.field("name").text());
      n.field("body").Walk([&](const Node& m) {
        if (IsLaunch(m)) direct.insert(name);
        if (m.type() == "call") {
          Node f = m.field("function");
          if (f.type() == "identifier") calls[name].insert(std::string(f.text()));
          if (f.type() == "attribute" && !IsModuleAttr(f)) calls[name].insert(std::string(f.field("attribute").text()));
        }
        return true;
      });
      return true;
    });
    launchers_ = direct;
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [fn, callees] : calls) {
        if (launchers_.count(fn)) continue;
        for (const auto& c : callees) {
          if (launchers_.count(c)) {
            launchers_.insert(fn);
            changed = true;
            break;
          }
        }
      }
    }
  }

  bool Launches(const Node& block) const {
    bool found = false;
    block.Walk([&](const Node& m) {
      if (found) return false;
      if (IsLaunch(m)) found = true;
      if (m.type() == "call") {
        Node f = m.field("function");
        std::string_view name = f.type() == "identifier"                      ? f.text()
                                : f.type() == "attribute" && !IsModuleAttr(f) ? f.field("attribute").text()
                                                                              : std::string_view();
        if (!name.empty() && launchers_.count(std::string(name))) found = true;
      }
      return !found;
    });
    return found;
  }

  // ---- rules --------------------------------------------------------------------------------
  void CheckEntry(const Node& root) {
    if (opts_.entry.empty()) return;
    for (const auto& stmt : root.named_children()) {
      Node def = pyast::Definition(stmt);
      if ((def.type() == "class_definition" || def.type() == "function_definition") &&
          def.field("name").text() == opts_.entry) {
        return;
      }
      if (stmt.type() == "expression_statement") {
        Node a = stmt.named_child(0);
        if (a.type() == "assignment" && a.field("left").text() == opts_.entry) return;
      }
    }
    if (aliases_.count(opts_.entry)) return;  // imported under that name
    Add("missing_entry", root.named_child_count() ? root.named_child(0) : root,
        fmt::format("the candidate does not define '{}' at the top level", opts_.entry));
  }

  void CheckKernel(const Node& root) {
    bool any = false;
    root.Walk([&](const Node& n) {
      if (n.type() == "decorator" && IsJitDecorator(n)) any = true;
      return !any;
    });
    if (!any) {
      Add("no_triton_kernel", root.named_child_count() ? root.named_child(0) : root,
          "the candidate defines no @triton.jit kernel");
    }
  }

  void CheckModuleName(const std::string& full, const Node& at) {
    if (TorchCInternal(full, at)) return;
    for (const auto& r : kForbiddenModules) {
      if (StartsWithName(full, r.prefix)) {
        Add(r.rule, at, fmt::format("imports '{}': {} is not allowed in a candidate", full, r.why));
        return;
      }
    }
  }

  // torch._C is fine for raw streams and device queries (Inductor-style code), not for switching off
  // dispatch machinery the harness relies on.
  bool TorchCInternal(const std::string& full, const Node& at) {
    if (!StartsWithName(full, "torch._C") || full == "torch._C") return false;
    std::string_view last = LastPart(full);
    for (std::string_view p : {"_dispatch", "_set", "_Disable", "_disable", "_unset", "_push", "_pop", "_Exclude",
                               "_Include", "_ForceDispatch", "_EnablePython", "_enter", "_exit"}) {
      if (last.substr(0, p.size()) == p) {
        Add("patched_torch", at, fmt::format("uses '{}': switching torch dispatch machinery is not allowed", full));
        return true;
      }
    }
    return false;
  }

  static bool InsideFunction(Node n) {
    for (; !n.is_null(); n = n.parent()) {
      if (n.type() == "function_definition" || n.type() == "lambda") return true;
    }
    return false;
  }

  void CheckName(const std::string& full, const Node& at) {
    if (TorchCInternal(full, at)) return;
    for (const auto& r : kForbiddenNames) {
      if (full == r.prefix) {
        // Seeding once at import time (reference modules do) cannot replay the harness's per-trial
        // inputs; seeding inside the code that runs per call can.
        if (std::string_view(r.why).find("seed") != std::string_view::npos && !InsideFunction(at)) return;
        Add(r.rule, at, fmt::format("uses '{}', which {}", full, r.why));
        return;
      }
    }
    for (const auto& r : kForbiddenModules) {
      // Module-level rules by attribute path too (torch.library.impl, triton.knobs.runtime...).
      if (full == r.prefix && std::string_view(r.prefix).find('.') != std::string_view::npos) {
        Add(r.rule, at, fmt::format("uses '{}': {} is not allowed in a candidate", full, r.why));
        return;
      }
    }
  }

  void CheckAssignTarget(const Node& target, const char* verb) {
    if (target.type() == "pattern_list" || target.type() == "tuple_pattern" || target.type() == "list_pattern" ||
        target.type() == "expression_list" || target.type() == "tuple" || target.type() == "list") {
      for (const auto& c : target.named_children()) CheckAssignTarget(c, verb);
      return;
    }
    Node base = target;
    while (base.type() == "subscript") base = base.field("value");
    if (base.type() != "attribute" && !(base.type() == "identifier" && target.type() == "subscript")) return;
    std::string full = Resolve(base);
    if (full.empty()) return;
    for (const char* root : kPatchRoots) {
      if (Root(full) == root && full != root) {
        Add(PatchCode(full), target, fmt::format("{} '{}': patching {} is not allowed", verb, full, root));
        return;
      }
    }
  }

  static bool HandlerReraises(const Node& block) {
    if (block.named_child_count() == 0) return false;
    Node last = block.named_child(block.named_child_count() - 1);
    return last.type() == "raise_statement";
  }

  bool HandlerComputes(const Node& block) const {
    bool computes = false;
    block.Walk([&](const Node& m) {
      if (m.type() == "return_statement" || m.type() == "assignment" || m.type() == "augmented_assignment" ||
          m.type() == "yield") {
        computes = true;
      } else if (m.type() == "call") {
        std::string fn = Resolve(m.field("function"));
        bool harmless = fn == "print" || StartsWithName(fn, "warnings") || StartsWithName(fn, "logging") ||
                        LastPart(fn) == "debug" || LastPart(fn) == "info" || LastPart(fn) == "warning";
        if (!harmless) computes = true;
      }
      return !computes;
    });
    return computes;
  }

  void CheckTry(const Node& n) {
    Node body = n.field("body");
    bool only_imports = body.named_child_count() > 0;
    for (const auto& s : body.named_children()) {
      if (s.type() != "import_statement" && s.type() != "import_from_statement") only_imports = false;
    }
    if (only_imports) return;  // probing for an optional module is fine
    bool launches = Launches(body);
    for (const auto& c : n.named_children()) {
      if (c.type() != "except_clause" && c.type() != "except_group_clause") continue;
      Node block = c.named_child(c.named_child_count() - 1);
      if (HandlerReraises(block)) continue;
      // Retrying with another Triton launch (smaller blocks after OutOfResources) is not a fallback
      // to non-Triton work; what the retry computes is judged at run time.
      if (Launches(block)) continue;
      std::vector<std::string> types;
      bool bare = c.named_child_count() <= 1;
      if (!bare) {
        Node v = c.named_child(0);
        if (v.type() == "as_pattern") v = v.named_child(0);
        if (v.type() == "tuple" || v.type() == "parenthesized_expression") {
          for (const auto& t : v.named_children()) types.push_back(Resolve(t));
        } else {
          types.push_back(Resolve(v));
        }
      }
      bool broad = bare;
      bool only_import_errors = !bare;
      for (const auto& t : types) {
        for (const char* b : kBroadExceptions) broad |= LastPart(t) == b;
        if (LastPart(t) != "ImportError" && LastPart(t) != "ModuleNotFoundError") only_import_errors = false;
      }
      if (only_import_errors) continue;
      if (launches || (broad && HandlerComputes(block))) {
        std::string what = bare ? "a bare except" : fmt::format("except {}", c.named_child(0).text());
        Add("swallowed_kernel_error", c,
            fmt::format("{} swallows the failure{} without re-raising: a fallback hides a failing kernel", what,
                        launches ? " of a Triton launch" : ""));
      }
    }
  }

  void CheckCall(const Node& n) {
    Node fn = n.field("function");
    Node args = n.field("arguments");
    for (const char* b : kForbiddenBuiltins) {
      if (IsBuiltin(fn, b)) {
        Add("dynamic_code", n, fmt::format("calls {}(): dynamic code escapes the static checks", b));
        return;
      }
    }
    if (IsBuiltin(fn, "setattr") || IsBuiltin(fn, "delattr")) {
      Node obj = args.named_child(0);
      std::string full = Resolve(obj);
      for (const char* root : kPatchRoots) {
        if (!full.empty() && Root(full) == root) {
          Add(PatchCode(full), n, fmt::format("{}() on '{}': patching {} is not allowed", fn.text(), full, root));
          return;
        }
      }
      return;
    }
    if (IsBuiltin(fn, "getattr")) {
      Node obj = args.named_child(0), attr = args.named_child(1);
      std::string full = Resolve(obj);
      std::string lit = pyast::StringLiteralValue(attr);
      for (const char* a : kIntrospectionAttrs) {
        if (lit == a) {
          Add("introspection", n, fmt::format("getattr(..., '{}') reaches into frames or function internals", lit));
          return;
        }
      }
      if (lit.empty() && (Root(full) == "os" || Root(full) == "sys" || Root(full) == "builtins" ||
                          Root(full) == "importlib" || full == "__builtins__")) {
        Add("dynamic_code", n, fmt::format("getattr() on '{}' with a computed name escapes the static checks", full));
      } else if (!lit.empty() && !full.empty()) {
        CheckName(full + "." + lit, n);
      }
      return;
    }
    if (IsBuiltin(fn, "open")) {
      Node mode;
      int positional = 0;
      for (const auto& a : args.named_children()) {
        if (a.type() == "keyword_argument") {
          if (a.field("name").text() == "mode") mode = a.field("value");
        } else if (++positional == 2) {
          mode = a;
        }
      }
      if (!mode.is_null()) {
        std::string m = pyast::StringLiteralValue(mode);
        if (mode.type() != "string" || m.find_first_of("wax+") != std::string::npos) {
          Add("file_write", n, fmt::format("open(..., {}) may write a file", mode.text()));
        }
      }
      return;
    }
    if (fn.type() == "attribute") {
      std::string_view attr = fn.field("attribute").text();
      if (attr == "write_text" || attr == "write_bytes" || attr == "tofile") {
        Add("file_write", n, fmt::format(".{}() writes a file", attr));
        return;
      }
      std::string full = Resolve(fn);
      if (StartsWithName(full, "os.environ") && full != "os.environ.get" && full != "os.environ.copy" &&
          full != "os.environ.items" && full != "os.environ.keys" && full != "os.environ.values") {
        Add("patched_environment", n, fmt::format("{}() changes the environment", full));
        return;
      }
      if (LastPart(full) == "suppress" && Root(full) == "contextlib") {
        Add("swallowed_kernel_error", n, "contextlib.suppress() swallows failures");
        return;
      }
      if (StartsWithName(full, "os") &&
          (LastPart(full).substr(0, 4) == "exec" || LastPart(full).substr(0, 5) == "spawn" ||
           LastPart(full).substr(0, 5) == "posix")) {
        Add("process_spawn", n, fmt::format("calls {}(): starting programs is not allowed", full));
        return;
      }
    }
  }

  void Visit(const Node& n) {
    std::string_view t = n.type();
    if (t == "import_statement" || t == "import_from_statement") {
      for (const auto& [full, at] : imported_) {
        if (at.parent() == n || at.parent().parent() == n) CheckModuleName(full, at);
      }
      if (t == "import_from_statement") {
        Node mod = n.field("module_name");
        if (mod.type() == "dotted_name") CheckModuleName(std::string(mod.text()), mod);
      }
    } else if (t == "attribute") {
      std::string_view attr = n.field("attribute").text();
      for (const char* a : kIntrospectionAttrs) {
        if (attr == a) {
          Add("introspection", n, fmt::format("'.{}' reaches into frames or function internals", attr));
          return;
        }
      }
      std::string full = Resolve(n);
      if (!full.empty()) CheckName(full, n);
    } else if (t == "identifier") {
      if (n.text() == "__builtins__") Add("introspection", n, "'__builtins__' gives access to the builtins");
      // An imported name used bare (from sys import _getframe; from os import system).
      auto it = aliases_.find(std::string(n.text()));
      if (it != aliases_.end() && it->second.find('.') != std::string::npos) {
        Node p = n.parent();
        bool is_import = p.type() == "dotted_name" || p.type() == "aliased_import";
        bool is_attr_name = p.type() == "attribute" && p.field("attribute") == n;
        if (!is_import && !is_attr_name) CheckName(it->second, n);
      }
    } else if (t == "call") {
      CheckCall(n);
    } else if (t == "assignment" || t == "augmented_assignment") {
      CheckAssignTarget(n.field("left"), "assigns");
    } else if (t == "delete_statement") {
      for (const auto& c : n.named_children()) CheckAssignTarget(c, "deletes");
    } else if (t == "try_statement") {
      CheckTry(n);
    } else if (t == "global_statement") {
      // `global x` inside a function is fine; nothing to check.
    }
  }

  const pyast::Tree& tree_;
  const StaticCheckOptions& opts_;
  std::map<std::string, std::string> aliases_;  // local name -> dotted module path
  std::vector<std::pair<std::string, Node>> imported_;
  std::set<std::string> defined_;
  std::set<std::string> launchers_;
  std::vector<StaticFinding> findings_;
  std::set<std::pair<std::string, uint32_t>> reported_;
};

}  // namespace

std::vector<StaticFinding> StaticCheck(const pyast::Tree& tree, const StaticCheckOptions& opts) {
  return Checker(tree, opts).Run();
}

}  // namespace kiln::exec
