"""NVIDIA GPUs through LLVM's NVPTX back end (XLA's "new backend" scenario 2): a sibling
of llvm-cpu over the shared HLO, fusion, loop IR and LLVM core (``backend/llvm``)."""
