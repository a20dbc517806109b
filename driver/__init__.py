"""tiledispatch driver: the layer that runs the stages for its two front ends, the command line and SCons.

It sits above ``generators`` (configuration model, validity, names, emit) and ``rulesets`` (what to
enumerate), and is the only package that imports both: ``driver.build_api`` is the in-process API the SCons
generate tool calls (``plan``, ``generate``), ``driver.cli`` the command behind ``python -m generators``.
Driver in the compiler-driver sense (as ``nvcc`` drives its compilation stages), not the CUDA driver.
Dependencies go one way: driver -> rulesets -> generators (docs/architecture.md, "Layers").
"""
