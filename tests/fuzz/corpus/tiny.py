import triton
@triton.jit
def k(x, B: tl.constexpr):
    tl.store(x, 1)
k[(1,)](x, B=2)
