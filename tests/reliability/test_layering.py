"""reliability/ sits above infer, like benchmark/: nothing else in the library imports it but the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "autoreparam"


def test_only_the_command_line_imports_reliability():
    for path in sorted(SRC.rglob("*.py")):
        if "reliability" in path.relative_to(SRC).parts or path.name == "cli.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.startswith("autoreparam.reliability") for n in names), f"{path} imports {names}"
