"""Subgroup instructions beyond the IR's own subgroup functions: clustered reductions (the
`cluster` attribute of the IR's subgroup op), quad broadcasts and swaps, OpGroupNonUniformAllEqual,
and the ballot queries (OpGroupNonUniformBallotBitCount, -FindLSB, -FindMSB, -BitExtract,
OpGroupNonUniformInverseBallot), the last lowered to integer arithmetic on the four words of a ballot: bit k of the subgroup is bit k % 32 of word k // 32; only the bits of
invocations that exist (below SubgroupSize) count, as the spec says."""
from __future__ import annotations

from ...isa.types import BOOL, I32, U32, VectorType, scalar_of, width, with_scalar
from .module import SUBGROUP_SCOPE


class SubgroupLowering:
    """Mixin of FunctionLowerer."""

    def cluster(self, i) -> dict:
        """{'cluster': N} of a ClusteredReduce (N a constant power of two), else {}."""
        if i.ops[1] != "ClusteredReduce":
            return {}
        if len(i.ops) < 4 or i.ops[3] not in self.info.consts:
            self.fail(i, "a ClusteredReduce needs a constant ClusterSize")
        n = int(self.info.consts[i.ops[3]][1])
        if n < 1 or n & (n - 1):
            self.fail(i, f"ClusterSize {n} is not a power of two")
        return {"cluster": n}

    def ballot_operand(self, i, k: int):
        if self.scope(i, i.ops[0]) != SUBGROUP_SCOPE:
            self.fail(i, f"{i.opname} with a scope other than Subgroup is not supported")
        v = self.val(i.ops[k], i)
        if v.type != VectorType(U32, 4):
            self.fail(i, f"{i.opname} takes a ballot (a vector of four 32-bit unsigned integers), not {v.type}")
        return [self.b.op("extract", [v], U32, path=[w]) for w in range(4)]

    def u32c(self, x: int):
        return self.b.op("const", [], U32, value=x & 0xFFFFFFFF)

    def low_bits(self, words, limit):
        """Each word with only its bits below the ballot bit `limit` (a u32 value) kept."""
        out = []
        for w, word in enumerate(words):
            # n = clamp(limit - 32 w, 0, 32) bits of this word; (1 << n) - 1, all ones at 32
            n = self.b.op("builtin", [self.b.op("bitcast", [self.b.op("binary", [limit, self.u32c(32 * w)], U32,
                                                                        fn="sub")], I32),
                                      self.b.op("const", [], I32, value=0), self.b.op("const", [], I32, value=32)],
                          I32, fn="clamp")
            n = self.b.op("bitcast", [n], U32)
            full = self.b.op("binary", [n, self.u32c(32)], BOOL, fn="eq")
            part = self.b.op("binary", [self.b.op("binary", [self.u32c(1), self.b.op(
                "binary", [n, self.u32c(31)], U32, fn="and")], U32, fn="shl"), self.u32c(1)], U32, fn="sub")
            mask = self.b.op("select", [part, self.u32c(0xFFFFFFFF), full], U32)
            out.append(self.b.op("binary", [word, mask], U32, fn="and"))
        return out

    def builtin_input(self, name: str):
        return self.b.op("input", [], U32, builtin=name)

    def op_GroupNonUniformBallotBitCount(self, i):
        words = self.ballot_operand(i, 2)
        how = i.ops[1]
        if how == "Reduce":
            limit = self.builtin_input("subgroup_size")
        elif how in ("InclusiveScan", "ExclusiveScan"):
            limit = self.builtin_input("subgroup_invocation_id")
            if how == "InclusiveScan":
                limit = self.b.op("binary", [limit, self.u32c(1)], U32, fn="add")
        else:
            self.fail(i, f"OpGroupNonUniformBallotBitCount with {how}: Reduce, InclusiveScan or ExclusiveScan")
        total = None
        for word in self.low_bits(words, limit):
            c = self.b.op("builtin", [word], U32, fn="countOneBits")
            total = c if total is None else self.b.op("binary", [total, c], U32, fn="add")
        return self.as_sign(total, "", self.rtype(i))

    def find_bit(self, i, fn: str, order):
        words = self.low_bits(self.ballot_operand(i, 1), self.builtin_input("subgroup_size"))
        r = self.u32c(0xFFFFFFFF)        # no bit set: undefined in SPIR-V; emu gives -1
        for w in order:
            found = self.b.op("binary", [self.b.op("builtin", [words[w]], U32, fn=fn), self.u32c(32 * w)], U32,
                              fn="add")
            nonzero = self.b.op("binary", [words[w], self.u32c(0)], BOOL, fn="ne")
            r = self.b.op("select", [r, found, nonzero], U32)
        return self.as_sign(r, "", self.rtype(i))

    def op_GroupNonUniformBallotFindLSB(self, i):
        return self.find_bit(i, "firstTrailingBit", (3, 2, 1, 0))     # the lowest word found wins

    def op_GroupNonUniformBallotFindMSB(self, i):
        return self.find_bit(i, "firstLeadingBit", (0, 1, 2, 3))      # the highest word found wins

    def bit_of(self, i, words, index):
        index = self.as_sign(index, "U")
        word = self.b.op("binary", [index, self.u32c(5)], U32, fn="shr")
        pick = words[0]
        for w in (1, 2, 3):
            pick = self.b.op("select", [pick, words[w], self.b.op("binary", [word, self.u32c(w)], BOOL, fn="eq")],
                             U32)
        shift = self.b.op("binary", [index, self.u32c(31)], U32, fn="and")
        bit = self.b.op("binary", [self.b.op("binary", [pick, shift], U32, fn="shr"), self.u32c(1)], U32, fn="and")
        return self.b.op("binary", [bit, self.u32c(0)], BOOL, fn="ne")

    def op_GroupNonUniformBallotBitExtract(self, i):
        index = self.val(i.ops[2], i)
        if width(index.type) != 1 or not scalar_of(index.type).is_int:
            self.fail(i, f"the bit index of {i.opname} is an integer scalar, not {index.type}")
        return self.bit_of(i, self.ballot_operand(i, 1), index)

    def op_GroupNonUniformInverseBallot(self, i):
        return self.bit_of(i, self.ballot_operand(i, 1), self.builtin_input("subgroup_invocation_id"))

    # -- quads (GroupNonUniformQuad) and OpGroupNonUniformAllEqual (GroupNonUniformVote) -----------
    def subgroup_value(self, i, k: int):
        if self.scope(i, i.ops[0]) != SUBGROUP_SCOPE:
            self.fail(i, f"{i.opname} with a scope other than Subgroup is not supported")
        return self.val(i.ops[k], i)

    def op_GroupNonUniformQuadBroadcast(self, i):
        """Lane `index` of each group of four; the index is dynamically uniform (SPIR-V 1.5) and
        below 4, which a constant is checked for here."""
        v = self.subgroup_value(i, 1)
        c = self.info.consts.get(i.ops[2])
        if c is not None and not 0 <= int(c[1]) < 4:
            self.fail(i, f"the quad index {int(c[1])} is not 0, 1, 2 or 3")
        index = self.as_sign(self.val(i.ops[2], i), "U")
        return self.b.op("subgroup", [v, index], v.type, fn="quad_broadcast")

    def op_GroupNonUniformQuadSwap(self, i):
        """Direction 0 swaps horizontally (lane ^ 1), 1 vertically (^ 2), 2 diagonally (^ 3)."""
        v = self.subgroup_value(i, 1)
        c = self.info.consts.get(i.ops[2])
        if c is None or int(c[1]) not in (0, 1, 2):
            self.fail(i, "the direction of OpGroupNonUniformQuadSwap must be the constant 0, 1 or 2")
        return self.b.op("subgroup", [v, self.u32c(int(c[1]) + 1)], v.type, fn="shuffle_xor")

    def op_GroupNonUniformAllEqual(self, i):
        """True where every active invocation holds the value of the first active one (floats
        compare as OpFOrdEqual does: a NaN equals nothing)."""
        v = self.subgroup_value(i, 1)
        first = self.b.op("subgroup", [v], v.type, fn="broadcast_first")
        same = self.b.op("binary", [v, first], with_scalar(v.type, BOOL), fn="eq")
        if width(v.type) > 1:
            parts = [self.b.op("extract", [same], BOOL, path=[k]) for k in range(width(v.type))]
            same = parts[0]
            for part in parts[1:]:
                same = self.b.op("binary", [same, part], BOOL, fn="and")
        return self.b.op("subgroup", [same], BOOL, fn="all")
