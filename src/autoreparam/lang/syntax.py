"""Program text -> IR, with lark (LALR(1) and an indentation post-lexer); no eval, no exec."""

from __future__ import annotations

import functools
import math
import re
from importlib import resources

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError
from lark.indenter import DedentError, Indenter

from autoreparam.lang import ir
from autoreparam.lang.errors import ProgramError

BASE_TYPES = ("int", "real")

# How a terminal is named in "expected ..." messages.
_READABLE = {
    "_NL": "end of line", "_INDENT": "an indented block", "_DEDENT": "end of the indented block",
    "NAME": "a name", "NUMBER": "a number", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "COMMA": "','", "COLON": "':'", "TILDE": "'~'", "EQUAL": "'='", "PLUS": "'+'", "MINUS": "'-'",
    "STAR": "'*'", "SLASH": "'/'", "__ANON_0": "'..'", "$END": "end of program",
}


class _ProgramIndenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 4

    def handle_NL(self, token):
        # lark's DedentError names no line; the offending line is the one this newline token ends on.
        levels = list(self.indent_level)
        try:
            yield from super().handle_NL(token)
        except DedentError:
            indent = token.rsplit("\n", 1)[1]
            width = indent.count(" ") + indent.count("\t") * self.tab_len
            blocks = ", ".join(map(str, levels))
            raise ProgramError("syntax", ir.Pos(token.end_line, token.end_column), f"this line is indented {width} "
                               f"space(s), but the enclosing blocks are indented {blocks}: indent it as far as the "
                               "block it belongs to") from None


# Expressions nest at most this deep (a sum of n terms is n levels; parentheses add none). The
# transformer, the checker, the printer and the evaluator recurse once or more per level; far deeper,
# Python's recursion limit would stop one of them with a bare RecursionError.
MAX_NESTING = 200
_STATEMENTS = ("data_decl", "observe", "sample", "assign", "for_loop")


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("autoreparam.lang").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", postlex=_ProgramIndenter(), propagate_positions=True, maybe_placeholders=False)


def _pos(meta_or_token) -> ir.Pos:
    return ir.Pos(getattr(meta_or_token, "line", 0) or 0, getattr(meta_or_token, "column", 0) or 0)


def _number(token: Token) -> int | float:
    text = str(token)
    if not any(c in text for c in ".eE"):
        if int(text) > 2**53:
            # Beyond 2**53 an integer is not exact in float64, and JAX's integers stop at 2**31 (a literal
            # of 1e23 failed as a bare TypeError inside JAX; found in review).
            raise ProgramError("syntax", _pos(token), f"the integer {text} is too large (at most 2**53 = "
                               f"{2**53}); write it as a real number, e.g. {float(text):.6g}")
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        # float("1e400") is inf: it would print back as `inf`, which is not a number in this language.
        raise ProgramError("syntax", _pos(token), f"the number {text} is too large to represent (the largest is "
                           "about 1.8e308); write a smaller constant, or rescale the model")
    return value


@v_args(meta=True)
class _ToIR(Transformer):
    # One method per grammar rule; each returns an IR node positioned at its first token.

    def start(self, meta, statements):
        return ir.Program(tuple(statements))

    def data_decl(self, meta, children):
        name, type_ = children
        return ir.DataDecl(str(name), type_, _pos(meta))

    def type(self, meta, children):
        base, *dims = children
        if str(base) not in BASE_TYPES:
            raise ProgramError("syntax", _pos(base), f"unknown type '{base}'; expected one of: int, real")
        return ir.Type(str(base), tuple(dims))

    def observe(self, meta, children):
        name, value = children
        return ir.Observe(str(name), value, _pos(meta))

    def signed_number(self, meta, children):
        value = _number(children[-1])
        return -value if len(children) == 2 else value

    def array_literal(self, meta, children):
        return tuple(children)

    def sample(self, meta, children):
        target, dist, *args = children
        return ir.Sample(target, str(dist), tuple(args), _pos(meta))

    def assign(self, meta, children):
        target, value = children
        return ir.Assign(target, value, _pos(meta))

    def for_loop(self, meta, children):
        var, lower, upper, *body = children
        return ir.For(str(var), lower, upper, tuple(body), _pos(meta))

    def binop(self, meta, children):
        left, op, right = children
        return ir.BinOp(str(op), left, right, _pos(meta))

    def neg(self, meta, children):
        _, operand = children
        return ir.Neg(operand, _pos(meta))

    def number(self, meta, children):
        return ir.Num(_number(children[0]), _pos(meta))

    def var(self, meta, children):
        return ir.Var(str(children[0]), _pos(meta))

    def index(self, meta, children):
        name, *indices = children
        return ir.Index(str(name), tuple(indices), _pos(meta))

    def call(self, meta, children):
        name, *args = children
        return ir.Call(str(name), tuple(args), _pos(meta))


