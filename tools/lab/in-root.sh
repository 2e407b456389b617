#!/bin/sh
# Run CMD in a pqprof lab root, leaving nothing behind when it ends or
# is killed (even with SIGKILL):
#
#   tools/lab/in-root.sh [-w HOSTDIR] ROOT CMD [ARG...]
#
# CMD runs as pid 1 of a new pid namespace, in a new mount namespace,
# chrooted into a throw-away overlay of ROOT (ROOT itself, a shared cache,
# is never written).  HOSTDIR, if given, is bound read-write at /lab so
# the caller can hand over configs and certificates and read logs.  The
# network namespace is the host's: a server on 127.0.0.1 inside is
# reachable from outside and from another in-root.sh.
#
# The host sees:  unshare (the pid this script execs as)
#                   `- CMD (pid 1 inside; its children below it)
# Killing unshare (any signal) SIGKILLs CMD (--kill-child), which ends
# every process of the pid namespace; the last process gone frees the
# mount namespace and with it every mount made here.  For a graceful
# stop, signal CMD (unshare's child) first.
#
# The Rust side can run exactly the same, as root, with argv
#   unshare --mount --propagation private --pid --fork --kill-child \
#     sh -euc SCRIPT in-root ROOT HOSTDIR-or-empty CMD...
# where SCRIPT is the single-quoted text below (ROOT, HOSTDIR absolute).
# When CMD dies of SIGKILL, util-linux 2.38's unshare prints "unshare:
# sigprocmask unblock failed: Invalid argument": harmless.
set -eu
work=
if [ "${1:-}" = -w ]; then work=$(realpath "$2"); shift 2; fi
[ $# -ge 2 ] || { echo "usage: in-root.sh [-w HOSTDIR] ROOT CMD..." >&2; exit 2; }
root=$(realpath "$1"); shift

exec unshare --mount --propagation private --pid --fork --kill-child \
  sh -euc '
root=$1 work=$2; shift 2
m=/mnt                        # private to this mount namespace
mount -t tmpfs -o mode=755 pqprof-lab $m
mkdir $m/up $m/wk $m/r
mount -t overlay pqprof-lab -o lowerdir=$root,upperdir=$m/up,workdir=$m/wk $m/r
mount -t proc proc $m/r/proc
mount -t tmpfs -o mode=755 tmpfs $m/r/run
mkdir -m 755 $m/r/run/sshd    # sshd privilege separation directory
mount -t tmpfs -o mode=1777 tmpfs $m/r/tmp
mount -t tmpfs -o mode=755 tmpfs $m/r/dev
for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  IFS=: read n a b <<E
$d
E
  mknod -m 666 $m/r/dev/$n c $a $b
done
ln -s /proc/self/fd $m/r/dev/fd
if [ -n "$work" ]; then mkdir -p $m/r/lab; mount --bind "$work" $m/r/lab; fi
exec chroot $m/r /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 "$@"
' in-root "$root" "$work" "$@"
