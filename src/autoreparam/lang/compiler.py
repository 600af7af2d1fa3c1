"""Checked program + data -> a NumPyro model function, after a dry run that checks sizes and ranges.

A vectorised loop nest becomes nested ``numpyro.plate``s (outermost loop at the leftmost batch dim)
and each sample statement in it one site, named after its variable; an unrolled loop (a sequential
model, see `check.py`) becomes one scalar site per element, named ``x[3]``. The model takes the
observed variables as keyword arguments; passing ``None`` samples them (prior predictive).
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpyro

from autoreparam.lang import ir
from autoreparam.lang.check import MAX_UNROLLED, CheckedProgram, check
from autoreparam.lang.data import bind_data, read_data
from autoreparam.lang.distributions import lookup
from autoreparam.lang.errors import ProgramError
from autoreparam.lang.evaluate import ElementArray, Evaluator, Loop, is_static, jax_ready
from autoreparam.lang.printer import print_expr
from autoreparam.lang.syntax import parse
from autoreparam.lang.values import check_literals, first_invalid_element, invalid_parameter_advice
from autoreparam.precision import float_dtype


# Elements of nested vectorised loops (plates): 10^8 float32 values are 400 MB per copy, and the sampler
# holds several copies per chain; a size from a mistyped data field would fail deep inside NumPy.
MAX_PLATE_ELEMENTS = 10**8


class _Run:
    """One execution of a program: the dry run (``checking``) or the NumPyro model's body."""

    def __init__(self, checked: CheckedProgram, env: dict, observed: dict, checking: bool,
                 source: tuple[str | None, str | None] = (None, None)):
        self.checked = checked
        self.source = source  # (program text, path): where an error found while the model runs points
        self.observed = observed  # observed name -> array or None (sample it)
        # The dry run watches every data field's reads (``_check_coverage``): data no statement uses is an error.
        self.ev = Evaluator(env, checking, watched=tuple(checked.data) if checking else ())
        self.checking = checking
        self.sampled: dict[str, set] = {}  # observed name -> keys of its elements observed one by one
        self.sampled_whole: set[str] = set()  # observed names sampled in one statement (or a loop's vector)
        self.latent: set[str] = set()  # names whose values depend on a latent (the dry run has zeros for them)

    @property
    def env(self):
        return self.ev.env

    def scalar(self, expr) -> int:
        return int(np.asarray(self.ev.eval(expr)).reshape(()))

    def block(self, statements):
        for stmt in statements:
            if isinstance(stmt, ir.For):
                self.loop(stmt)
            elif isinstance(stmt, ir.Sample):
                self.sample(stmt)
            elif isinstance(stmt, ir.Assign):
                self.assign(stmt)

    def loop(self, stmt: ir.For):
        lower, upper = self.scalar(stmt.lower), self.scalar(stmt.upper)
        if id(stmt) in self.checked.unrolled:
            if upper - lower + 1 > MAX_UNROLLED:
                raise ProgramError("shape", stmt.pos, f"this sequential loop has {upper - lower + 1} steps; loops that "
                                   f"read their own earlier elements are unrolled, up to {MAX_UNROLLED} steps")
            for t in range(lower, upper + 1):
                self.ev.unrolled[stmt.var] = t
                self.block(stmt.body)
            self.ev.unrolled.pop(stmt.var, None)
            if upper < lower:
                # No steps: empty arrays, as a vectorised loop defines (a name was left undefined, and read
                # later as if it were missing data; found in review). Elements defined before the loop
                # (x[1] ~ ..., then t in 2 .. T) stay; observed data must then be empty unless elements of
                # it were observed before the loop (y[1] ~ ..., then t in 2 .. T with T = 1: refused as a
                # shape error, and the data would have been replaced by zeros; found in review).
                self._define_empty([s for s in stmt.body if s.target.name not in self.env or (
                    s.target.name in self.observed and not self.sampled.get(s.target.name))], (0,))
            return
        size = max(upper - lower + 1, 0)
        elements = size * int(np.prod(self.ev.loop_shape(), dtype=np.int64))
        if elements > MAX_PLATE_ELEMENTS:
            raise ProgramError("shape", stmt.pos, f"these loops hold {elements:,} elements; at most "
                               f"{MAX_PLATE_ELEMENTS:,} fit in memory beside the sampler: check the loop bounds and "
                               "the sizes in the data")
        if size == 0:
            self._define_empty(stmt.body, self.ev.loop_shape() + (0,))
            return
        outer = self.ev.loops[-1].plate + " > " if self.ev.loops else ""
        plate = f"{outer}{stmt.var} in {print_expr(stmt.lower)}..{print_expr(stmt.upper)}"
        self.ev.loops.append(Loop(stmt.var, lower, size, plate))
        self.block(stmt.body)
        self.ev.loops.pop()

    def _define_empty(self, statements, shape):
        # A loop with no iterations defines empty arrays; its observed data must be empty too. A nested
        # loop's bounds depend on data alone (check.py), so its size is known here too.
        for stmt in statements:
            if isinstance(stmt, ir.For):
                size = max(self.scalar(stmt.upper) - self.scalar(stmt.lower) + 1, 0)
                self._define_empty(stmt.body, shape + (size,))
            elif isinstance(stmt, (ir.Sample, ir.Assign)):
                name = stmt.target.name
                if name in self.observed and self.observed[name] is not None:
                    self._check_observed_shape(stmt, self.observed[name], shape)
                self.env[name] = np.zeros(shape)

    def _check_observed_shape(self, stmt, value, shape):
        if self.checking and tuple(np.shape(value)) != tuple(shape):
            raise ProgramError("shape", stmt.pos, f"observed '{stmt.target.name}' has shape {tuple(np.shape(value))}, "
                               f"but this statement's loops give {tuple(shape)}")

    def _arguments(self, stmt: ir.Sample):
        spec = lookup(stmt.dist)
        values = []
        for param, arg in zip(spec.params, self._argument_exprs(stmt)):
            if self.checking and self._depends_on_latent(arg):
                self._check_data_parts(arg, f"{spec.name}'s {param}")
            value = self.ev.eval(arg)
            if is_static(value) and param not in spec.int_params:
                value = self._as_model_float(value, f"{spec.name}'s {param}", stmt)
            values.append(value)
        return spec, values

    @staticmethod
    def _as_model_float(value, what: str, stmt) -> np.ndarray:
        """A constant-and-data value in the model's float type; one beyond that type's range is refused.

        Cast silently, ``normal(1e39, 1)`` became ``normal(inf, 1)`` in float32 behind NumPy's overflow
        warning (found in review).
        """
        exact = np.asarray(value, dtype=np.float64)
        largest = float(np.finfo(float_dtype()).max)
        beyond = np.isfinite(exact) & (np.abs(exact) > largest)
        if np.any(beyond):
            shown = np.ravel(exact[beyond] if exact.ndim else exact)[0]
            raise ProgramError("value", stmt.pos, f"{what} is {shown:g} here, beyond the numbers the model computes "
                               f"with (magnitude at most {largest:.2g}): rescale the model, or enable 64-bit JAX "
                               "(jax.config.update('jax_enable_x64', True))")
        return exact.astype(float_dtype())

    def _element_key(self, target: ir.Index) -> tuple[int, ...]:
        key = tuple(self.scalar(i) for i in target.indices)
        if self.checking and any(k < 1 for k in key):
            # An element 0 or -1 would be its own site, then break the array it belongs to when read whole.
            raise ProgramError("shape", target.pos, f"{target.name}[{', '.join(map(str, key))}]: indices start at 1; "
                               "number the elements from 1 (shift the loop, e.g. `for (t in 1 .. T)`)")
        return key

    def sample(self, stmt: ir.Sample):
        spec, values = self._arguments(stmt)
        name = stmt.target.name
        is_observed = name in self.checked.observed
        data = self.observed.get(name) if is_observed else None
        if isinstance(stmt.target, ir.Var) or self.ev.loops:
            shape = self.ev.loop_shape()
            if data is not None:
                self._check_observed_shape(stmt, data, shape)
                self.sampled_whole.add(name)
            else:
                self.latent.add(name)
            self.env[name] = self.site(name, spec, values, data, stmt)
            return
        key = self._element_key(stmt.target)
        site = f"{name}[{','.join(map(str, key))}]"
        if data is not None:
            if self.checking and any(not 1 <= k <= n for k, n in zip(key, np.shape(data))):
                raise ProgramError("shape", stmt.pos, f"{site} is outside the observed data (shape {np.shape(data)})")
            if key in self.sampled.setdefault(name, set()):
                raise ProgramError("name", stmt.pos, f"{site} is observed twice; sample each observed element once")
            self.sampled[name].add(key)
            self.site(site, spec, values, data[tuple(k - 1 for k in key)], stmt)
            return
        self.latent.add(name)
        array = self.env.setdefault(name, ElementArray(name, len(key)))
        if key in array.elements:
            raise ProgramError("name", stmt.pos, f"{site} is defined twice")
        array.elements[key] = self.site(site, spec, values, None, stmt)

    def site(self, name, spec, values, obs, stmt):
        if self.checking:
            if obs is not None and spec.support == "int" and not np.all(np.asarray(obs) == np.round(obs)):
                raise ProgramError("data", stmt.pos, f"'{stmt.target.name}' is observed from {spec.name}, "
                                   "which needs integer data")
            self._check_param_rule(name, spec, values, stmt)
            if obs is None:
                self._check_fixed_support(spec, stmt)
            if obs is not None:
                self._check_domain(name, spec, values, obs, stmt)
            return obs if obs is not None else np.zeros(self.ev.loop_shape())
        if obs is not None and spec.support == "real" and isinstance(obs, np.ndarray):
            obs = obs.astype(float_dtype())
        for param, value in zip(spec.params, values):
            if is_static(value) and not np.all(np.isfinite(np.asarray(value, dtype=np.float64))):
                raise ProgramError("value", stmt.pos, f"{spec.name}'s {param} is infinite or NaN here (e.g. a division "
                                   "by zero among the constants or data)").located(*self.source)
        values = [jax_ready(v) for v in values]  # NumPyro computes with JAX: no integer may wrap around
        try:
            fn = spec.build(*values)
        except ValueError as error:
            # NumPyro validates concrete parameters: constants and data (which the dry run, with no
            # distributions, cannot check), or a latent's value when the model runs eagerly.
            raise ProgramError("value", stmt.pos, f"{spec.name}'s parameters are invalid at site "
                               f"'{name}{first_invalid_element(spec, values, error)}' ({error}); "
                               f"{invalid_parameter_advice(spec, values, error)}").located(*self.source) from None
        loops = self.ev.loops
        with contextlib.ExitStack() as stack:
            for depth, loop in enumerate(loops):
                # NumPyro needs one dim per plate name, but a loop's dim depends on how deep the statement
                # sits: `for i` alone is at -1, as the outer loop of a nest at -2. So the name carries the
                # dim when it is not -1 (innermost loops and lone loops, all the corpus has, keep theirs).
                dim = depth - len(loops)
                plate = loop.plate if dim == -1 else f"{loop.plate} (dim {dim})"
                stack.enter_context(numpyro.plate(plate, loop.size, dim=dim))
            return numpyro.sample(name, fn, obs=obs)

    def _check_fixed_support(self, spec, stmt):
        """A latent's support may not move with another latent (``x ~ uniform(0, s)``): no fixed map to
        unconstrained space exists. Refused here with the language's own rewrite; it reached site
        analysis, whose advice is NumPyro code (found in review)."""
        moving = [param for param, arg in zip(spec.params, self._argument_exprs(stmt))
                  if param in spec.domain_params and self._depends_on_latent(arg)]
        if moving:
            target = print_expr(stmt.target)
            verb = "depends" if len(moving) == 1 else "depend"
            raise ProgramError("type", stmt.pos, f"latent '{target}' ~ {spec.name}: its {' and '.join(moving)} "
                               f"{verb} on a latent, so its support moves with that latent, which autoreparam "
                               "cannot map to unconstrained space; sample it on a fixed support and scale it, e.g. "
                               "for x ~ uniform(0, s) write `u ~ uniform(0, 1)` then `x = s * u`")

    def _check_param_rule(self, site, spec, values, stmt):
        """In the dry run, a rule among constant-and-data parameters that NumPyro leaves unchecked."""
        if spec.param_rule is None or any(self._depends_on_latent(arg) for arg in self._argument_exprs(stmt)):
            return  # latents are 0 in the dry run; a latent bound is the likelihood's business
        what, valid = spec.param_rule
        args = {param: np.asarray(value, dtype=np.float64) for param, value in zip(spec.params, values)}
        mask = np.asarray(valid(args))
        if not np.all(mask):
            shown = ", ".join(f"{param} = {np.ravel(np.broadcast_to(value, mask.shape)[~mask])[0]:g}"
                              for param, value in args.items())
            raise ProgramError("value", stmt.pos, f"{spec.name} at site '{site}' needs {what}, but here {shown}: its "
                               "log density would be NaN; check the constants and data this statement gives it")

    def _check_domain(self, site, spec, values, obs, stmt):
        if spec.domain is None:
            return
        args = dict(zip(spec.params, values))
        if any(self._depends_on_latent(arg) for param, arg in zip(spec.params, self._argument_exprs(stmt))
               if param in spec.domain_params):
            return  # a latent bound (uniform's low): the likelihood then constrains the latent, as it should
        what, inside = spec.domain
        given = computed = np.asarray(obs)
        if spec.support == "real":  # as the model observes them (``site``): 0.99999999 is 1 in float32
            with np.errstate(over="ignore", under="ignore"):
                computed = given.astype(float_dtype())
        mask = np.broadcast_to(inside(computed, args), np.shape(obs))
        if not np.all(mask):
            where = tuple(int(i) for i in np.argwhere(~mask)[0])
            element = f"{site}[{', '.join(str(i + 1) for i in where)}]" if where else site
            bad = f"{given[where].item():.10g}"
            if computed[where] != given[where]:
                bad += f" (in the model's {computed.dtype}: {computed[where].item():g})"
            raise ProgramError("data", stmt.pos, f"observed {element} = {bad} is outside the support of "
                               f"{spec.name}, which takes {what} ({int(np.sum(~mask))} value(s) outside): the log "
                               "density would be -inf everywhere; check the data, or choose a likelihood for them")

    def _argument_exprs(self, stmt: ir.Sample):
        spec = lookup(stmt.dist)
        return stmt.args[1:] if spec.optional_zero_loc and len(stmt.args) == len(spec.params) + 1 else stmt.args

    def _depends_on_latent(self, expr) -> bool:
        return any(isinstance(sub, (ir.Var, ir.Index)) and sub.name in self.latent for sub in ir.walk_expr(expr))

    def _check_data_parts(self, expr, feeds: str):
        """In the dry run, the parts of a latent-dependent expression that depend on data alone must be finite.

        Under ``jit`` (as samplers run) nothing can be checked once a latent joins in: ``b * log(x[n])`` with
        x[n] = 0 would silently give a log density of -inf or NaN.
        """
        stack = [(expr, False)]  # (expression, whether it divides a latent-dependent value)
        while stack:
            sub, divisor = stack.pop()
            if isinstance(sub, ir.Num) and not divisor:
                continue
            if self._depends_on_latent(sub):
                if isinstance(sub, ir.BinOp):
                    stack += [(sub.left, False), (sub.right, sub.op == "/")]
                elif isinstance(sub, (ir.Call, ir.Neg)):  # not a latent's indices: integers, finite
                    stack += [(arg, False) for arg in (sub.args if isinstance(sub, ir.Call) else (sub.operand,))]
                continue
            # As the model will compute it: the static part in float64, then meeting the latent in JAX's
            # float type (float32 unless jax_enable_x64), where exp(100) is inf and 1e-46 is 0 (found in review).
            with np.errstate(over="ignore", under="ignore"):
                value = np.asarray(self.ev.eval(sub), dtype=np.float64).astype(float_dtype())
            if not np.all(np.isfinite(value)) or (divisor and np.any(value == 0)):
                bad = int(np.sum(~np.isfinite(value) | ((value == 0) & divisor)))
                what = ("is 0 for the data given, and divides" if divisor and np.all(np.isfinite(value)) else
                        "is infinite or NaN for the data given (e.g. log of 0, or a division by 0), and feeds")
                raise ProgramError("value", sub.pos, f"{print_expr(sub)} {what} a value that depends on a latent "
                                   f"({bad} element(s)); {feeds} would be infinite or NaN at every point: check the "
                                   "data, or guard the expression")

    def assign(self, stmt: ir.Assign):
        value = self.ev.eval(stmt.value)
        name = stmt.target.name
        if self._depends_on_latent(stmt.value):
            self.latent.add(name)
            if self.checking:
                self._check_data_parts(stmt.value, "the value assigned here")
        if isinstance(stmt.target, ir.Var):
            self.env[name] = value
        elif self.ev.loops:
            xp = np if is_static(value) else jnp
            self.env[name] = xp.broadcast_to(value, self.ev.loop_shape())
        else:
            key = self._element_key(stmt.target)
            array = self.env.setdefault(name, ElementArray(name, len(key)))
            if key in array.elements:
                raise ProgramError("name", stmt.pos, f"{name}[{','.join(map(str, key))}] is defined twice")
            array.elements[key] = value


