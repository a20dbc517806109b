"""Whether this machine has an NVIDIA GPU (for tests whose expectation depends on it)."""

from __future__ import annotations

import shutil
import subprocess


def gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    probe = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    return probe.returncode == 0 and "GPU" in probe.stdout
