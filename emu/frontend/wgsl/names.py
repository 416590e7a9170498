"""WGSL's spellings of the IR's vocabulary, in one place: the operators, the subgroup and atomic
built-in functions, each mapped to the op table's name for it (emu/isa/ops.py). The front end
reads WGSL through these tables and the WGSL emitter (emu/hw/emit.py) writes WGSL through them;
the IR itself knows no WGSL names. tests/isa/test_op_coverage.py checks every value against the
op table."""
from __future__ import annotations

BIN_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "&": "and", "|": "or",
           "^": "xor", "<<": "shl", ">>": "shr", "==": "eq", "!=": "ne", "<": "lt", "<=": "le",
           ">": "gt", ">=": "ge"}
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^",
            "<<=": "<<", ">>=": ">>"}
SUBGROUP_FNS = {"subgroupAdd": "add", "subgroupMul": "mul", "subgroupMin": "min", "subgroupMax": "max",
                "subgroupAnd": "and", "subgroupOr": "or", "subgroupXor": "xor",
                "subgroupInclusiveAdd": "inclusive_add", "subgroupExclusiveAdd": "exclusive_add",
                "subgroupInclusiveMul": "inclusive_mul", "subgroupExclusiveMul": "exclusive_mul",
                "subgroupBroadcast": "broadcast", "subgroupBroadcastFirst": "broadcast_first",
                "subgroupShuffle": "shuffle", "subgroupShuffleXor": "shuffle_xor",
                "subgroupShuffleUp": "shuffle_up", "subgroupShuffleDown": "shuffle_down",
                "subgroupBallot": "ballot", "subgroupElect": "elect", "subgroupAll": "all",
                "subgroupAny": "any", "quadBroadcast": "quad_broadcast"}
# quadSwapX/Y/Diagonal lower to shuffle_xor with the lane mask that flips bit 0, bit 1 or both
QUAD_SWAPS = {"quadSwapX": 1, "quadSwapY": 2, "quadSwapDiagonal": 3}
ATOMIC_FNS = {"atomicLoad": "load", "atomicStore": "store", "atomicAdd": "add", "atomicSub": "sub",
              "atomicMax": "max", "atomicMin": "min", "atomicAnd": "and", "atomicOr": "or",
              "atomicXor": "xor", "atomicExchange": "exchange",
              "atomicCompareExchangeWeak": "compare_exchange_weak",
              # WGSL's atomic_vec2u_min_max extension: on atomic<vec2<u32>>, no result
              "atomicStoreMax": "store_max", "atomicStoreMin": "store_min"}

TEXTURE_FNS = {"textureLoad": "load", "textureStore": "store", "textureDimensions": "dimensions",
               "textureNumLayers": "num_layers", "textureNumLevels": "num_levels",
               "textureNumSamples": "num_samples", "textureSampleLevel": "sample_level",
               "textureSampleGrad": "sample_grad", "textureSampleCompareLevel": "sample_compare_level",
               "textureGather": "gather", "textureGatherCompare": "gather_compare",
               "textureSampleBaseClampToEdge": "sample_base_clamp_to_edge"}


def coop_spelling(module):
    """inst -> the WGSL name of a cooperative op in the module's own dialect (naga's coopLoadT /
    coopStore / coopMultiplyAdd where it enables wgpu_cooperative_matrix, else Dawn's
    subgroupMatrix*), or None where the dialect has no function for it (an operator)."""
    if "wgpu_cooperative_matrix" in module.enables:
        def spell(inst):
            t = "T" if inst.attrs.get("layout") == "row_major" else ""
            return {"coop_load": f"coopLoad{t}", "coop_store": f"coopStore{t}",
                    "coop_mma": "coopMultiplyAdd"}.get(inst.op)
        return spell
    return lambda inst: {"coop_load": "subgroupMatrixLoad", "coop_store": "subgroupMatrixStore",
                         "coop_mma": "subgroupMatrixMultiplyAccumulate",
                         "coop_mul": "subgroupMatrixMultiply"}.get(inst.op)
