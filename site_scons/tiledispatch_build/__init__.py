"""Pure-Python pieces of the tiledispatch SCons build: options, toolchain resolution, compile flags, jobs.

Nothing here imports SCons, so each piece is testable on its own; the tools in ``site_scons/site_tools`` wire
them into an SCons environment.
"""
