# Sourced by the scripts that run on the lent GPU (gpu-ncu.sh, gpu-models.sh): sets `pack`
# (.dev/gpu, else .dev/gpu-quick: what scripts/gpu-pack.sh made and the call carried) and
# `bin` (BIN, else its unpacked binaries), puts the library on the loader's path, and points
# RB_CACHE_DIR at /tmp/rb-cache with the carried .dev/rb-cache copied in.
pack=.dev/gpu
[[ -f $pack/bin.tar.xz || -d $pack/bin ]] || pack=.dev/gpu-quick
bin=${BIN:-$pack/bin}
[[ -d $bin ]] || tar -C "$pack" -xJf "$pack/bin.tar.xz"
export LD_LIBRARY_PATH=$PWD/$bin:${LD_LIBRARY_PATH:-}
export RB_CACHE_DIR=${RB_CACHE_DIR:-/tmp/rb-cache}
if [[ -d .dev/rb-cache ]]; then
  mkdir -p "$RB_CACHE_DIR" && cp -r .dev/rb-cache/. "$RB_CACHE_DIR/"
fi
