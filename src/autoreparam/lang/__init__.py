"""A small modelling language compiled to NumPyro (the slides' syntax; docs/language.md).

    from autoreparam.lang import compile_program
    model, args, kwargs = compile_program("examples/eight_schools.arp", "eight_schools.data.json")
    result = autoreparam.infer(model, *args, **kwargs)

Pipeline: text -> `parse` (lark grammar, `grammar.lark`) -> IR (`ir.py`) -> `check` (names, types,
arity, loop modes) -> data bound and dry-run checked (sizes, index ranges) -> NumPyro model.
`print_program` turns the IR back into text. This package sits below `infer` and above `reparam`:
it imports neither `infer`, `auto` nor `cli`, and importing it reads no file.
"""

from autoreparam.lang.check import check
from autoreparam.lang.compiler import CompiledProgram, compile_program
from autoreparam.lang.data import read_data
from autoreparam.lang.distributions import DISTRIBUTIONS
from autoreparam.lang.errors import ProgramError
from autoreparam.lang.printer import print_expr, print_program
from autoreparam.lang.syntax import parse

PROGRAM_SUFFIX = ".arp"

__all__ = [
    "DISTRIBUTIONS",
    "PROGRAM_SUFFIX",
    "CompiledProgram",
    "ProgramError",
    "check",
    "compile_program",
    "parse",
    "print_expr",
    "print_program",
    "read_data",
]
