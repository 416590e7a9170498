"""The entry point (``wgpu.gpu``) and emu's adapter."""
from __future__ import annotations

import os
from typing import Sequence

from ..errors import InvalidArgument
from ._compat import binding_bases
from ._common import DEFAULT_LIMITS, _FEATURE_ALIASES, _canonical_feature, _canonical_limit, _subgroup_size, _unsupported
from ._device import GPUDevice
from ._promise import GPUPromise


class GPU(*binding_bases("GPU")):
    """The entry point (``wgpu.gpu``): hands out emu adapters.

    ``flavor`` says which binding's names the adapter uses for its features: "wgpu" (wgpu-py on
    wgpu-native: 'subgroup', 'cooperative-matrix'), "dawn" (wgpudawn: 'subgroups',
    'chromium-experimental-subgroup-matrix') or "emu" (all of them: either dialect compiles).
    ``profile`` is a profile name or path; None reads ``EMU_PROFILE`` (default 'reference')
    when an adapter is requested.
    """

    def __init__(self, profile=None, flavor: str = "emu"):
        self._profile = profile
        self._flavor = flavor

    def _load_profile(self):
        from ..profiles import load_profile, Profile
        p = self._profile if self._profile is not None else os.environ.get("EMU_PROFILE", "reference")
        return p if isinstance(p, Profile) else load_profile(p)

    def request_adapter_sync(self, *, feature_level: str = "core", power_preference=None,
                             force_fallback_adapter: bool = False, canvas=None) -> "GPUAdapter":
        """Sync version of `request_adapter_async()`."""
        return self.request_adapter_async(feature_level=feature_level,
                                          power_preference=power_preference,
                                          force_fallback_adapter=force_fallback_adapter,
                                          canvas=canvas).sync_wait()

    def request_adapter_async(self, *, feature_level: str = "core", power_preference=None,
                              force_fallback_adapter: bool = False, canvas=None) -> GPUPromise:
        """An adapter for emu's virtual GPU, emulating the profile named by EMU_PROFILE."""
        def make():
            if canvas is not None:
                _unsupported("request_adapter(canvas=...)", "presenting to a canvas")
            if feature_level not in ("core", "compatibility"):
                raise InvalidArgument(f"feature_level must be 'core' or 'compatibility', not {feature_level!r}")
            return GPUAdapter(self._load_profile(), self._flavor)
        return GPUPromise.run("request_adapter", make)

    def enumerate_adapters_sync(self) -> list:
        """Sync version of `enumerate_adapters_async()`: one emu adapter."""
        return self.enumerate_adapters_async().sync_wait()

    def enumerate_adapters_async(self) -> GPUPromise:
        return GPUPromise.run("enumerate_adapters", lambda: [GPUAdapter(self._load_profile(), self._flavor)])

    @property
    def wgsl_language_features(self) -> set:
        return set()

    def get_preferred_canvas_format(self):
        raise RuntimeError("Use canvas.get_preferred_format() instead.")

    def get_canvas_context(self, present_info: dict):
        _unsupported("gpu.get_canvas_context()", "presenting to a window")

    # wgpu-py's deprecated names for the sync methods
    def request_adapter(self, **kwargs):
        return self.request_adapter_sync(**kwargs)

    def enumerate_adapters(self):
        return self.enumerate_adapters_sync()

    def __repr__(self):
        return f"<emu.wgpu.GPU flavor={self._flavor!r} profile={self._profile or os.environ.get('EMU_PROFILE', 'reference')!r}>"


class GPUAdapterInfo(*(binding_bases("GPUAdapterInfo") or (dict,))):
    """Information about an adapter (a dict, with wgpu-py's properties)."""

    def __repr__(self):
        return f"<GPUAdapterInfo dict with {', '.join(f'{k}={v!r}' for k, v in self.items())}>"

    vendor = property(lambda self: self["vendor"])
    architecture = property(lambda self: self["architecture"])
    device = property(lambda self: self["device"])
    description = property(lambda self: self["description"])
    subgroup_min_size = property(lambda self: self.get("subgroup_min_size"))
    subgroup_max_size = property(lambda self: self.get("subgroup_max_size"))
    is_fallback_adapter = property(lambda self: self.get("adapter_type", "").lower() in ("software", "cpu"))


