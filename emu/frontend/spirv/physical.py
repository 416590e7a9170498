"""PhysicalStorageBuffer pointers (SPV_KHR_physical_storage_buffer, GLSL's buffer_reference): a
buffer reached through its device address (emu/memory/addresses.py gives buffers theirs).

In the IR such a pointer is its address, a u64 value: stored in structs and variables, passed to
functions, selected and merged by phis as one. The pointer arithmetic is the IR's u64 arithmetic:
OpAccessChain adds the member's Offset and the index times the ArrayStride (the explicit layout
every PhysicalStorageBuffer type has), OpPtrAccessChain the element times the pointer type's
ArrayStride; OpConvertUToPtr / OpConvertPtrToU and OpBitcast are conversions of the address.
Only a load, store or atomic turns the address into a pointer: the IR's address_ptr, which the
executor resolves to the buffer holding all the bytes accessed (an address outside every buffer,
an access past a buffer's end, or one not aligned as the Aligned memory operand promises, is one
error naming the address).
"""
from __future__ import annotations

from ...isa.types import I64, U64, ArrayType, MatrixType, PointerType, ScalarType, StructType, VectorType
from .grammar import Instruction
from .module import is_physical

# the instructions whose first operand is the pointer accessed
_ACCESSES = ("OpLoad", "OpStore", "OpAtomicLoad", "OpAtomicStore", "OpAtomicExchange",
             "OpAtomicCompareExchange", "OpAtomicIIncrement", "OpAtomicIDecrement", "OpAtomicIAdd",
             "OpAtomicISub", "OpAtomicSMin", "OpAtomicUMin", "OpAtomicSMax", "OpAtomicUMax", "OpAtomicAnd",
             "OpAtomicOr", "OpAtomicXor", "OpAtomicFAddEXT", "OpAtomicFMinEXT", "OpAtomicFMaxEXT")
_COOP_ACCESSES = ("OpCooperativeMatrixLoadKHR", "OpCooperativeMatrixStoreKHR", "OpCooperativeMatrixLoadTensorNV",
                  "OpCooperativeMatrixStoreTensorNV")