def _check_coverage(run: _Run):
    # Observed data that no statement samples or reads would be dropped without a word.
    for name in run.observed:
        if name in run.sampled_whole:
            continue
        keys = run.sampled.get(name, set())
        covered = run.ev.reads.get(name, np.zeros(np.shape(run.observed[name]), bool)).copy()
        for key in keys:
            covered[tuple(k - 1 for k in key)] = True
        unused = [tuple(int(i) + 1 for i in where) for where in np.argwhere(~covered)]
        if unused:
            shown = ", ".join(f"{name}[{', '.join(map(str, key))}]" for key in unused[:3])
            raise ProgramError("shape", run.checked.observed[name], f"observed '{name}' has {covered.size} element(s), "
                               f"but {len(unused)} of them ({shown}{', ...' if len(unused) > 3 else ''}) are neither "
                               "sampled nor read by any statement: sample every element, or give only the data the "
                               "program uses")
    in_sizes = {sub.name for node in run.checked.data.values() if isinstance(node, ir.DataDecl)
                for dim in node.type.dims for sub in ir.walk_expr(dim) if isinstance(sub, (ir.Var, ir.Index))}
    for name, node in run.checked.data.items():
        read = run.ev.reads.get(name)
        if name in run.observed or name in in_sizes or read is None or read.size == 0 or read.any():  # empty: nothing to read
            continue
        # Found in review: a typo in the sampled name (`observe y`, then `Y[i] ~ ...`) compiled, and the
        # data's likelihood became a latent's prior.
        hint = difflib.get_close_matches(name, sorted(run.latent), n=1, cutoff=0.5)
        extra = f" (is '{hint[0]}', sampled as a latent, meant to be '{name}'?)" if hint else ""
        raise ProgramError("shape", node.pos, f"data field '{name}' is given, but no statement reads it and no "
                           f"declaration's size uses it{extra}: read it (e.g. {name} ~ ... to observe it), or remove it")


