"""Device profiles and lane maps, as data (see emu/profiles/README.md).

    from emu.profiles import load_profile, list_profiles, Profile, CoopConfig, LaneMap
    p = load_profile("nvidia-h200")          # or the path of a user JSON file
    cfg = p.find_config(16, 16, 16, "f16", "f32")
    lm = p.lane_map(cfg, "A", 32)            # LaneMap: lane_idx/elem_idx, rows_idx/cols_idx
"""

from .formula import Formula, FormulaError, parse_formula
from .lanemap import FAMILIES, LaneMap, LaneMapError, family_map, from_formula, from_table
from .profile import (
    EVIDENCE_LEVELS, KNOWN_MODELS, OOB_BEHAVIORS, STRIDE_UNITS, TYPE_BITS, AdapterMatch, CoopConfig,
    Evidence, Profile, ProfileError, list_profiles, load_profile, profile_for_adapter,
)

__all__ = [
    "load_profile", "list_profiles", "profile_for_adapter", "Profile", "CoopConfig", "Evidence",
    "AdapterMatch", "ProfileError", "LaneMap", "LaneMapError", "FAMILIES", "family_map",
    "from_formula", "from_table", "Formula", "FormulaError", "parse_formula", "KNOWN_MODELS",
    "TYPE_BITS", "STRIDE_UNITS", "OOB_BEHAVIORS", "EVIDENCE_LEVELS",
]
