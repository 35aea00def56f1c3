# task: corpus:kernelbench/examples/model_ex_add.py
# candidate: corpus:kernelbench/examples/model_new_ex_add_triton.py
# expect: ok
# tries: the KernelBench Triton example against its reference (the candidate source is read from the corpus;
#        this file only carries the header).
