# task: kiln:examples/softmax
# candidate: self
# expect: ok
# tries: the bundled kiln-format example (examples/softmax) against its torch reference, at INTERPRET_CASES sizes.
