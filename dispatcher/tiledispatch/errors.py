"""The exceptions of the Python runtime. Each message names the bad value and what was expected."""

from __future__ import annotations


class TiledispatchError(Exception):
    """Base of every error this package raises."""


class LibraryError(TiledispatchError):
    """The shared library could not be loaded, or a C API call failed (``status`` is the td_status name)."""

    def __init__(self, message: str, status: str = "") -> None:
        super().__init__(f"{status}: {message}" if status else message)
        self.status = status


class UnsupportedProblemError(TiledispatchError):
    """No kernel (or not the named kernel) supports the problem."""


class TensorError(TiledispatchError, ValueError):
    """A tensor argument has the wrong shape, dtype, layout, alignment or device."""


class BuildError(TiledispatchError):
    """The SCons build failed; the message ends with the build's last output lines."""
