# task: relu
# expect: compile_error import_error
# tries: imports a module that does not exist.
import torch
import kiln_no_such_module_xyz  # noqa: F401
