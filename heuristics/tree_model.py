"""The exported tree ensemble: a compact text format that Python and C++ read alike.

Format (one token list per line, whitespace separated; ``selection/tree_model.hpp`` parses the same)::

    tiledispatch-trees 1
    direction <fwd|bwd_data|bwd_weight>
    features <F>
    <feature name>            F lines, the order of heuristics.features.FEATURE_NAMES
    trees <T>
    tree <I>                  I internal nodes (0: the tree is one leaf)
    <split feature per internal node>
    <threshold per internal node>    go left when value <= threshold
    <left child per internal node>   >= 0 an internal node, < 0 the leaf ~child
    <right child per internal node>
    <leaf values>             I + 1 values

The score of a row is the sum over trees of the leaf it reaches; only the order of scores is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

FORMAT_TAG = "tiledispatch-trees"
FORMAT_VERSION = 1
MODEL_SUFFIX = ".trees"  # <direction>.trees


class TreeModelError(ValueError):
    """A model file that does not follow the format; the message names the line."""


class Tree(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    split_feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    leaf_value: tuple[float, ...]

    @model_validator(mode="after")
    def _check(self) -> Tree:
        internal = len(self.split_feature)
        if not len(self.threshold) == len(self.left) == len(self.right) == internal:
            raise ValueError("split, threshold and child lists differ in length")
        if len(self.leaf_value) != internal + 1:
            raise ValueError(
                f"{internal} internal nodes need {internal + 1} leaves, got {len(self.leaf_value)}"
            )
        for child in (*self.left, *self.right):
            if not (-internal - 1 <= child < internal):
                raise ValueError(f"child {child} out of range")
        return self


class TreeModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    direction: str
    feature_names: tuple[str, ...]
    trees: tuple[Tree, ...]

    @model_validator(mode="after")
    def _check(self) -> TreeModel:
        for tree in self.trees:
            if any(not 0 <= f < len(self.feature_names) for f in tree.split_feature):
                raise ValueError("a split names a feature outside the feature list")
        return self

    def predict(self, rows: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
        """Scores of rows (n x F, float64)."""
        x = np.asarray(rows, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.feature_names):
            raise ValueError(f"expected rows of {len(self.feature_names)} features, got shape {x.shape}")
        total = np.zeros(x.shape[0])
        index = np.arange(x.shape[0])
        for tree in self.trees:
            if not tree.split_feature:
                total += tree.leaf_value[0]
                continue
            feature, threshold = np.asarray(tree.split_feature), np.asarray(tree.threshold)
            left, right, leaves = np.asarray(tree.left), np.asarray(tree.right), np.asarray(tree.leaf_value)
            node = np.zeros(x.shape[0], dtype=np.int64)
            active = node >= 0
            while active.any():
                at = node[active]
                go_left = x[index[active], feature[at]] <= threshold[at]
                node[active] = np.where(go_left, left[at], right[at])
                active = node >= 0
            total += leaves[~node]
        return total

    def to_text(self) -> str:
        lines = [
            f"{FORMAT_TAG} {FORMAT_VERSION}",
            f"direction {self.direction}",
            f"features {len(self.feature_names)}",
            *self.feature_names,
            f"trees {len(self.trees)}",
        ]
        for tree in self.trees:
            lines.append(f"tree {len(tree.split_feature)}")
            lines.append(" ".join(str(v) for v in tree.split_feature))
            lines.append(" ".join(repr(float(v)) for v in tree.threshold))
            lines.append(" ".join(str(v) for v in tree.left))
            lines.append(" ".join(str(v) for v in tree.right))
            lines.append(" ".join(repr(float(v)) for v in tree.leaf_value))
        return "\n".join(lines) + "\n"


def parse_model(text: str, source: str = "<model>") -> TreeModel:
    """Reads ``to_text``'s format; ``TreeModelError`` names the first bad line."""
    lines = text.splitlines()
    at = 0

    def take(what: str) -> list[str]:
        nonlocal at
        if at >= len(lines):
            raise TreeModelError(f"{source}: ends before {what}")
        at += 1
        return lines[at - 1].split()

    def keyed(key: str) -> str:
        tokens = take(key)
        if len(tokens) != 2 or tokens[0] != key:
            raise TreeModelError(f"{source}:{at}: expected '{key} <value>'")
        return tokens[1]

    def numbers(kind: type, count: int, what: str) -> tuple:
        tokens = take(what)
        try:
            values = tuple(kind(v) for v in tokens)
        except ValueError:
            raise TreeModelError(f"{source}:{at}: {what}: not a number list") from None
        if len(values) != count:
            raise TreeModelError(f"{source}:{at}: {what}: {len(values)} values, expected {count}")
        return values

    header = take("the header")
    if header != [FORMAT_TAG, str(FORMAT_VERSION)]:
        raise TreeModelError(f"{source}:1: not a '{FORMAT_TAG} {FORMAT_VERSION}' file")
    direction = keyed("direction")
    try:
        feature_count = int(keyed("features"))
        names = tuple(take("a feature name")[0] for _ in range(feature_count))
        tree_count = int(keyed("trees"))
        trees = []
        for _ in range(tree_count):
            internal = int(keyed("tree"))
            trees.append(
                Tree(
                    split_feature=numbers(int, internal, "split features"),
                    threshold=numbers(float, internal, "thresholds"),
                    left=numbers(int, internal, "left children"),
                    right=numbers(int, internal, "right children"),
                    leaf_value=numbers(float, internal + 1, "leaf values"),
                )
            )
        return TreeModel(direction=direction, feature_names=names, trees=tuple(trees))
    except ValidationError as error:
        raise TreeModelError(f"{source}:{at}: {error.errors()[0]['msg']}") from None
    except (ValueError, IndexError) as error:
        if isinstance(error, TreeModelError):
            raise
        raise TreeModelError(f"{source}:{at}: {str(error).splitlines()[0]}") from None


def load_model(path: str | Path) -> TreeModel:
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise TreeModelError(f"{source}: cannot read: {error.strerror}") from None
    return parse_model(text, str(source))


def _convert_tree(structure: dict) -> Tree:
    split_feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    leaves: list[float] = []

    def visit(node: dict) -> int:
        if "leaf_value" in node:
            leaves.append(float(node["leaf_value"]))
            return ~(len(leaves) - 1)
        if node.get("decision_type") != "<=" or node.get("missing_type") == "Zero":
            raise ValueError(f"unsupported split {node.get('decision_type')} / {node.get('missing_type')}")
        index = len(split_feature)
        split_feature.append(int(node["split_feature"]))
        threshold.append(float(node["threshold"]))
        left.append(0)
        right.append(0)
        left[index] = visit(node["left_child"])
        right[index] = visit(node["right_child"])
        return index

    visit(structure)
    return Tree(
        split_feature=tuple(split_feature),
        threshold=tuple(threshold),
        left=tuple(left),
        right=tuple(right),
        leaf_value=tuple(leaves),
    )


def from_lightgbm_dump(dump: dict, direction: str, feature_names: Sequence[str]) -> TreeModel:
    """Converts ``Booster.dump_model()`` (numerical ``<=`` splits only) into a TreeModel."""
    trees = tuple(_convert_tree(info["tree_structure"]) for info in dump["tree_info"])
    return TreeModel(direction=direction, feature_names=tuple(feature_names), trees=trees)
