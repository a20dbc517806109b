"""The problem model at the Python boundary: generators.problem.ConvProblem plus what a run needs to know
(direction, data type, spatial rank), and its C spelling (``td_conv_problem``)."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from generators.enums import DataType, Direction
from generators.problem import ConvProblem


class Problem(ConvProblem):
    """One grouped convolution to run: sizes as in the CK problem CSV (N, C, K, G, Di, Hi, Wi, Z, Y, X,
    strides, symmetric pads, dilations), the direction and the data type. ``spatial_dims`` forces 3D for a
    problem whose
    depth extents are all 1 (otherwise the rank follows from the depth fields)."""

    direction: Direction = Direction.FWD
    dtype: DataType = DataType.FP16
    spatial_dims: Literal[2, 3] | None = None

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: object) -> object:
        return _enum_value(Direction, value, "direction")

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, value: object) -> object:
        return _enum_value(DataType, value, "dtype")

    @property
    def ndim_spatial(self) -> int:
        if self.spatial_dims is not None:
            return self.spatial_dims
        return super().ndim_spatial

    def replace(self, **changes: object) -> Problem:
        """A validated copy with `changes` applied (pydantic's model_copy would not validate them)."""
        return Problem.model_validate({**self.model_dump(), **changes})

    def with_direction(self, direction: Direction | str) -> Problem:
        """The same sizes for another direction (forward, backward data and backward weight share them)."""
        return self.replace(direction=direction)

    def describe(self) -> str:
        """One line: direction, dtype and sizes, for messages."""
        d, h, w = self.output_spatial
        depth = f"D{self.Di}xZ{self.Z} " if self.ndim_spatial == 3 else ""
        return (
            f"{self.direction.value} {self.dtype.value} {self.ndim_spatial}D "
            f"G={self.G} N={self.N} K={self.K} "
            f"C={self.C} {depth}in {self.Hi}x{self.Wi} filter {self.Y}x{self.X} stride {self.stride_h}x"
            f"{self.stride_w} pad {self.pad_h}x{self.pad_w} dilation {self.dilation_h}x{self.dilation_w} "
            f"-> out {d}x{h}x{w}"
        )


def _enum_value(enum: type[Direction] | type[DataType], value: object, field: str) -> object:
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except ValueError:
        accepted = ", ".join(member.value for member in enum)
        raise ValueError(f"bad {field} {value!r}; accepted: {accepted}") from None
