"""ctypes bindings of the C API (instances/include/tiledispatch/c_api.h). ``NativeLibrary`` owns one loaded
``libtiledispatch_<ruleset>.so``; every call checks the returned status and raises ``LibraryError`` with the
library's own message. Loading the library and every call make no CUDA call except ``run``,
``device_sm_count``, ``split_k`` and ``plan`` with ``sms`` 0, the workspace query at ``K_BATCH_AUTO``, and
the workspace query of kernels that size their workspace by the SM count (stream-K, and Hopper-path
bwd_weight where it folds)."""

from __future__ import annotations

import ctypes
from pathlib import Path

from generators.enums import DataType, Direction

from .errors import LibraryError
from .problem import Problem

API_VERSION = 2
# td_conv_args.k_batch that leaves the split-K factor to the library (TD_K_BATCH_AUTO)
K_BATCH_AUTO = -1
# kMaxSplitK (runtime/split_k.hpp): no instance offers more factors
_MAX_SPLIT_K = 64

_DIRECTIONS = (Direction.FWD, Direction.BWD_DATA, Direction.BWD_WEIGHT)
_DTYPES = (DataType.FP16, DataType.BF16, DataType.FP32)


class CProblem(ctypes.Structure):
    _fields_ = [
        ("ndim_spatial", ctypes.c_int32),
        ("direction", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("G", ctypes.c_int64),
        ("N", ctypes.c_int64),
        ("K", ctypes.c_int64),
        ("C", ctypes.c_int64),
        ("input", ctypes.c_int64 * 3),
        ("filter", ctypes.c_int64 * 3),
        ("stride", ctypes.c_int64 * 3),
        ("dilation", ctypes.c_int64 * 3),
        ("left_pad", ctypes.c_int64 * 3),
        ("right_pad", ctypes.c_int64 * 3),
    ]


class CKernelInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("instance_string", ctypes.c_char_p),
        ("direction", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("ndim_spatial", ctypes.c_int32),
        ("family", ctypes.c_char_p),
    ]


class CArgs(ctypes.Structure):
    _fields_ = [
        ("input", ctypes.c_void_p),
        ("weight", ctypes.c_void_p),
        ("output", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("k_batch", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("stream", ctypes.c_void_p),
    ]


def to_c_problem(problem: Problem) -> CProblem:
    """The C spelling: D, H, W arrays (a 2D problem has D extents 1), symmetric pads."""
    triple = ctypes.c_int64 * 3
    pads = triple(problem.pad_d, problem.pad_h, problem.pad_w)
    return CProblem(
        problem.ndim_spatial,
        _DIRECTIONS.index(problem.direction),
        _DTYPES.index(problem.dtype),
        problem.G,
        problem.N,
        problem.K,
        problem.C,
        triple(problem.Di, problem.Hi, problem.Wi),
        triple(problem.Z, problem.Y, problem.X),
        triple(problem.stride_d, problem.stride_h, problem.stride_w),
        triple(problem.dilation_d, problem.dilation_h, problem.dilation_w),
        pads,
        triple(*pads),
    )


_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "td_conv_api_version": (ctypes.c_int, []),
    "td_conv_last_error": (ctypes.c_char_p, []),
    "td_conv_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "td_conv_init": (ctypes.c_int, []),
    "td_conv_cleanup": (ctypes.c_int, []),
    "td_conv_get_kernel_count": (ctypes.c_int, [ctypes.POINTER(ctypes.c_size_t)]),
    "td_conv_kernel_info": (ctypes.c_int, [ctypes.c_size_t, ctypes.POINTER(CKernelInfo)]),
    "td_conv_problem_validate": (ctypes.c_int, [ctypes.POINTER(CProblem)]),
    "td_conv_is_supported": (
        ctypes.c_int,
        [
            ctypes.c_char_p,
            ctypes.POINTER(CProblem),
            ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_char_p),
        ],
    ),
    "td_conv_select_kernel": (ctypes.c_int, [ctypes.POINTER(CProblem), ctypes.POINTER(ctypes.c_char_p)]),
    "td_conv_workspace_size": (
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.POINTER(CProblem), ctypes.c_int32, ctypes.POINTER(ctypes.c_size_t)],
    ),
    "td_conv_split_k": (
        ctypes.c_int,
        [
            ctypes.c_char_p,
            ctypes.POINTER(CProblem),
            ctypes.c_int32,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    "td_conv_plan": (
        ctypes.c_int,
        [
            ctypes.c_char_p,
            ctypes.POINTER(CProblem),
            ctypes.c_int32,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_int32),
        ],
    ),
    "td_conv_device_sm_count": (ctypes.c_int, [ctypes.c_int32, ctypes.POINTER(ctypes.c_int32)]),
    "td_conv_run": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(CProblem), ctypes.POINTER(CArgs)]),
    "td_conv_export_registry_json": (ctypes.c_int, [ctypes.POINTER(ctypes.c_char_p)]),
}


