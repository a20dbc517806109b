"""What a run needs from a tensor (device pointer, shape, strides, dtype, device), read from a PyTorch tensor,
any object with ``__cuda_array_interface__`` (CuPy, Numba, PyTorch) or a DLPack producer, and the checks
against a problem: shape, dtype, channels-last layout, device and the 16-byte alignment of the kernels."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from math import prod
from typing import Any

from generators.enums import DataType, Direction

from .errors import TensorError
from .problem import Problem

ALIGNMENT = 16  # bytes: TD_ALIGNMENT in c_api.h

_TORCH_DTYPES = {
    "torch.float16": DataType.FP16,
    "torch.bfloat16": DataType.BF16,
    "torch.float32": DataType.FP32,
}
_CAI_DTYPES = {"<f2": DataType.FP16, "<f4": DataType.FP32, "|V2": None}
_DLPACK_CUDA = 2
_DLPACK_DTYPES = {(2, 16): DataType.FP16, (2, 32): DataType.FP32, (4, 16): DataType.BF16}


@dataclass(frozen=True)
class TensorView:
    """A device tensor as the C API sees it; ``keepalive``: what must outlive the run (a DLPack capsule)."""

    role: str
    pointer: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: DataType | None
    dtype_text: str
    device_type: str  # "cuda" or what the tensor says it is on
    device_index: int  # -1 when the producer does not say
    framework: str  # torch | cuda_array_interface | dlpack
    keepalive: object = None


def _is_torch(tensor: object) -> bool:
    return type(tensor).__module__.split(".")[0] == "torch" and hasattr(tensor, "data_ptr")


def _from_torch(role: str, t: Any) -> TensorView:
    return TensorView(
        role,
        int(t.data_ptr()),
        tuple(int(s) for s in t.shape),
        tuple(int(s) for s in t.stride()),
        _TORCH_DTYPES.get(str(t.dtype)),
        str(t.dtype),
        t.device.type,
        -1 if t.device.index is None else int(t.device.index),
        "torch",
    )


def _from_cuda_array_interface(role: str, tensor: Any, cai: dict[str, Any]) -> TensorView:
    shape = tuple(int(s) for s in cai["shape"])
    typestr = str(cai["typestr"])
    dtype = _CAI_DTYPES.get(typestr)
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
    if cai.get("strides") is None:
        strides = tuple(prod(shape[i + 1 :]) for i in range(len(shape)))
    else:
        byte_strides = tuple(int(s) for s in cai["strides"])
        if any(s % itemsize for s in byte_strides):
            raise TensorError(f"{role}: strides {byte_strides} bytes are not a multiple of the element size")
        strides = tuple(s // itemsize for s in byte_strides)
    device = getattr(tensor, "device", None)
    index = getattr(device, "id", None)
    return TensorView(
        role,
        int(cai["data"][0] or 0),
        shape,
        strides,
        dtype,
        typestr,
        "cuda",
        -1 if index is None else int(index),
        "cuda_array_interface",
    )


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


def _from_dlpack(role: str, tensor: Any) -> TensorView:
    """Reads the DLTensor inside the producer's capsule without consuming it: the capsule keeps the producer's
    memory alive until the view is dropped, and its destructor then releases it."""
    capsule = tensor.__dlpack__()
    # A prototype of our own, rather than setting argtypes on the shared ctypes.pythonapi function.
    prototype = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
    get_pointer = prototype(("PyCapsule_GetPointer", ctypes.pythonapi))
    try:
        address = get_pointer(capsule, b"dltensor")
    except ValueError:
        raise TensorError(f"{role}: the DLPack capsule is not an unconsumed 'dltensor'") from None
    dl = _DLTensor.from_address(address)  # DLManagedTensor starts with its DLTensor
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    if dl.strides:
        strides = tuple(dl.strides[i] for i in range(dl.ndim))
    else:
        strides = tuple(prod(shape[i + 1 :]) for i in range(len(shape)))
    code, bits, lanes = dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
    dtype = _DLPACK_DTYPES.get((code, bits)) if lanes == 1 else None
    device_type = (
        "cuda" if dl.device.device_type == _DLPACK_CUDA else f"dlpack device type {dl.device.device_type}"
    )
    return TensorView(
        role,
        int(dl.data or 0) + int(dl.byte_offset),
        shape,
        strides,
        dtype,
        f"dlpack code {code} bits {bits} lanes {lanes}",
        device_type,
        int(dl.device.device_id),
        "dlpack",
        keepalive=capsule,
    )


def view_of(role: str, tensor: object) -> TensorView:
    """The view of one argument; ``TensorError`` when it is no device tensor at all."""
    if _is_torch(tensor):
        return _from_torch(role, tensor)
    cai = getattr(tensor, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cuda_array_interface(role, tensor, cai)
    if hasattr(tensor, "__dlpack__"):
        return _from_dlpack(role, tensor)
    raise TensorError(
        f"{role}: {type(tensor).__name__} is not a device tensor (no __cuda_array_interface__, no __dlpack__)"
    )


def logical_shapes(problem: Problem) -> dict[str, tuple[int, ...]]:
    """PyTorch's logical shapes: input (N, C, [D,] H, W), weight (K, C/G, [Z,] Y, X), output (N, K, ...)."""
    three = problem.ndim_spatial == 3
    do, ho, wo = problem.output_spatial
    spatial_in = (problem.Di, problem.Hi, problem.Wi) if three else (problem.Hi, problem.Wi)
    spatial_f = (problem.Z, problem.Y, problem.X) if three else (problem.Y, problem.X)
    spatial_out = (do, ho, wo) if three else (ho, wo)
    return {
        "input": (problem.N, problem.C, *spatial_in),
        "weight": (problem.K, problem.C // problem.G, *spatial_f),
        "output": (problem.N, problem.K, *spatial_out),
    }


def _channels_last_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a (d0, d1, spatial...) tensor stored d0, spatial..., d1 (PyTorch's channels_last[_3d])."""
    order = [0, *range(2, len(shape)), 1]  # outermost to innermost
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= shape[dim]
    return tuple(strides)


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(prod(shape[i + 1 :]) for i in range(len(shape)))


def _same_strides(view: TensorView, expected: tuple[int, ...]) -> bool:
    """Strides agree on every dimension of size > 1 (a size-1 dimension's stride is arbitrary)."""
    return all(size == 1 or s == e for size, s, e in zip(view.shape, view.strides, expected, strict=True))


def _packed_shapes(problem: Problem, role: str) -> list[tuple[int, ...]]:
    """The row-major channels-last shapes accepted: NDHWGC / NDHWC, GKZYXC / KZYXC, NDHWGK / NDHWK."""
    logical = logical_shapes(problem)[role]
    spatial = logical[2:]
    g = problem.G
    if role == "weight":
        k, cg = logical[0], logical[1]
        return [(g, k // g, *spatial, cg), (k, *spatial, cg)]
    n, channels = logical[0], logical[1]
    return [(n, *spatial, g, channels // g), (n, *spatial, channels)]


def check_layout(view: TensorView, problem: Problem) -> None:
    """Accepts the logical PyTorch shape in channels_last memory, or a row-major channels-last shape (NHWGC,
    NHWC, ...). When both readings fit one shape, a PyTorch tensor is read as logical NC[D]HW (PyTorch's
    convention), any other tensor as row-major channels-last."""
    logical = logical_shapes(problem)[view.role]
    packed = [shape for shape in _packed_shapes(problem, view.role) if shape == view.shape]
    if packed and not (view.framework == "torch" and view.shape == logical):
        if _same_strides(view, _row_major(packed[0])):
            return
        if view.shape != logical:
            raise TensorError(
                f"{view.role}: shape {view.shape} with strides {view.strides} is not contiguous; expected "
                f"strides {_row_major(packed[0])}"
            )
    if view.shape == logical:
        if _same_strides(view, _channels_last_strides(logical)):
            return
        what = "contiguous NC[D]HW" if _same_strides(view, _row_major(logical)) else "not channels-last"
        suffix = "_3d" if problem.ndim_spatial == 3 else ""
        raise TensorError(
            f"{view.role}: shape {view.shape} with strides {view.strides} is {what}; the kernels read "
            f"channels-last memory (NHWGC / GKYXC / NHWGK): pass "
            f"tensor.contiguous(memory_format=torch.channels_last{suffix})"
        )
    accepted = " or ".join(str(s) for s in [logical, *_packed_shapes(problem, view.role)])
    raise TensorError(f"{view.role}: shape {view.shape} does not match the problem; expected {accepted}")


def check_views(views: list[TensorView], problem: Problem) -> int:
    """Checks the three views against `problem`; returns the device ordinal they share (-1: unknown)."""
    for view in views:
        if view.device_type != "cuda":
            raise TensorError(f"{view.role}: tensor is on {view.device_type}, not on a CUDA device")
        if view.dtype is None or view.dtype is not problem.dtype:
            raise TensorError(
                f"{view.role}: dtype {view.dtype_text} does not match the problem's {problem.dtype.value}"
            )
        check_layout(view, problem)
        if view.pointer % ALIGNMENT:
            raise TensorError(
                f"{view.role}: data pointer {view.pointer:#x} is not {ALIGNMENT}-byte aligned (a view with a "
                "storage offset?); pass a fresh contiguous copy"
            )
    devices = {view.device_index for view in views if view.device_index >= 0}
    if len(devices) > 1:
        where = ", ".join(f"{view.role} on cuda:{view.device_index}" for view in views)
        raise TensorError(f"tensors are on different devices: {where}")
    return devices.pop() if devices else -1


def written_role(direction: Direction) -> str:
    """The tensor a direction writes: fwd the output, bwd_data the input, bwd_weight the weight."""
    return {Direction.FWD: "output", Direction.BWD_DATA: "input", Direction.BWD_WEIGHT: "weight"}[direction]
