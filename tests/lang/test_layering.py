"""lang/ and corpus/ sit below infer and above reparam: they import neither infer, auto nor cli."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "autoreparam"
FORBIDDEN = ("autoreparam.infer", "autoreparam.auto", "autoreparam.cli", "autoreparam.compare", "autoreparam.benchmark")


@pytest.mark.parametrize("package", ["lang", "corpus"])
def test_no_upward_imports(package):
    files = sorted((SRC / package).glob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"
