# The AMD checks (scripts/amd-checks.sh): kernels compile with hipcc, hip.rs conforms to the
# real ROCm headers, the HIP loader works against Debian's runtime without a GPU.
# Included from the Makefile with `-include mk/amd.mk`; needs root for the apt installs
# (CI runs as root); downloads are cached in build/.
.PHONY: amd-checks
amd-checks:
	bash scripts/amd-checks.sh
