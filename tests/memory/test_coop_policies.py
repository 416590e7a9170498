"""The out-of-bounds policies of cooperative accesses are one table keyed by the profile value."""
from emu.memory.coop import OOB_POLICIES
from emu.profiles import OOB_BEHAVIORS, list_profiles, load_profile


def test_every_profile_value_has_a_policy():
    assert set(OOB_POLICIES) == set(OOB_BEHAVIORS)
    for name in list_profiles():
        assert load_profile(name).oob_behavior in OOB_POLICIES
