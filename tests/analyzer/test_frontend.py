"""The front end: discovery, module names, the cheap relevance check, decoding and parsing."""

from __future__ import annotations

from pathlib import Path

import pytest
from devicelint import frontend
from devicelint.imports import (
    ProjectModuleTarget,
    ProjectNameTarget,
    Resolver,
    ShimModuleTarget,
    ShimNameTarget,
    StarTarget,
    UnknownTarget,
)


def make(tmp_path: Path, files: dict[str, str | bytes]) -> list[frontend.SourceFile]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return frontend.load(frontend.discover([str(tmp_path)]))


def test_discovery_and_module_names(tmp_path: Path) -> None:
    sources = make(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/mod.py": "",
                              "script.py": "", ".venv/lib.py": "", "pkg/__pycache__/x.py": "", "notes.txt": ""})
    names = sorted((s.module, s.is_package) for s in sources)
    assert names == [("pkg", True), ("pkg.sub", True), ("pkg.sub.mod", False), ("script", False)]
    mod = next(s for s in sources if s.module == "pkg.sub.mod")
    assert mod.package == "pkg.sub"
    assert next(s for s in sources if s.module == "pkg.sub").package == "pkg.sub"
    with pytest.raises(frontend.PathError):
        frontend.discover([str(tmp_path / "missing")])


def test_relevance_is_a_substring_fixpoint(tmp_path: Path) -> None:
    sources = make(tmp_path, {
        "a.py": "import runtime_shim\n",
        "b.py": "import a\n",  # mentions a relevant module
        "c.py": "from b import x\n",  # transitively
        "d.py": "print('unrelated')\n",
    })
    assert sorted(s.module for s in frontend.relevant(sources)) == ["a", "b", "c"]


def test_with_the_pytorch_rules_the_modules_analyzed_files_import_are_analyzed(tmp_path: Path) -> None:
    """A helper that moves a model in place, or a config module naming the device, need not mention torch."""
    sources = make(tmp_path, {
        "train.py": "import torch\nfrom pk.helpers import place\nfrom settings import DEVICE\n",
        "pk/__init__.py": "",
        "pk/helpers.py": "from .moves import go\n\ndef place(model, device):\n    model.to(device)\n",
        "pk/moves.py": "def go(model):\n    return model\n",
        "settings.py": "DEVICE = 'cuda'\n",
        "unrelated.py": "print('unrelated')\n",
    })
    with_torch = sorted(s.module for s in frontend.relevant(sources, torch=True))
    assert with_torch == ["pk", "pk.helpers", "pk.moves", "settings", "train"]
    assert sorted(s.module for s in frontend.relevant(sources)) == []


def test_decoding_and_parse_failures(tmp_path: Path) -> None:
    sources = {s.module: s for s in make(tmp_path, {
        "good.py": "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1"),
        "bom.py": b"\xef\xbb\xbfx = 1\n",
        "bad_utf8.py": b"x = '\xff'\n",
        "syntax.py": "def f(:\n",
        "nul.py": b"x = 1\x00\n",
    })}
    assert frontend.parse(sources["good"]) is None and "café" in sources["good"].text
    assert frontend.parse(sources["bom"]) is None and sources["bom"].text.startswith("x")
    failure = frontend.parse(sources["bad_utf8"])
    assert failure is not None and failure.line == 1 and "decode" in failure.message
    failure = frontend.parse(sources["syntax"])
    assert failure is not None and failure.line == 1 and "parse" in failure.message
    assert frontend.parse(sources["nul"]) is not None


def test_import_resolution() -> None:
    import ast

    resolver = Resolver({"pkg", "pkg.models", "pkg.train", "tools"})

    def resolve(code: str, package: str = "pkg") -> list:
        return resolver.resolve(ast.parse(code).body[0], package)  # type: ignore[arg-type]

    assert resolve("import runtime_shim as rs") == [("rs", ShimModuleTarget("runtime_shim"))]
    assert resolve("import runtime_shim.semantics") == [("runtime_shim", ShimModuleTarget("runtime_shim"))]
    assert resolve("from runtime_shim import Device as D, Tensor") == [("D", ShimNameTarget("Device")),
                                                                      ("Tensor", ShimNameTarget("Tensor"))]
    assert resolve("from runtime_shim.tensor import Tensor") == [("Tensor", ShimNameTarget("Tensor"))]
    assert resolve("from runtime_shim import semantics") == [("semantics", ShimModuleTarget("runtime_shim.semantics"))]
    unknown = UnknownTarget("runtime_shim.semantics.cell")
    assert resolve("from runtime_shim.semantics import cell") == [("cell", unknown)]
    assert resolve("from . import models") == [("models", ProjectNameTarget("pkg", "models"))]
    assert resolve("from .models import Net") == [("Net", ProjectNameTarget("pkg.models", "Net"))]
    assert resolve("from ..x import y", "pkg") == [("y", UnknownTarget("x.y"))]
    assert resolve("import pkg.models") == [("pkg", ProjectModuleTarget("pkg"))]
    assert resolve("import pkg.models as m") == [("m", ProjectModuleTarget("pkg.models"))]
    assert resolve("from tools import *") == [("*", StarTarget("tools"))]
    assert resolve("import numpy as np") == [("np", UnknownTarget("numpy"))]


def test_a_model_moved_by_a_helper_that_never_mentions_torch_is_moved(tmp_path: Path) -> None:
    from devicelint.runner import check
    from devicelint.settings import Settings

    make(tmp_path, {
        "train.py": "import torch\nfrom pk.helpers import place\n\nmodel = torch.nn.Linear(4, 2)\n"
                    "place(model, 'cuda')\ny = model(torch.randn(3, 4).cuda())\n",
        "pk/__init__.py": "",
        "pk/helpers.py": "def place(model, device):\n    model.to(device)\n",
    })
    assert check([str(tmp_path)], Settings(jobs=1, select=("MV2",))).diagnostics == []
