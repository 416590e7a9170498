# The example GEMMs on a real H200 through Dawn: emu diff of emu/examples/gemm_dawn.wgsl (128^3,
# 256^3) and of gemm_wgpu.wgsl emitted as Dawn WGSL, against the nvidia-h200 profile.
# Run on the device machine set up as in scripts/h200_session.sh's header; reports in $OUT.
set -u
OUT=${OUT:-out}; mkdir -p $OUT
export EMU_DAWN_TOGGLES=vulkan_enable_f16_on_nvidia PYTHONUNBUFFERED=1
glx=$(ldconfig -p | awk '/libGLX_nvidia.so.0/ {print $NF; exit}')
[ -z "$glx" ] && glx=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -1)
for icd in "${VK_DRIVER_FILES:-}" /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
  [ -f "$icd" ] && python3 -c 'import sys; from emu.hw.runner import available_adapter as a; i,w=a("dawn"); print(w); sys.exit(0 if i else 1)' && break
done 2>&1 | tail -2
{
for size in 128 256; do
  n=$((size / 32))
  echo "== gemm_dawn $size"
  python3 -m emu diff emu/examples/gemm_dawn.wgsl --dispatch $n,$n --profile nvidia-h200 --backend dawn \
     --override M=$size --override N=$size --override K=$size --random-inputs 7 --report $OUT/gemm_dawn_$size.json; echo "exit $?"
done
n=16
echo "== gemm_wgpu 256 (emitted as Dawn)"
python3 -m emu diff emu/examples/gemm_wgpu.wgsl --dispatch $n,$n --profile nvidia-h200 --backend dawn \
   --override M=256 --override N=256 --override K=256 --random-inputs 7 --report $OUT/gemm_wgpu_256.json; echo "exit $?"
} 2>&1 | tee $OUT/gemm.log
