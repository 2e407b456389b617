#!/bin/bash
# in-root.sh [--emulate] 'COMMAND' -- runs a shell command inside the cross root ($CACHE/root), in a
# private mount namespace, so nothing stays mounted when it exits. Inside: /proc, /sys, /dev, /tmp,
# the repository, the cache folder and the repository's git folder, all at the paths they have
# outside (so paths in logs, build scripts and the results mean the same inside and out), and a
# clean environment (CARGO_HOME in the cache).
#
# --emulate also makes aarch64 programs run from inside the root run under the cache's qemu (-cpu
# $QEMU_CPU, default neoverse-n1): a binfmt_misc entry registered in a new user namespace, which has
# a binfmt_misc of its own (Linux 6.7+), so the host's is never touched. qemu-user passes a guest's
# execve to the host kernel, which cannot run an aarch64 file by itself: without the entry a test
# that starts the pqprof binary fails with "Exec format error". apt does not work in a user
# namespace (it drops to its _apt user), so the root is made without --emulate.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
emulate=
if [[ ${1:-} == --emulate ]]; then
    emulate=1
    shift
fi
[[ $# -eq 1 ]] || { echo "usage: in-root.sh [--emulate] 'COMMAND'" >&2; exit 2; }
GITDIR=$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)

# The binfmt entry: an ELF64, little-endian, ET_EXEC or ET_DYN (mask 0xfe), machine 0xb7
# (EM_AARCH64). F: the kernel opens qemu now, so the entry works from inside the chroot.
MAGIC='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
MASK='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

INNER='set -euo pipefail
ROOT=$1 REPO=$2 CACHE=$3 GITDIR=$4 EMULATE=$5 CMD=$6
if [ -n "$EMULATE" ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    printf "%s" ":pqprof-aarch64:M::$MAGIC:$MASK:$QEMU:F" >/proc/sys/fs/binfmt_misc/register
    # A user namespace may not mount a new proc without a pid namespace of its own: bind the host one.
    mount --rbind /proc "$ROOT/proc"
else
    mount -t proc proc "$ROOT/proc"
fi
mount --rbind /sys "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
for d in /tmp "$REPO" "$CACHE" ${GITDIR:+"$GITDIR"}; do
    mkdir -p "$ROOT$d"
    mount --bind "$d" "$ROOT$d"
done
# The cargo home at one path on every machine: registry paths end up in the binary (panic
# locations), and a different path moved a count by a few instructions.
mkdir -p "$CACHE/cargo-home" "$ROOT/cargo"
mount --bind "$CACHE/cargo-home" "$ROOT/cargo"
exec chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CARGO_HOME=/cargo GIT_OPTIONAL_LOCKS=0 QEMU_CPU="$QEMU_CPU" \
    /bin/sh -c "cd \"$REPO\" && $CMD"'

export MAGIC MASK QEMU QEMU_CPU=${QEMU_CPU:-neoverse-n1}
if [[ -n $emulate ]]; then
    [[ -x $QEMU ]] || { echo "in-root.sh: no $QEMU (run build-qemu.sh first)" >&2; exit 1; }
    ns=(unshare --user --map-root-user --mount --propagation private)
else
    ns=(unshare --mount --propagation private)
fi
exec "${ns[@]}" -- bash -c "$INNER" in-root "$ROOT" "$REPO" "$CACHE" "$GITDIR" "$emulate" "$1"
