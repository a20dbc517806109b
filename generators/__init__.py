"""tiledispatch generators: configuration model, validity rules, names, instance strings and C++ emission.

Three stages, as in CUTLASS's ``cutlass_library``: *enumerate* (``rulesets`` x arch spec -> configurations),
*validate* (``generators.validity``, the one module of legality rules) and *emit* (``generators.emit``,
Jinja2 only). Listing configurations renders nothing.
"""
