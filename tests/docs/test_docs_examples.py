"""Every Python block of the docs runs as written (examples must not rot)."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _blocks():
    for page in sorted(DOCS.glob("*.md")):
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            yield pytest.param(block, id=f"{page.stem}-{i}")


@pytest.mark.parametrize("code", list(_blocks()))
def test_docs_block_runs(code, capsys):
    exec(compile(code, "<docs>", "exec"), {"__name__": "__docs__"})
