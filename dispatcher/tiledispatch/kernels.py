"""Pydantic models of what the registry reports: kernels and per-kernel support verdicts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from generators.enums import DataType, Direction


class KernelInfo(BaseModel):
    """One instance of the loaded library: CK's kernel name and instance string, and its signature."""

    model_config = ConfigDict(frozen=True)

    name: str
    instance_string: str
    direction: Direction
    dtype: DataType
    ndim_spatial: Literal[2, 3]
    family: Literal["implicit_gemm", "depthwise", "streamk"]


class Support(BaseModel):
    """Whether `kernel` computes a problem; when not, the reason the kernel gave."""

    model_config = ConfigDict(frozen=True)

    kernel: str
    supported: bool
    reason: str = ""
