"""A minimal compute module in SPIR-V assembly, for tests that need one declaration in it."""


def compute_module(capabilities: str = "", declarations: str = "") -> str:
    """OpCapability Shader, then `capabilities` (lines), an empty 1x1x1 GLCompute main, with
    `declarations` (lines) among its types; line 2 is the first of `capabilities`."""
    return ("OpCapability Shader\n" + capabilities +
            "OpMemoryModel Logical GLSL450\n"
            "OpEntryPoint GLCompute %main \"main\"\n"
            "OpExecutionMode %main LocalSize 1 1 1\n" + declarations +
            "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n"
            "%main = OpFunction %void None %fn\n%l = OpLabel\nOpReturn\nOpFunctionEnd\n")
