"""PTX text to a module of functions, each a flat list of instructions.

The parser knows PTX's syntax, not its instructions: an instruction is its opcode split at
the dots, an optional guard predicate and a list of operands; the opcode table in
``instructions.py`` gives them meaning. Scoped declarations (the ``{ .param .b32 param0; ...}``
blocks around calls) are renamed so every name in a function is unique, and branch labels are
resolved to instruction indices, so the machine never looks at text again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .errors import SimulatorError
from .scalars import TYPES, ScalarType


@dataclass(frozen=True)
class Register:
    """``%r1``, ``%SP`` or a special register such as ``%tid.x``."""

    name: str


@dataclass(frozen=True)
class Immediate:
    """A literal: ``12``, ``-1``, ``0x1F``, ``0f3F800000`` (f32 bits), ``0d...`` (f64 bits)."""

    text: str


@dataclass(frozen=True)
class Symbol:
    """A name that is not a register: a label, variable, parameter or function (plus an offset)."""

    name: str
    offset: int = 0


@dataclass(frozen=True)
class Address:
    """``[base+offset]``: base is a register, a symbol or None (an absolute address)."""

    base: Register | Symbol | None
    offset: int


@dataclass(frozen=True)
class Vector:
    """``{%r1, %r2}``: the operand of vector loads and stores and of ``mov`` packing."""

    items: tuple[Operand, ...]


@dataclass(frozen=True)
class Negated:
    """``!%p``: a predicate operand read inverted."""

    register: Register


@dataclass(frozen=True)
class Pair:
    """``%r|%p``: a destination and its predicate output (``setp``, ``shfl``)."""

    first: Operand
    second: Operand


@dataclass(frozen=True)
class Group:
    """``(param0, param1)``: the argument and return lists of ``call``."""

    items: tuple[Operand, ...]


@dataclass(frozen=True)
class Sink:
    """``_``: a destination whose value is dropped."""


Operand = Register | Immediate | Symbol | Address | Vector | Negated | Pair | Group | Sink


@dataclass(frozen=True)
class Instruction:
    """One PTX instruction: ``opcode`` split at its dots (``("mul", "wide", "s32")``)."""

    opcode: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Register | None
    guard_negated: bool
    line: int
    text: str


@dataclass(frozen=True)
class Variable:
    """A ``.global``, ``.shared``, ``.const``, ``.local`` or ``.param`` declaration.

    ``count`` is None for ``.extern .shared name[]`` (dynamic shared memory).
    """

    name: str
    space: str
    type: ScalarType
    count: int | None
    align: int
    init: bytes | None = None

    @property
    def nbytes(self) -> int:
        return self.type.size * (self.count or 0)


@dataclass
class Function:
    """A ``.entry`` (kernel) or ``.func``: parameters, registers and a flat instruction list."""

    name: str
    is_kernel: bool
    params: list[Variable]
    returns: list[Variable]
    line: int
    registers: dict[str, ScalarType] = field(default_factory=dict)
    variables: list[Variable] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    defined: bool = False


@dataclass
class Module:
    """A parsed PTX module: its functions and module-scope variables, by name."""

    functions: dict[str, Function]
    variables: dict[str, Variable]
    target: str
    text: str = field(repr=False)


_TOKEN = re.compile(
    r"""(?P<space>[ \t\r]+)|(?P<newline>\n)|(?P<string>"[^"]*")
    |(?P<word>[%$.A-Za-z_0-9][%$.A-Za-z_0-9:]*(?<!:))
    |(?P<punct>[()\[\]{},;:@!+\-|<>=])""",
    re.VERBOSE,
)
_SKIPPED_DIRECTIVES = {".pragma", ".maxntid", ".reqntid", ".minnctapersm", ".maxnreg", ".maxnctapersm", ".noreturn"}
_LINE_DIRECTIVES = {".version", ".target", ".address_size", ".file", ".loc"}
_SPACES = {".global", ".shared", ".const", ".local", ".param"}


def _strip_comments(text: str) -> str:
    """Comments blanked out, newlines kept so line numbers survive."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _tokens(text: str) -> list[tuple[str, int]]:
    tokens, line, pos = [], 1, 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise SimulatorError(f"PTX line {line}: unexpected character {text[pos]!r}")
        kind = match.lastgroup
        if kind == "newline":
            line += 1
            tokens.append(("\n", line - 1))
        elif kind != "space":
            tokens.append((match.group(), line))
        pos = match.end()
    return tokens