def _check_declared_sizes(checked: CheckedProgram, data: dict):
    evaluator = Evaluator(dict(data), checking=True)
    for name, node in checked.data.items():
        if isinstance(node, ir.DataDecl) and node.type.dims:
            declared = tuple(int(np.asarray(evaluator.eval(d)).reshape(())) for d in node.type.dims)
            for dim, size in zip(node.type.dims, declared):
                if size < 0:  # was reported as a shape mismatch with a shape of -1 (found in review)
                    raise ProgramError("data", node.pos, f"data field '{name}' is declared {node.type.base}"
                                       f"[{', '.join(map(print_expr, node.type.dims))}], whose size {print_expr(dim)} "
                                       f"is {size} here: a size must be 0 or more; check the data's value for it")
            if data[name].size == 0 and np.prod(declared) == 0:
                data[name] = data[name].reshape(declared)  # a JSON `[]` for a matrix with no rows
            if data[name].shape != declared:
                raise ProgramError("shape", node.pos, f"data field '{name}' has shape {data[name].shape}, but is "
                                   f"declared {node.type.base}[{', '.join(map(print_expr, node.type.dims))}] = {declared}")


@dataclass(frozen=True, eq=False)
class CompiledProgram:
    """A program bound to its data: ``model(*args, **kwargs)`` is a NumPyro model.

    Unpacks as ``model, args, kwargs = compile_program(...)``; ``kwargs`` holds the observed data
    (drop it for the prior predictive). `problem` wraps it as a `autoreparam.models.Problem`.
    """

    model: object
    args: tuple
    kwargs: dict
    program: ir.Program
    data: dict = field(repr=False)
    path: str = "<program>"

    def __iter__(self):
        return iter((self.model, self.args, self.kwargs))

    def problem(self, name: str | None = None):
        from autoreparam.models.problem import Problem

        name = name or Path(self.path).stem
        return Problem(name, self.model, self.args, dict(self.kwargs), f"program {self.path}", "Compiled from program text.")


