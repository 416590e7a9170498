"""Structure of the cooperative IR: module, functions, structured blocks, instructions, values.

The IR is SSA for values (`let`, expression results) and memory-based for mutable state (`var`
is an allocation, read and written through pointers), like SPIR-V before mem2reg. Control flow
is structured: `if`, `loop` and `switch` own nested blocks, so the executor runs a branch by
narrowing the active-lane mask and restores it when the block ends.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from .types import Type, VOID


@dataclass(frozen=True)
class Loc:
    """Where an instruction came from in the WGSL source (1-based line and column)."""
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(eq=False)
class Value:
    """An SSA value: the result of an instruction or a function parameter."""
    id: int
    type: Type
    name: str | None = None     # the WGSL name it was bound to, for messages and traces

    def __repr__(self) -> str:
        return f"%{self.id}"


@dataclass(eq=False)
class Block:
    insts: list[Inst] = field(default_factory=list)

    def __iter__(self) -> Iterator[Inst]:
        return iter(self.insts)

    def __len__(self) -> int:
        return len(self.insts)


@dataclass(eq=False)
class Inst:
    op: str
    args: list[Value]
    type: Type = VOID
    attrs: dict[str, Any] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    loc: Loc | None = None
    result: Value | None = None   # set when type is not void

    def walk(self) -> Iterator[Inst]:
        """This instruction and every instruction nested in its blocks, in program order."""
        return _walk((self,))


@dataclass(eq=False)
class Function:
    name: str
    params: list[Value]
    ret: Type
    body: Block
    # Entry points: 'compute' with a workgroup size; each item an int or the name of an override.
    stage: str | None = None
    workgroup_size: tuple[int | str, int | str, int | str] | None = None
    # For entry-point parameters: param index -> builtin name (global_invocation_id, ...).
    param_builtins: dict[int, str] = field(default_factory=dict)
    loc: Loc | None = None

    def walk(self) -> Iterator[Inst]:
        return _walk(self.body.insts)


def _walk(insts) -> Iterator[Inst]:
    """`insts` and every instruction nested in their blocks, in program order, with a stack of
    iterators instead of one generator per nesting level (a recursive `yield from` costs a frame
    per level for every instruction: the compiler's passes walk large shaders many times). Lists
    are read as they are when reached, as the recursive walk reads them."""
    stack = [iter(insts)]
    while stack:
        for i in stack[-1]:
            yield i
            if i.blocks:
                stack.append(j for b in i.blocks for j in b.insts)
                break
        else:
            stack.pop()


# (group, binding) of the push-constant block (SPIR-V's PushConstant, WGSL's var<push_constant> and
# var<immediate>): outside any descriptor set a shader can name
PUSH_CONSTANTS = (-1, 0)


@dataclass(eq=False)
class Global:
    """A module-scope variable; `ptr` is the pointer type its uses see."""
    name: str
    space: str
    type: Type
    access: str = "read_write"
    group: int | None = None
    binding: int | None = None
    init: Any = None        # constant initializer (private vars), already a python value
    loc: Loc | None = None
    # workgroup only: the aliased workgroup blocks (SPIR-V's WorkgroupMemoryExplicitLayoutKHR) all
    # start at one offset of the workgroup's memory, each a view of the same bytes
    aliased: bool = False


@dataclass(eq=False)
class Override:
    name: str
    type: Type
    id: int | None = None
    default: Any = None     # python value, or None when the host must set it
    loc: Loc | None = None


@dataclass(eq=False)
class Module:
    file: str = "<input>"
    enables: list[str] = field(default_factory=list)
    structs: list[Type] = field(default_factory=list)
    overrides: list[Override] = field(default_factory=list)
    globals: list[Global] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    # Lowered with its overrides as constants: a pipeline lowers the source again with its own.
    needs_constants: bool = False
    # Overrides lowered as placeholders because no value was given yet (see compile_source).
    unset_overrides: list[str] = field(default_factory=list)
    unset_sizes: list[str] = field(default_factory=list)     # those of them that size a type
    # (name, stage, loc) of the vertex/fragment entry points, which are not lowered
    graphics_entries: list[tuple] = field(default_factory=list)
    # sampler globals that are the sampler half of a Vulkan combined image sampler: they share
    # their texture's (group, binding)
    combined_samplers: list[str] = field(default_factory=list)
    # Vulkan lets the variables of one entry point share a descriptor binding (views of one buffer
    # in several types: llama.cpp's A and A_PACKED16); WGSL does not. Set by the SPIR-V front end.
    binding_aliases: bool = False

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)

    def global_(self, name: str) -> Global | None:
        return next((g for g in self.globals if g.name == name), None)

    def override(self, name: str) -> Override | None:
        return next((o for o in self.overrides if o.name == name), None)

    def entry_points(self) -> list[Function]:
        return [f for f in self.functions if f.stage == "compute"]


def reachable(module: Module, entry: Function) -> set[str]:
    """Names of `entry` and of every function it calls, directly or not."""
    seen, todo = set(), [entry]
    while todo:
        fn = todo.pop()
        if fn.name in seen:
            continue
        seen.add(fn.name)
        # an unknown callee is the verifier's to report, with its location
        todo += [f for i in fn.walk() if i.op == "call" and (f := module.function(i.attrs.get("callee")))]
    return seen


def used_globals(module: Module, entry: Function) -> list:
    """Globals statically used by `entry` and the functions it calls (WebGPU's 'auto' layout)."""
    seen_fn, names = set(), []

    def visit(fn: Function):
        if fn.name in seen_fn:
            return
        seen_fn.add(fn.name)
        for inst in fn.walk():
            if inst.op == "global" and inst.attrs["name"] not in names:
                names.append(inst.attrs["name"])
            elif inst.op == "call":
                visit(module.function(inst.attrs["callee"]))
    visit(entry)
    return [module.global_(n) for n in names]


class NoCurrentBlock(AssertionError):
    """An instruction emitted outside any function: a front end lowering a module-scope
    expression that is not constant."""


class Builder:
    """Appends instructions to a current block and numbers values module-wide."""

    def __init__(self, next_id: int = 0):
        self.next_id = next_id
        self.block: Block | None = None
        self.loc: Loc | None = None

    def value(self, type: Type, name: str | None = None) -> Value:
        v = Value(self.next_id, type, name)
        self.next_id += 1
        return v

    def emit(self, op: str, args: list[Value] | tuple = (), type: Type = VOID, *,
             blocks: list[Block] | None = None, loc: Loc | None = None, **attrs) -> Inst:
        inst = Inst(op, list(args), type, attrs, blocks or [], loc or self.loc)
        if type != VOID:
            inst.result = self.value(type)
        if self.block is None:
            raise NoCurrentBlock("builder has no current block")
        self.block.insts.append(inst)
        return inst

    def op(self, op: str, args: list[Value] | tuple = (), type: Type = VOID, **attrs) -> Value:
        """Emit an instruction and return its result value."""
        return self.emit(op, args, type, **attrs).result

    def at(self, block: Block) -> "_At":
        return _At(self, block)


class _At:
    """`with builder.at(block):` appends into `block`, then returns to where it was."""

    def __init__(self, b: Builder, block: Block):
        self.b, self.block = b, block

    def __enter__(self):
        self.saved = self.b.block
        self.b.block = self.block
        return self.block

    def __exit__(self, *exc):
        self.b.block = self.saved
