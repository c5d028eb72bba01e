#!/usr/bin/env bash
# Installs Debian's hipcc (bookworm: HIP 5.2.3 with clang-15, rocm-device-libs) so that
# scripts/check-kernels.sh can compile kernels/*.hip offline for AMD targets.
#
# - Nothing to do when `hipcc` (or $HIPCC) already runs.
# - hipcc in the system's configured suites: `apt-get install --no-install-recommends hipcc`
#   (needs root, as in CI; the system's apt sources are never changed).
# - hipcc absent from the configured suites: the same private apt configuration as
#   fetch-rocm-headers.sh (scripts/rocm-apt.sh, suite unstable) supplies it.
# Prints, last, the hipcc path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

found() { command -v "${HIPCC:-hipcc}" 2>/dev/null || true; }
if [ -n "$(found)" ]; then
    echo "install-hipcc: already present: $(found)" >&2
    found
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-hipcc: hipcc is not installed and this is not root; run as root (CI does) or" >&2
    echo "  apt-get install --no-install-recommends hipcc" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q --no-install-recommends -o Dpkg::Options::=--force-confold)
cand=$(apt-cache policy hipcc 2>/dev/null | awk '/Candidate:/ {print $2}')
if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
    # The lists may just be missing (fresh container): refresh the system's own lists once.
    apt-get -q update >&2
    cand=$(apt-cache policy hipcc 2>/dev/null | awk '/Candidate:/ {print $2}')
fi
if [ -n "$cand" ] && [ "$cand" != "(none)" ]; then
    echo "install-hipcc: installing hipcc $cand from the configured suites" >&2
    apt-get install "${apt_opts[@]}" hipcc >&2
else
    # shellcheck source=scripts/rocm-apt.sh
    source "$here/rocm-apt.sh"
    rb_apt_setup
    rb_apt_update
    echo "install-hipcc: hipcc not in the configured suites; taking it from $RB_APT_SUITE" >&2
    rb_apt apt-get install "${apt_opts[@]}" hipcc >&2
fi
if [ -z "$(found)" ]; then
    echo "install-hipcc: hipcc still not found after installing" >&2
    exit 1
fi
found
