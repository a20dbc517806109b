"""A stand-in generator package for the build tests: same build_api contract, trivial kernels."""
