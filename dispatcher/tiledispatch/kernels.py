"""Pydantic models of what the registry reports: kernels, per-kernel support verdicts, split-K factors and
launch plans."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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


class SplitK(BaseModel):
    """The split-K factors `kernel` offers for a problem on a GPU of `sms` multiprocessors: `candidates`
    (ascending; what the profiler tries) and `preferred`, the instance's own rule among them (the largest that
    keeps every work unit in one round on the SMs), which the library's plan falls back to where its models
    cannot rank. Not bwd_weight: (1,)."""

    model_config = ConfigDict(frozen=True)

    kernel: KernelInfo
    sms: int = Field(ge=1)
    candidates: tuple[int, ...] = Field(min_length=1)
    preferred: int

    @model_validator(mode="after")
    def _preferred_is_a_candidate(self) -> SplitK:
        if self.preferred not in self.candidates:
            raise ValueError(f"preferred split-K {self.preferred} is not among {self.candidates}")
        return self


class Launch(BaseModel):
    """What runs a problem: a kernel and its split-K factor (1 outside bwd_weight)."""

    model_config = ConfigDict(frozen=True)

    kernel: KernelInfo
    split_k: int = Field(ge=1)
