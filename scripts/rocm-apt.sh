# shellcheck shell=bash
# Private apt configuration shared by the AMD check scripts (sourced, not run).
#
# One source: the system's own Debian mirror (read from /etc/apt/sources.list.d/*.sources or
# /etc/apt/sources.list), suite $RB_APT_SUITE (default `unstable`), component main.  Lists and
# downloaded .debs live under build/apt/ (git-ignored).  The system's apt sources, lists, cache
# and dpkg state are never written: every apt call goes through `rb_apt`, which overrides
# sourcelist, sourceparts, lists and cache.

RB_ROOT=${RB_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RB_APT_SUITE=${RB_APT_SUITE:-unstable}
RB_APT_DIR=${RB_APT_DIR:-$RB_ROOT/build/apt/$RB_APT_SUITE}

# The system's Debian mirror URI (first deb822 `URIs:` of a stanza whose suites are Debian's
# main archive, else the first `deb` line of sources.list), printed without a trailing slash.
rb_debian_mirror() {
    local uri=""
    if [ -n "${RB_DEBIAN_MIRROR:-}" ]; then echo "${RB_DEBIAN_MIRROR%/}"; return; fi
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # Stanzas are separated by blank lines; take URIs from the stanza whose Suites do not
        # end in -security and whose URI mentions debian.
        uri=$(awk 'BEGIN{RS=""; FS="\n"}
            { u=""; s="";
              for (i=1;i<=NF;i++) { if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/,"",$i); split($i,a," "); u=a[1] }
                                    if ($i ~ /^Suites:/) s=$i }
              if (u ~ /debian/ && u !~ /security/ && s !~ /-security/) { print u; exit } }' "$f")
        [ -n "$uri" ] && break
    done
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' \
            /etc/apt/sources.list | grep -v security | head -n1)
    fi
    if [ -z "$uri" ]; then
        echo "rocm-apt: no Debian mirror found in /etc/apt/sources.list.d/ or /etc/apt/sources.list" >&2
        return 1
    fi
    echo "${uri%/}"
}

# Writes the private sources.list and directories (idempotent).
rb_apt_setup() {
    local mirror keyring=""
    mirror=$(rb_debian_mirror) || return 1
    mkdir -p "$RB_APT_DIR/lists/partial" "$RB_APT_DIR/cache/archives/partial" "$RB_APT_DIR/debs"
    [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    local line="deb ${keyring:+[signed-by=$keyring] }$mirror $RB_APT_SUITE main"
    if [ ! -f "$RB_APT_DIR/sources.list" ] || [ "$(cat "$RB_APT_DIR/sources.list")" != "$line" ]; then
        echo "$line" > "$RB_APT_DIR/sources.list"
        rm -f "$RB_APT_DIR/.updated"
    fi
}

# apt-get / apt-cache with the private configuration.
rb_apt() {
    local tool=$1; shift
    "$tool" \
        -o Dir::Etc::sourcelist="$RB_APT_DIR/sources.list" \
        -o Dir::Etc::sourceparts=/dev/null \
        -o Dir::State::Lists="$RB_APT_DIR/lists" \
        -o Dir::Cache="$RB_APT_DIR/cache" \
        -o Dir::Cache::pkgcache="$RB_APT_DIR/cache/pkgcache.bin" \
        -o Dir::Cache::srcpkgcache="$RB_APT_DIR/cache/srcpkgcache.bin" \
        -o APT::Sandbox::User="$(id -un)" \
        -o Debug::NoLocking=1 \
        -o Acquire::Retries=3 \
        "$@"
}

# `apt-get update` on the private lists, at most once per $RB_APT_MAX_AGE seconds (default a day).
rb_apt_update() {
    local max_age=${RB_APT_MAX_AGE:-86400} now stamp=0
    now=$(date +%s)
    [ -f "$RB_APT_DIR/.updated" ] && stamp=$(cat "$RB_APT_DIR/.updated")
    if [ $((now - stamp)) -lt "$max_age" ]; then return 0; fi
    rb_apt apt-get -q update >&2 || return 1
    echo "$now" > "$RB_APT_DIR/.updated"
}

# Downloads the named packages (exact names) into $RB_APT_DIR/debs unless already there, and
# prints each .deb path.
rb_apt_download() {
    local pkg ver deb
    for pkg in "$@"; do
        ver=$(rb_apt apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
        if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
            echo "rocm-apt: package $pkg not found in $RB_APT_SUITE" >&2
            return 1
        fi
        # Debian file names drop the epoch and escape ':' as %3a.
        deb=$(ls "$RB_APT_DIR/debs/${pkg}_${ver#*:}_"*.deb 2>/dev/null | head -n1 || true)
        if [ -z "$deb" ]; then
            (cd "$RB_APT_DIR/debs" && rb_apt apt-get -q download "$pkg=$ver" >&2) || return 1
            deb=$(ls "$RB_APT_DIR/debs/${pkg}_"*"${ver#*:}_"*.deb 2>/dev/null | head -n1 || true)
            [ -n "$deb" ] || deb=$(ls -t "$RB_APT_DIR/debs/${pkg}_"*.deb | head -n1)
        fi
        echo "$deb"
    done
}