def _profile_features(profile, flavor: str) -> set:
    feats = {"core-features-and-limits", "shader-f16"}
    if flavor in ("wgpu", "emu"):
        feats.add("subgroup")
        feats.add("immediates")       # wgpu-native gates var<immediate> on a feature (Dawn: on the limit only)
        if profile.props_wgpu():
            feats.add("cooperative-matrix")
        if profile.shader_float64:       # naga's f64 (wgpu's SHADER_F64); Dawn has no such feature
            feats.add("shader-f64")
    if flavor in ("dawn", "emu"):
        feats.add("subgroups")
        if profile.props_dawn():
            feats.add("chromium-experimental-subgroup-matrix")
        if profile.buffer_int64_atomics:
            feats.add("atomic-vec2u-min-max")
    if flavor == "wgpu":
        feats.add("subgroups")        # wgpu-py maps the spec name to wgpu-native's 'subgroup'
    return feats


class GPUAdapter(*binding_bases("GPUAdapter")):
    """emu's virtual GPU, emulating one device profile (see ``info``)."""

    def __init__(self, profile, flavor: str = "emu"):
        from ..version import __version__
        self._profile = profile
        self._flavor = flavor
        self._features = _profile_features(profile, flavor)
        self._limits = dict(DEFAULT_LIMITS)
        sg = _subgroup_size(profile)
        self._adapter_info = GPUAdapterInfo(
            vendor="emu", architecture=profile.name,
            device=f"emu virtual GPU emulating '{profile.name}'",
            description=f"emu {__version__} (CPU emulator of WGSL compute): {profile.description}",
            vendor_id=0, device_id=0, adapter_type="CPU", backend_type="emu",
            # the size emu runs (the profile's default or EMU_SUBGROUP_SIZE), not every size the
            # profile allows: a program that sizes workgroups by it gets what it planned for
            subgroup_min_size=sg, subgroup_max_size=sg,
            emu=True, emu_profile=profile.name, emu_subgroup_size=sg,
            emu_profile_subgroup_sizes=tuple(profile.subgroup_sizes),
        )

    @property
    def features(self) -> set:
        """Feature names: 'shader-f16', 'subgroups' (and wgpu-native's 'subgroup'), and the
        cooperative-matrix feature of the binding where the profile has configs for it, and (Dawn's
        names) 'atomic-vec2u-min-max' where the profile's device has 64-bit buffer atomics."""
        return self._features

    @property
    def limits(self) -> dict:
        return self._limits

    @property
    def info(self) -> GPUAdapterInfo:
        return self._adapter_info

    @property
    def summary(self) -> str:
        d = self._adapter_info
        return f"{d['device']} ({d['adapter_type']}) via {d['backend_type']}"

    @property
    def profile(self):
        """The emu profile this adapter emulates (emu extension)."""
        return self._profile

    def request_device_sync(self, *, label: str = "", required_features: Sequence = (),
                            required_limits: dict | None = None, default_queue=None) -> "GPUDevice":
        """Sync version of `request_device_async()`."""
        return self.request_device_async(label=label, required_features=required_features,
                                         required_limits=required_limits,
                                         default_queue=default_queue).sync_wait()

    def request_device_async(self, *, label: str = "", required_features: Sequence = (),
                             required_limits: dict | None = None, default_queue=None) -> GPUPromise:
        """A device of the virtual GPU with the features asked for (and the adapter's limits,
        lowered or raised by ``required_limits`` within the adapter's)."""
        return GPUPromise.run("request_device", self._make_device, label, required_features,
                              required_limits)

    def _make_device(self, label, required_features, required_limits):
        feats = set()
        if isinstance(required_features, str):
            raise TypeError("required_features must be a sequence of feature names")
        for f in required_features:
            name = _canonical_feature(f)
            if name not in self._features and _FEATURE_ALIASES.get(name) not in self._features:
                raise RuntimeError(
                    f"Request device failed: the feature '{name}' is not supported by emu's adapter "
                    f"for profile '{self._profile.name}' (supported: {', '.join(sorted(self._features))})")
            feats.add(name)
            if _FEATURE_ALIASES.get(name) in self._features:
                feats.add(_FEATURE_ALIASES[name])
        feats.add("core-features-and-limits")
        limits = dict(self._limits)
        for key, value in (required_limits or {}).items():
            name = _canonical_limit(key)
            if name not in limits:
                raise KeyError(f"Unknown limit name '{key}'")
            if value is None:
                continue
            value = int(value)
            better_is_lower = name.startswith("min-")
            if (value < self._limits[name]) if better_is_lower else (value > self._limits[name]):
                raise RuntimeError(f"Request device failed: required limit {name}={value} is beyond "
                                   f"emu's adapter limit {self._limits[name]}")
            limits[name] = value
        return GPUDevice(label, self, feats, limits)

    def request_device(self, **kwargs):
        return self.request_device_sync(**kwargs)

    def __repr__(self):
        return f"<emu.wgpu.GPUAdapter emulating {self._profile.name!r}>"

    def __del__(self):              # not a native object (see GPUObjectBase)
        pass

    __str__ = object.__str__