class PhysicalLowering:
    """Mixin of FunctionLowerer: `physical(i)` lowers `i` where it handles PhysicalStorageBuffer
    pointers (and says so with True)."""

    def pointee_of(self, id_: int):
        """The pointee type of a PhysicalStorageBuffer pointer id, else None."""
        d = self.info.defs.get(id_)
        t = self.info.types.get(d.type_id) if d is not None and d.type_id is not None else None
        return t[2] if is_physical(t) else None

    def physical(self, i: Instruction) -> bool:
        op = i.opname
        if op == "OpConvertUToPtr" and is_physical(self.info.types.get(i.type_id)):
            self.define(i.result, self.address_value(i, i.ops[0]))
            return True
        if op == "OpConvertPtrToU" and self.pointee_of(i.ops[0]) is not None:
            rt = self.rtype(i)
            a = self.val(i.ops[0], i)
            self.define(i.result, a if rt == U64 else self.b.op("convert", [a], rt))
            return True
        if op in ("OpAccessChain", "OpInBoundsAccessChain", "OpPtrAccessChain") \
                and self.pointee_of(i.ops[0]) is not None:
            self.define(i.result, self.address_chain(i))
            return True
        if op in _COOP_ACCESSES and self.pointee_of(i.ops[0]) is not None:
            self.fail(i, f"{op} through a PhysicalStorageBuffer pointer is not supported: emu loads and stores "
                         f"cooperative matrices through buffer variables",
                      hint="bind the buffer to a descriptor and load from its array")
        if op in _ACCESSES and self.pointee_of(i.ops[0]) is not None:
            # the access itself through a real pointer: the instruction lowered as for any pointer
            ptr = self.address_pointer(i, i.ops[0])
            stand_in = -1 - i.index             # an id no module has, for the pointer value
            self.scopes[-1][stand_in] = ptr
            inner = Instruction(op, i.opcode, i.type_id, i.result, [stand_in] + list(i.ops[1:]), i.index,
                                i.words, i.line, i.id_at)
            m = getattr(self, "op_" + op[2:], None)
            r = m(inner) if m is not None else self.atomic(inner)
            if r is not None and i.result is not None:
                self.define(i.result, r)
            return True
        return False

    def address_value(self, i, id_):
        """A u32 or u64 integer as a u64 address."""
        v = self.val(id_, i)
        if not isinstance(v.type, ScalarType) or not v.type.is_int or v.type.bits not in (32, 64):
            self.fail(i, f"{i.opname} of {v.type}: a device address is a 32- or 64-bit integer")
        v = self.as_sign(v, "U")
        return v if v.type == U64 else self.b.op("convert", [v], U64)

    def address_pointer(self, i, id_):
        """The IR pointer to the pointee at the address `id_` holds (with the Aligned operand's
        promise where the access has one)."""
        pointee = self.pointee_of(id_)
        if pointee is None or is_physical(pointee):
            pointee = U64
        align = _aligned(i)
        attrs = {"align": align} if align > 1 else {}
        return self.b.op("address_ptr", [self.val(id_, i)], PointerType("storage", pointee, "read_write"), **attrs)

    def address_chain(self, i):
        """OpAccessChain / OpPtrAccessChain on a PhysicalStorageBuffer pointer: its address plus
        the offsets of the steps."""
        addr = self.val(i.ops[0], i)
        t = self.pointee_of(i.ops[0])
        steps = list(i.ops[1:])
        if i.opname == "OpPtrAccessChain":
            stride = self.info.decos.get(self.info.defs[i.ops[0]].type_id, {}).get("ArrayStride")
            if not stride:
                self.fail(i, "OpPtrAccessChain on a pointer type without an ArrayStride decoration")
            addr = self.add_scaled(i, addr, steps.pop(0), stride[0])
        for x in steps:
            c = self.info.consts.get(x)
            if isinstance(t, StructType):
                if c is None:
                    self.fail(i, "a struct member index must be a constant")
                k = int(c[1])
                addr = self.add_const(addr, t.offsets[k])
                t = t.members[k].type
                continue
            if isinstance(t, ArrayType):
                stride, t = t.stride, t.elem
            elif isinstance(t, MatrixType):
                stride, t = -(-t.column.size // t.column.align) * t.column.align, t.column
            elif isinstance(t, VectorType):
                stride, t = t.elem.size, t.elem
            else:
                self.fail(i, f"cannot index into {t}")
            addr = self.add_const(addr, int(c[1]) * stride) if c is not None else self.add_scaled(i, addr, x, stride)
        return addr

    def add_const(self, addr, n: int):
        if n == 0:
            return addr
        return self.b.op("binary", [addr, self.b.op("const", [], U64, value=n % (1 << 64))], U64, fn="add")

    def add_scaled(self, i, addr, index_id, stride: int):
        """addr + index * stride, the index read as signed (SPIR-V's indexes are)."""
        c = self.info.consts.get(index_id)
        if c is not None:
            return self.add_const(addr, int(c[1]) * stride)
        idx = self.val(index_id, i)
        if not isinstance(idx.type, ScalarType) or not idx.type.is_int:
            self.fail(i, f"an index of type {idx.type}")
        idx = self.as_sign(idx, "S")
        if idx.type != I64:
            idx = self.b.op("convert", [idx], I64)
        idx = self.b.op("bitcast", [idx], U64)
        step = self.b.op("binary", [idx, self.b.op("const", [], U64, value=stride)], U64, fn="mul")
        return self.b.op("binary", [addr, step], U64, fn="add")


class DecodeLowering:
    """Mixin of FunctionLowerer: block loads (SPV_NV_cooperative_matrix2's DecodeFunc)."""

    def decode_attrs(self, i, ops) -> dict:
        """{'decode': callee, 'decode_size': bytes of a block} of a tensor load with a DecodeFunc
        (its DecodeVectorFunc is left out: an implementation may always call DecodeFunc), else {}."""
        addressing = ops[2:]
        flags = addressing[0] if addressing else frozenset()
        flags = flags if isinstance(flags, frozenset) else frozenset([flags])
        if "DecodeFunc" not in flags:
            return {}
        fid = addressing[1 + ("TensorView" in flags)]
        f = self.info.functions.get(fid)
        if f is None or len(f.params) != 3:
            self.fail(i, f"the decode function %{fid} takes a block pointer, its block coordinates and the "
                         f"coordinates in the block")
        pointee = self.pointee_of(f.params[0].result)
        if pointee is None or is_physical(pointee):
            self.fail(i, "a decode function's first parameter is a PhysicalStorageBuffer pointer to a block")
        return {"decode": self.fn_names[fid], "decode_size": pointee.size}


def _aligned(i: Instruction) -> int:
    """The Aligned literal of an access's memory operands (OpLoad: after the pointer; OpStore:
    after the pointer and the value), else 1."""
    at = 1 if i.opname == "OpLoad" else 2 if i.opname == "OpStore" else None
    if at is None or len(i.ops) <= at or not isinstance(i.ops[at], frozenset):
        return 1
    flags = i.ops[at]
    if "Aligned" not in flags:
        return 1
    return int(i.ops[at + 1])       # Aligned is the lowest flag with a parameter: its literal first

