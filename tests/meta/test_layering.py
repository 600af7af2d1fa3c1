"""meta/ sits below infer and above reparam/graph/vi: it imports neither infer, auto, cli nor meta_eval."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "autoreparam"
FORBIDDEN = ("autoreparam.infer", "autoreparam.auto", "autoreparam.cli", "autoreparam.compare",
             "autoreparam.benchmark", "autoreparam.meta_eval", "autoreparam.mcmc", "autoreparam.sampling")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def test_meta_imports_nothing_above_it():
    files = sorted((SRC / "meta").glob("*.py"))
    assert len(files) > 5
    for path in files:
        for name in _imports(path):
            assert not name.startswith(FORBIDDEN), f"meta/{path.name} imports {name}"


def test_infer_uses_meta_and_meta_eval_sits_above_infer():
    assert any(n.startswith("autoreparam.meta.") for n in _imports(SRC / "infer.py"))
    for path in sorted((SRC / "meta_eval").glob("*.py")):
        assert not any(n.startswith("autoreparam.benchmark") for n in _imports(path)), path.name