def _expected(names) -> str:
    readable = sorted({_READABLE.get(n, f"'{n.lower()}'" if n.isupper() else n) for n in names})
    return ", ".join(readable)


def _after_for_header(source: str, line: int) -> bool:
    # True when the last non-blank line before `line` opens a for loop and `line` is not indented under
    # it (its body was not indented). An error inside an indented body is an ordinary one (found in review).
    lines = source.splitlines()
    previous = [t for t in lines[: line - 1] if t.strip() and not t.strip().startswith("#")]
    # The keyword, not any name that begins with it (`forecast ~ ...`).
    if not previous or re.match(r"for\b", previous[-1].lstrip()) is None:
        return False
    current = lines[line - 1] if 0 < line <= len(lines) else ""
    return not current.strip() or _indentation(current) <= _indentation(previous[-1])


def _indentation(line: str) -> int:
    text = line.expandtabs(_ProgramIndenter.tab_len)
    return len(text) - len(text.lstrip())


def _check_first_line(source: str):
    # The grammar's whitespace rule swallows the first line's indentation (no newline precedes it), so
    # an indented first line was read as unindented: "  for ..." then a body at the same depth compiled
    # as a loop (found in review).
    first = source.split("\n", 1)[0]
    if first.strip() and not first.lstrip().startswith("#") and first[:1] in (" ", "\t"):
        raise ProgramError("syntax", ir.Pos(1, 1), "the first statement is indented; start it at column 1 "
                           "(only the body of a for loop is indented)")


def _syntax_error(error: UnexpectedInput, source: str) -> ProgramError:
    pos = ir.Pos(getattr(error, "line", 0) or 0, getattr(error, "column", 0) or 0)
    if isinstance(error, UnexpectedCharacters):
        if error.char == "\\":
            return ProgramError("syntax", pos, "unexpected character '\\'; write '~' for a sample statement, not '\\sim'")
        return ProgramError("syntax", pos, f"unexpected character {error.char!r}; expected {_expected(error.allowed)}")
    if isinstance(error, UnexpectedEOF):
        return ProgramError("syntax", pos, f"unexpected end of program; expected {_expected(error.expected)}")
    assert isinstance(error, UnexpectedToken)
    token = error.token
    if token.type in ("_INDENT", "_DEDENT"):
        # The indenter dates these tokens at the preceding newline; the indentation is on the next line.
        pos = ir.Pos(token.end_line or pos.line, token.end_column or 1)
    if token.type != "_INDENT" and _after_for_header(source, pos.line):
        return ProgramError("syntax", pos, "expected an indented block: the body of a for loop is indented under it")
    if token.type == "$END":
        found = "end of program"
    elif token.type == "_NL":
        found = "end of line"
    elif token.type in ("_INDENT", "_DEDENT"):
        found = "indentation"
    else:
        found = repr(str(token))
    return ProgramError("syntax", pos, f"unexpected {found}; expected {_expected(error.expected)}")


def _check_nesting(tree: Tree):
    # Iterative, so that the check itself cannot hit the recursion limit it guards against.
    # The error points at the statement holding the expression (its deepest node is some term inside).
    stack = [(tree, 0, tree)]
    while stack:
        node, depth, statement = stack.pop()
        if node.data in _STATEMENTS:  # depth counts from the statement: loops may nest as they like
            statement, depth = node, 0
        if depth > MAX_NESTING:
            raise ProgramError("syntax", _pos(statement.meta), f"an expression here nests more than {MAX_NESTING} "
                               "levels deep (chained terms of a sum or product, minus signs, nested calls): split it "
                               "into several assignments, e.g. `s1 = ...` then `s = s1 + ...`")
        stack.extend((child, depth + 1, statement) for child in node.children if isinstance(child, Tree))


def parse(text: str, *, path: str = "<program>") -> ir.Program:
    """The IR of a program's text; a `ProgramError` naming line and column if it is not one."""
    source = text if text.endswith("\n") else text + "\n"
    try:
        _check_first_line(source)
        tree = _parser().parse(source)
        _check_nesting(tree)
        return _ToIR().transform(tree)
    except UnexpectedInput as error:
        raise _syntax_error(error, source).located(text, path) from None
    except ProgramError as error:  # from the indenter or the nesting check
        raise error.located(text, path) from None
    except VisitError as error:
        if isinstance(error.orig_exc, ProgramError):
            raise error.orig_exc.located(text, path) from None
        raise
    except RecursionError:
        # Only when the caller's own stack is already deep: MAX_NESTING keeps programs well inside the limit.
        raise ProgramError("syntax", None, "the program nests too deeply to parse here: split long expressions into "
                           "several assignments", path=path) from None
