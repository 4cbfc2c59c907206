"""A CUDA device guard for CPU-only builds of torch, so fake CUDA tensors can carry autograd.

CPU builds register no ``DeviceGuardImpl`` for CUDA; autograd asks one for the stream of every
CUDA tensor it records (``InputMetadata``) and the process aborts (``PyTorch is not linked with
support for cuda devices``, a C++ ``terminate``). PyTorch ships ``c10::impl::FakeGuardImpl`` for
tests; registering it for CUDA is one line of C++, compiled once per torch build and cached.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

SOURCE = """\
#include <c10/core/impl/FakeGuardImpl.h>
// runtime_shim.torch_observer: fake CUDA devices on a CPU-only torch build.
C10_REGISTER_GUARD_IMPL(CUDA, c10::impl::FakeGuardImpl<c10::DeviceType::CUDA>);
"""

_loaded: str | None = None


class GuardUnavailable(RuntimeError):
    """The guard could not be built (no C++ compiler, no torch headers): CUDA autograd cannot run fake.
    Its message is one line that says what to do."""


#: What a user is told to do when there is no compiler.
INSTALL_HINT = "install a C++ compiler (Debian: apt-get install g++) or set CXX"


def needed() -> bool:
    """CPU builds only: a CUDA build has its own guard (and would be overridden)."""
    return not torch.backends.cuda.is_built()


def cache_dir() -> Path:
    base = os.environ.get("RUNTIME_SHIM_TORCH_EXT_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "runtime_shim")
    key = hashlib.sha256(f"{torch.__version__}|{torch.__file__}|{sys.version}|{SOURCE}".encode()).hexdigest()[:16]
    return Path(base) / f"fake_cuda_guard-{key}"


def _build(target: Path) -> None:
    from torch.utils.cpp_extension import include_paths, library_paths

    compiler_words = shlex.split(os.environ.get("CXX") or "c++")
    if not compiler_words or shutil.which(compiler_words[0]) is None:
        named = compiler_words[0] if compiler_words else "c++"
        raise GuardUnavailable(f"no C++ compiler ({named!r} not found) to build the fake CUDA guard: {INSTALL_HINT}")
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        source = Path(tmp) / "fake_cuda_guard.cpp"
        source.write_text(SOURCE, encoding="utf-8")
        built = Path(tmp) / target.name
        libs = library_paths()
        command = [*compiler_words, "-shared", "-fPIC", "-O1", "-std=c++17", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
                   *(f"-I{p}" for p in include_paths()), str(source), "-o", str(built),
                   *(f"-L{p}" for p in libs), *(f"-Wl,-rpath,{p}" for p in libs), "-lc10"]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise GuardUnavailable(f"cannot compile the fake CUDA guard with {compiler_words[0]}: {error}; "
                                   f"{INSTALL_HINT}") from error
        if proc.returncode != 0:
            raise GuardUnavailable(f"cannot compile the fake CUDA guard with {compiler_words[0]}: "
                                   f"{_first_error(proc.stderr)}")
        os.replace(built, target)  # atomic: concurrent builders each install a whole library


def _first_error(output: str) -> str:
    """The compiler's first error line (the rest is context), so that the message stays one line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line), lines[0] if lines else "no output")


def build() -> Path:
    """The guard's library, compiled on first use (a runner checks this before it starts programs)."""
    target = cache_dir() / "fake_cuda_guard.so"
    if not target.exists():
        _build(target)
    return target


def load() -> str | None:
    """Register the fake CUDA guard in this process (building it on first use); its path, or
    ``None`` on a CUDA build, which needs none."""
    global _loaded
    if _loaded is not None or not needed():
        return _loaded
    target = build()
    ctypes.CDLL(str(target), mode=ctypes.RTLD_GLOBAL)  # the static registrar runs on load
    _loaded = str(target)
    return _loaded
