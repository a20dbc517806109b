"""Learned kernel selection: tile-engine sweeps, per-direction tree models, evaluation and ranking.

The pipeline (docs/heuristics.md): ``problems`` derives the per-direction problem sets, ``sweep`` runs every
instance of a rule set on every problem (local GPUs or a Dask cluster), ``train`` fits one LightGBM model per
direction and exports its trees to a compact text format that Python (``tree_model``) and C++
(``instances/include/tiledispatch/selection``) evaluate alike, ``evaluate`` reports held-out efficiency.
"""
