"""bwd_weight of a grouped 3x3 layer (32 groups of 8 channels, 28x28, N=16) with the selected kernel,
checked against PyTorch in float64 and timed against PyTorch/cuDNN. GPU only:

    python3 examples/python/conv_bwd_weight.py --library build/tiny-sm_90a/lib/libtiledispatch_tiny.so
"""

from example_support import main_guard, run_direction

if __name__ == "__main__":
    main_guard(lambda: run_direction("bwd_weight"))
