#!/bin/sh
# Make (once) and cache a Debian trixie root holding the servers pqprof
# measures: nginx, HAProxy, OpenSSH, OpenSSL and h2load as Debian ships
# them.  The root's path is the last line on stdout.
#
#   tools/lab/root.sh            # build if missing, print path
#   tools/lab/root.sh --path     # print the path of one already made, or fail
#   PQPROF_LAB_CACHE=/x tools/lab/root.sh
#
# The entry is named trixie-<hash of the package list, suite, mirror and
# ROOT_VERSION>, built in a temporary folder beside it and renamed into
# place only when complete.  The build runs in a private mount namespace
# (unshare --mount --pid), so no mount or process of debootstrap or apt
# outlives it, even if this script is killed with SIGKILL; a trap unmounts and
# removes the temporary folder on an ordinary failure, and a leftover
# from a killed run is removed by the next run (under a lock).
set -eu

ROOT_VERSION=1   # bump when this script's output changes
SUITE=trixie
MIRROR=${PQPROF_LAB_MIRROR:-http://deb.debian.org/debian}
PKGS="nginx haproxy openssh-server openssh-client openssl nghttp2-client procps"
CACHE=${PQPROF_LAB_CACHE:-$HOME/.cache/pqprof-lab}

hash=$(printf '%s\n' "$ROOT_VERSION" "$SUITE" "$MIRROR" "$PKGS" | sha256sum | cut -c1-12)
final=$CACHE/$SUITE-$hash
mkdir -p "$CACHE"

if [ -f "$final/pqprof-versions.txt" ]; then
    echo "$final"
    exit 0
fi
if [ "${1:-}" = --path ]; then   # the path of a root already made, never a build
    echo "root.sh: the lab root is not made yet (make lab makes it, once)" >&2
    exit 1
fi

[ "$(id -u)" = 0 ] || { echo "root.sh: debootstrap needs root" >&2; exit 1; }
if ! command -v debootstrap >/dev/null; then
    apt-get install -y --no-install-recommends debootstrap >&2
fi
# bookworm's debootstrap (1.0.128) has trixie as a link to its sid script
[ -e "/usr/share/debootstrap/scripts/$SUITE" ] || {
    echo "root.sh: this debootstrap has no $SUITE script" >&2; exit 1; }

# One build at a time; the lock is inherited by the build's processes, so
# a run killed with SIGKILL whose build still runs holds it until done.
exec 9>"$CACHE/.lock"
flock 9
if [ -f "$final/pqprof-versions.txt" ]; then echo "$final"; exit 0; fi

unmount_under() {  # unmount everything at or below $1, deepest first
    findmnt -rn -o TARGET | awk -v p="$1" 'index($0, p) == 1' | sort -r |
        while read -r m; do umount -l "$m" 2>/dev/null || true; done
}
for old in "$CACHE"/.tmp-*; do
    [ -e "$old" ] || continue
    echo "root.sh: removing leftover $old" >&2
    unmount_under "$old"
    rm -rf --one-file-system "$old"
done
[ -e "$final" ] && rm -rf --one-file-system "$final"   # incomplete

tmp=$CACHE/.tmp-$SUITE-$hash.$$
cleanup() {
    rc=$?
    unmount_under "$tmp"
    [ -d "$tmp" ] && rm -rf --one-file-system "$tmp"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

start=$(date +%s)
mkdir "$tmp"
# Everything that mounts runs in private mount and pid namespaces whose
# mounts and processes vanish with it: setpriv makes a SIGKILL of this
# script kill unshare, --kill-child then kills the namespace's pid 1 and
# with it every process of the build.
setpriv --pdeathsig KILL \
unshare --mount --propagation private --pid --fork --kill-child \
    env TMPROOT="$tmp" SUITE="$SUITE" MIRROR="$MIRROR" PKGS="$PKGS" \
    sh -eu -c '
    debootstrap --variant=minbase "$SUITE" "$TMPROOT" "$MIRROR" >&2
    # no service may start while packages install
    printf "#!/bin/sh\nexit 101\n" > "$TMPROOT/usr/sbin/policy-rc.d"
    chmod 755 "$TMPROOT/usr/sbin/policy-rc.d"
    mount -t proc proc "$TMPROOT/proc"
    chroot "$TMPROOT" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends $PKGS >&2
    chroot "$TMPROOT" apt-get clean
    rm -rf "$TMPROOT"/var/lib/apt/lists/*
    umount "$TMPROOT/proc"
    mkdir -p "$TMPROOT/lab"
    {
      echo "# made by tools/lab/root.sh ROOT_VERSION='"$ROOT_VERSION"' on $(date -u +%FT%TZ)"
      echo "# mirror $MIRROR suite $SUITE"
      chroot "$TMPROOT" nginx -v 2>&1
      chroot "$TMPROOT" haproxy -v 2>&1 | head -1
      chroot "$TMPROOT" /usr/sbin/sshd -V 2>&1 | head -1
      chroot "$TMPROOT" ssh -V 2>&1
      chroot "$TMPROOT" openssl version
      chroot "$TMPROOT" h2load --version 2>&1 | head -1
      echo "# dpkg"
      chroot "$TMPROOT" dpkg-query -W -f "\${Package} \${Version}\n" \
          nginx nginx-common haproxy openssh-server openssh-client \
          openssl libssl3t64 openssl-provider-legacy nghttp2-client \
          libc6 procps 2>/dev/null || true
    } > "$TMPROOT/pqprof-versions.txt.part"
    mv "$TMPROOT/pqprof-versions.txt.part" "$TMPROOT/pqprof-versions.txt"
'
mv -T "$tmp" "$final"
trap - EXIT
echo "root.sh: made $final in $(( $(date +%s) - start )) s, $(du -sh --one-file-system "$final" | cut -f1)" >&2
echo "$final"
