# task: relu
# expect: compile_error missing_entry
# tries: defines no ModelNew.
import torch


class SomethingElse:
    pass
