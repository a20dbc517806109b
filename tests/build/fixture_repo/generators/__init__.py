"""The generators package of the build-test sandbox: only ``atomic_files`` (copied in by
``build_sandbox.make_sandbox``), which the build tools write through."""