def parse_integer(text: str) -> int:
    """A PTX integer literal: decimal, 0x hex, 0b binary or 0 octal, optionally negative or U-suffixed."""
    text = text.rstrip("Uu")
    negative = text.startswith("-")
    body = text.lstrip("-")
    if body.startswith(("0x", "0X")):
        value = int(body[2:], 16)
    elif body.startswith(("0b", "0B")):
        value = int(body[2:], 2)
    elif len(body) > 1 and body.startswith("0"):
        value = int(body, 8)
    else:
        value = int(body)
    return -value if negative else value


class _Parser:
    """Recursive descent over the token list; one instance per module."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.tokens = _tokens(_strip_comments(text))
        self.pos = 0

    # ---- token helpers -------------------------------------------------------------------
    def peek(self, skip_newlines: bool = True) -> str:
        pos = self.pos
        while pos < len(self.tokens):
            if self.tokens[pos][0] != "\n" or not skip_newlines:
                return self.tokens[pos][0]
            pos += 1
        return ""

    def line(self) -> int:
        self.peek()
        pos = self.pos
        while pos < len(self.tokens) and self.tokens[pos][0] == "\n":
            pos += 1
        return self.tokens[min(pos, len(self.tokens) - 1)][1] if self.tokens else 0

    def next(self) -> str:
        while self.pos < len(self.tokens) and self.tokens[self.pos][0] == "\n":
            self.pos += 1
        if self.pos >= len(self.tokens):
            raise SimulatorError("PTX ends in the middle of a statement")
        token = self.tokens[self.pos][0]
        self.pos += 1
        return token

    def expect(self, token: str) -> None:
        line, got = self.line(), self.next()
        if got != token:
            raise self.error(line, f"expected {token!r}, found {got!r}")

    def accept(self, token: str) -> bool:
        if self.peek() == token:
            self.next()
            return True
        return False

    def skip_line(self) -> None:
        while self.pos < len(self.tokens) and self.tokens[self.pos][0] != "\n":
            self.pos += 1

    def error(self, line: int, message: str) -> SimulatorError:
        source = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        return SimulatorError(f"PTX line {line} ({source!r}): {message}")

    # ---- module level --------------------------------------------------------------------
    def module(self, text: str) -> Module:
        functions: dict[str, Function] = {}
        variables: dict[str, Variable] = {}
        target = ""
        while self.peek():
            line, token = self.line(), self.next()
            if token in _LINE_DIRECTIVES:
                if token == ".target":
                    target = self.peek(skip_newlines=False)
                self.skip_line()
            elif token in (".visible", ".extern", ".weak", ".common"):
                continue
            elif token in (".entry", ".func"):
                function = self.function(token == ".entry", line, variables)
                known = functions.get(function.name)
                if known is None or not known.defined:
                    functions[function.name] = function
            elif token in _SPACES:
                variable = self.variable(token, line)
                variables[variable.name] = variable
            elif token == ".section":
                self.skip_block()
            else:
                raise self.error(line, f"unsupported module-level statement {token!r}")
        return Module(functions, variables, target, text)

    def skip_block(self) -> None:
        while self.next() != "{":
            pass
        depth = 1
        while depth:
            token = self.next()
            depth += {"{": 1, "}": -1}.get(token, 0)

    def function(self, is_kernel: bool, line: int, module_variables: dict[str, Variable]) -> Function:
        returns = self.param_list() if self.peek() == "(" else []
        name = self.next()
        params = self.param_list() if self.peek() == "(" else []
        function = Function(name, is_kernel, params, returns, line)
        while self.peek() in _SKIPPED_DIRECTIVES:
            self.next()
            self.skip_line()
        if self.accept(";"):
            return function
        self.expect("{")
        function.defined = True
        _Body(self, function, module_variables).parse()
        return function

    def param_list(self) -> list[Variable]:
        self.expect("(")
        params = []
        while not self.accept(")"):
            line = self.line()
            self.expect(".param") if self.peek() == ".param" else self.expect(".reg")
            params.append(self.variable(".param", line, terminated=False))
            self.accept(",")
        return params

    def variable(self, space: str, line: int, terminated: bool = True) -> Variable:
        align, type_name, count, pointer = 0, "", 1, False
        while True:
            token = self.next()
            if token == ".align":
                value = parse_integer(self.next())
                align = align if pointer else value  # after .ptr, .align describes the pointee
            elif token in (".ptr", ".global", ".shared", ".const", ".local", ".v2", ".v4") or token.startswith(
                ".attribute"
            ):
                pointer = pointer or token == ".ptr"
                if token in (".v2", ".v4"):
                    raise self.error(line, "vector-typed variables are not supported")
            elif token.startswith(".") and token[1:] in TYPES:
                type_name = token[1:]
            elif token.startswith("."):
                raise self.error(line, f"unsupported declaration qualifier {token!r}")
            else:
                name = token
                break
        if not type_name:
            raise self.error(line, f"declaration of {name} has no type")
        while self.accept("["):
            if self.accept("]"):
                count = -1
                continue
            count *= parse_integer(self.next())
            self.expect("]")
        init = self.initializer(TYPES[type_name], count, line) if self.accept("=") else None
        if terminated:
            self.expect(";")
        ty = TYPES[type_name]
        return Variable(name, space[1:], ty, None if count < 0 else count, max(align, ty.size), init)

    def initializer(self, ty: ScalarType, count: int, line: int) -> bytes:
        values: list[str] = []
        if self.accept("{"):
            while not self.accept("}"):
                token = self.next()
                if token == "-":
                    token = "-" + self.next()
                if token == ",":
                    continue
                if not re.fullmatch(r"-?(0[xXbBfFdD])?[0-9A-Fa-f]+[Uu]?", token):
                    raise self.error(line, f"unsupported initializer element {token!r}")
                values.append(token)
        else:
            token = self.next()
            values.append("-" + self.next() if token == "-" else token)
        if ty.is_float:
            raise self.error(line, "float initializers are not supported")
        data = [parse_integer(v) % (1 << ty.width) for v in values]
        data += [0] * (max(count, 1) - len(data))
        return np.array(data, dtype=object).astype(np.uint64).astype(ty.bits).tobytes()


class _Body:
    """The statements between a function's braces."""

    def __init__(self, parser: _Parser, function: Function, module_variables: dict[str, Variable]):
        self.p = parser
        self.f = function
        self.module_variables = module_variables
        self.scopes: list[dict[str, str]] = [{}]
        self.unique = 0
        self.pending_labels: list[tuple[str, int]] = []

    def resolve(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return name

    def declare(self, name: str) -> str:
        if len(self.scopes) == 1:
            self.scopes[0][name] = name
            return name
        self.unique += 1
        unique = f"{name}#{self.unique}"
        self.scopes[-1][name] = unique
        return unique

    def parse(self) -> None:
        depth = 1
        while depth:
            line, token = self.p.line(), self.p.next()
            if token == "{":
                depth += 1
                self.scopes.append({})
            elif token == "}":
                depth -= 1
                if depth:
                    self.scopes.pop()
            elif token in _SKIPPED_DIRECTIVES or token in _LINE_DIRECTIVES:
                self.p.skip_line()
                self.p.accept(";")
            elif token == ".reg":
                self.registers(line)
            elif token in _SPACES:
                variable = self.p.variable(token, line)
                renamed = Variable(self.declare(variable.name), variable.space, variable.type, variable.count,
                                   variable.align, variable.init)
                self.f.variables.append(renamed)
            elif self.p.peek(skip_newlines=False) == ":":
                self.p.next()
                self.f.labels[token] = len(self.f.instructions)
            else:
                self.instruction(token, line)

    def registers(self, line: int) -> None:
        type_token = self.p.next()
        if type_token.startswith(".v"):
            raise self.p.error(line, "vector registers are not supported")
        ty = TYPES.get(type_token[1:])
        if ty is None:
            raise self.p.error(line, f"unsupported register type {type_token!r}")
        while True:
            name = self.p.next()
            if self.p.accept("<"):
                count = parse_integer(self.p.next())
                self.p.expect(">")
                for i in range(count):
                    self.f.registers[self.declare(f"{name}{i}")] = ty
            else:
                self.f.registers[self.declare(name)] = ty
            if not self.p.accept(","):
                break
        self.p.expect(";")

    def instruction(self, first: str, line: int) -> None:
        guard, negated = None, False
        if first == "@":
            negated = self.p.accept("!")
            guard = Register(self.resolve(self.p.next()))
            first = self.p.next()
        operands: list[Operand] = []
        while not self.p.accept(";"):
            operands.append(self.operand(line))
            if self.p.peek() not in (",", ";"):
                raise self.p.error(line, f"unexpected {self.p.peek()!r} in operand list")
            self.p.accept(",")
        text = self.p.lines[line - 1].strip() if line <= len(self.p.lines) else first
        self.f.instructions.append(Instruction(tuple(first.split(".")), tuple(operands), guard, negated, line, text))

    def operand(self, line: int, listed: bool = False) -> Operand:
        """The next operand; ``listed``: an item of a vector or group, which PTX never nests."""
        token = self.p.next()
        if token == "[":
            return self.address(line)
        if token in ("{", "(") and listed:
            raise self.p.error(line, f"a {token!r} list inside a list")
        if token == "{":
            return Vector(self.items("}", line))
        if token == "(":
            return Group(self.items(")", line))
        if token == "!":
            return Negated(Register(self.resolve(self.p.next())))
        first = self.atom(token, line)
        if self.p.accept("|"):
            return Pair(first, self.atom(self.p.next(), line))
        if isinstance(first, Symbol) and self.p.peek() == "+":
            self.p.next()
            return Symbol(first.name, self.signed_integer(line))
        return first

    def items(self, close: str, line: int) -> tuple[Operand, ...]:
        items: list[Operand] = []
        while not self.p.accept(close):
            items.append(self.operand(line, listed=True))
            self.p.accept(",")
        return tuple(items)

    def signed_integer(self, line: int) -> int:
        token = self.p.next()
        if token == "-":
            token = "-" + self.p.next()
        try:
            return parse_integer(token)
        except ValueError:
            raise self.p.error(line, f"expected an integer offset, found {token!r}") from None

    def atom(self, token: str, line: int) -> Operand:
        if token == "-":
            return Immediate("-" + self.p.next())
        if token == "_":
            return Sink()
        if token.startswith("%") or self.resolve(token) in self.f.registers:  # registers may lack the %
            return Register(self.resolve(token))
        if token[0].isdigit():
            return Immediate(token)
        if token[0] in "$._" or token[0].isalpha():
            return Symbol(self.resolve(token))
        raise self.p.error(line, f"unexpected operand {token!r}")

    def address(self, line: int) -> Address:
        token = self.p.next()
        base: Register | Symbol | None
        offset = 0
        if token.startswith("%"):
            base = Register(self.resolve(token))
        elif token[0].isdigit() or token == "-":
            base, offset = None, parse_integer(token if token != "-" else "-" + self.p.next())
        else:
            base = Symbol(self.resolve(token))
        if self.p.accept("+"):
            offset += self.signed_integer(line)
        elif self.p.peek() == "-":
            offset += self.signed_integer(line)
        self.p.expect("]")
        return Address(base, offset)


def parse_module(text: str) -> Module:
    """Parse PTX ``text``; SimulatorError names the line of anything it cannot read."""
    return _Parser(text).module(text)