def _names_another_file(source) -> bool:
    """A one-line str naming an existing file that is not a ``.arp`` (``"model.txt"``): read as program
    text, it would fail as a syntax error at line 1 rather than say what is wrong."""
    if not isinstance(source, str) or "\n" in source or source.endswith(".arp") or not Path(source).suffix:
        return False
    try:
        return Path(source).is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL: text, then
        return False


def _read_source(source) -> tuple[str, str]:
    if not isinstance(source, (str, os.PathLike)):
        # bytes, None or a number would otherwise be printed with str() and parsed as program text
        hint = "; decode it first (source.decode('utf-8'))" if isinstance(source, (bytes, bytearray)) else ""
        raise ProgramError("syntax", None, "the program must be its text (a str) or the path of a .arp file, "
                           f"not {type(source).__name__}{hint}", path="<program>")
    if isinstance(source, os.PathLike) and Path(source).suffix != ".arp" or _names_another_file(source):
        raise ProgramError("syntax", None, "a program file's name must end in .arp (the program's text can be "
                           "passed as a str instead)", path=str(source))
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and source.endswith(".arp")):
        path = Path(source)
        if not path.is_file():
            raise ProgramError("syntax", None, "program file not found", path=str(path))
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except UnicodeDecodeError as error:
            raise ProgramError("syntax", None, f"the program file is not UTF-8 text ({error.reason} at byte "
                               f"{error.start}); save it as UTF-8", path=str(path)) from None
        except OSError as error:
            raise ProgramError("syntax", None, f"the program file cannot be read: {error.strerror}",
                               path=str(path)) from None
    return str(source), "<program>"


