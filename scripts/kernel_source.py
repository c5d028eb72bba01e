"""A built-in kernel source as the library hands it to NVRTC (src/device/gpu/jit.rs `prepare`
for CUDA): kernels/common.h and kernels/rows.h pasted where they are included, the HIP runtime
header dropped. Shared by scripts/kernel_regs.py (on the GPU) and scripts/check-nvrtc.py
(here, without one)."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def prepare(path):
    """The source at `path` with the library's headers pasted in."""
    heads = {
        '#include "common.h"': "common.h",
        "#include <rocm_backend/common.h>": "common.h",
        '#include "rocm_backend/common.h"': "common.h",
        '#include "rows.h"': "rows.h",
    }
    out = []
    for line in open(path).read().splitlines():
        t = line.strip()
        if t in heads:
            text = open(os.path.join(ROOT, "kernels", heads[t])).read()
            out.extend(x for x in text.splitlines() if x.strip() != "#pragma once")
        elif t in ("#include <hip/hip_runtime.h>", '#include "hip/hip_runtime.h"'):
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n"