class NativeLibrary:
    """One loaded shared library with its C API bound and initialised."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()
        if not self.path.is_file():
            raise LibraryError(
                f"no shared library at {self.path}; build one with Registry.build() or scons lib"
            )
        try:
            self._lib = ctypes.CDLL(str(self.path), mode=ctypes.RTLD_LOCAL)
        except OSError as error:
            raise LibraryError(f"cannot load {self.path}: {error}") from None
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                function = getattr(self._lib, name)
            except AttributeError:
                raise LibraryError(f"{self.path} lacks {name}: not a tiledispatch C API library") from None
            function.restype = restype
            function.argtypes = argtypes
        version = self._lib.td_conv_api_version()
        if version != API_VERSION:
            raise LibraryError(f"{self.path} has C API version {version}; this package speaks {API_VERSION}")
        self.check(self._lib.td_conv_init(), "td_conv_init")

    def check(self, status: int, call: str) -> None:
        if status != 0:
            name = self._lib.td_conv_status_name(status).decode()
            raise LibraryError(f"{call}: {self._lib.td_conv_last_error().decode()}", name)

    def kernel_count(self) -> int:
        count = ctypes.c_size_t()
        self.check(self._lib.td_conv_get_kernel_count(ctypes.byref(count)), "td_conv_get_kernel_count")
        return count.value

    def kernel_info(self, index: int) -> dict[str, object]:
        info = CKernelInfo()
        self.check(self._lib.td_conv_kernel_info(index, ctypes.byref(info)), "td_conv_kernel_info")
        return {
            "name": info.name.decode(),
            "instance_string": info.instance_string.decode(),
            "direction": _DIRECTIONS[info.direction],
            "dtype": _DTYPES[info.dtype],
            "ndim_spatial": info.ndim_spatial,
            "family": info.family.decode(),
        }

    def validate(self, problem: Problem) -> None:
        c_problem = to_c_problem(problem)
        self.check(self._lib.td_conv_problem_validate(ctypes.byref(c_problem)), "td_conv_problem_validate")

    def is_supported(self, kernel: str, problem: Problem) -> tuple[bool, str]:
        c_problem = to_c_problem(problem)
        supported, reason = ctypes.c_int(), ctypes.c_char_p()
        status = self._lib.td_conv_is_supported(
            kernel.encode(), ctypes.byref(c_problem), ctypes.byref(supported), ctypes.byref(reason)
        )
        self.check(status, "td_conv_is_supported")
        return bool(supported.value), (reason.value or b"").decode()

    def select(self, problem: Problem) -> str:
        c_problem = to_c_problem(problem)
        name = ctypes.c_char_p()
        self.check(self._lib.td_conv_select_kernel(ctypes.byref(c_problem), ctypes.byref(name)), "select")
        return name.value.decode()

    def workspace_size(self, kernel: str, problem: Problem, k_batch: int) -> int:
        c_problem = to_c_problem(problem)
        size = ctypes.c_size_t()
        status = self._lib.td_conv_workspace_size(
            kernel.encode(), ctypes.byref(c_problem), k_batch, ctypes.byref(size)
        )
        self.check(status, "td_conv_workspace_size")
        return size.value

    def split_k(self, kernel: str, problem: Problem, sms: int) -> tuple[int, tuple[int, ...]]:
        """(preferred, candidates) of `kernel` for `problem` on `sms` SMs (0: the current device's count)."""
        c_problem = to_c_problem(problem)
        preferred, count = ctypes.c_int32(), ctypes.c_size_t()
        factors = (ctypes.c_int32 * _MAX_SPLIT_K)()
        status = self._lib.td_conv_split_k(
            kernel.encode(),
            ctypes.byref(c_problem),
            sms,
            ctypes.byref(preferred),
            factors,
            _MAX_SPLIT_K,
            ctypes.byref(count),
        )
        self.check(status, "td_conv_split_k")
        return preferred.value, tuple(factors[: min(count.value, _MAX_SPLIT_K)])

    def plan(self, kernel: str | None, problem: Problem, sms: int) -> tuple[str, int]:
        """(kernel, split-K) the library launches for `problem` on `sms` SMs (`kernel` None: any)."""
        c_problem = to_c_problem(problem)
        chosen, k_batch = ctypes.c_char_p(), ctypes.c_int32()
        name = kernel.encode() if kernel is not None else None
        status = self._lib.td_conv_plan(
            name, ctypes.byref(c_problem), sms, ctypes.byref(chosen), ctypes.byref(k_batch)
        )
        self.check(status, "td_conv_plan")
        return chosen.value.decode(), k_batch.value

    def device_sm_count(self, device: int) -> int:
        sms = ctypes.c_int32()
        self.check(self._lib.td_conv_device_sm_count(device, ctypes.byref(sms)), "td_conv_device_sm_count")
        return sms.value

    def run(
        self,
        kernel: str | None,
        problem: Problem,
        pointers: tuple[int, int, int],
        k_batch: int,
        device: int,
        stream: int,
        workspace: tuple[int, int] = (0, 0),
    ) -> None:
        c_problem = to_c_problem(problem)
        args = CArgs(*pointers, workspace[0] or None, workspace[1], k_batch, device, stream or None)
        name = kernel.encode() if kernel is not None else None
        self.check(self._lib.td_conv_run(name, ctypes.byref(c_problem), ctypes.byref(args)), "td_conv_run")

    def registry_json(self) -> str:
        text = ctypes.c_char_p()
        self.check(self._lib.td_conv_export_registry_json(ctypes.byref(text)), "td_conv_export_registry_json")
        return text.value.decode()