def compile_program(source, data: Mapping | str | os.PathLike | None = None, *, path: str | None = None) -> CompiledProgram:
    """Parse, check and compile a program (its text, or a path to a ``.arp`` file) with its data.

    ``data`` is a mapping or the path of a JSON file (see `data.py`). Raises `ProgramError` naming
    line and column for any fault in the program or in its data.
    """
    text, source_path = _read_source(source)
    path = path or source_path
    program = parse(text, path=path)
    given = read_data(data)  # a data file's own faults name that file, not a line of the program
    try:
        check_literals(program)
        checked = check(program)
        arrays = bind_data(checked, given)
        _check_declared_sizes(checked, arrays)
        observed = {name: arrays[name] for name in checked.observed}
        covariates = {name: value for name, value in arrays.items() if name not in checked.observed}
        run = _Run(checked, {**covariates, **observed}, observed, checking=True)
        run.block(program.statements)
        _check_coverage(run)
    except ProgramError as error:
        raise error.located(text, path) from None
    model = _build_model(checked, covariates, tuple(observed), Path(path).stem, (text, path))
    return CompiledProgram(model, (), observed, program, arrays, path)


def _build_model(checked: CheckedProgram, covariates: dict, observed_names: tuple, name: str,
                 source: tuple[str, str] = (None, None)):
    def model(**observed):
        unknown = sorted(set(observed) - set(observed_names))
        if unknown:
            raise ProgramError("data", None, f"the model takes the observed variables {list(observed_names)} as keyword "
                               f"arguments, not {unknown}")
        values = {n: observed.get(n) for n in observed_names}
        env = {**covariates, **{n: np.asarray(v) if not hasattr(v, "shape") else v for n, v in values.items() if v is not None}}
        try:
            _Run(checked, env, values, checking=False, source=source).block(checked.program.statements)
        except ProgramError as error:  # e.g. observed data read before it is sampled, with the data dropped
            raise (error if error.source else error.located(*source)) from None

    model.__name__ = model.__qualname__ = name.replace("-", "_") or "program"
    model.__doc__ = f"NumPyro model compiled from {name}; keyword arguments: {', '.join(observed_names) or 'none'}."
    return model
