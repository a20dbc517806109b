"""A stand-in driver package for the build tests: same build_api contract, trivial kernels."""
