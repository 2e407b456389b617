#!/bin/bash
# build-qemu.sh -- builds qemu-aarch64 (linux-user) with TCG plugins from Debian's qemu source
# package, inside the root, into $CACHE/qemu, and the counting plugin pqcount.c beside it
# ($CACHE/qemu/lib/libpqcount.so). Debian's qemu-user is a static binary that cannot load plugins;
# plugins need gmodule, so this qemu is linked against the root's glib and runs inside the root.
#
# Reused when $CACHE/qemu/.pqprof-qemu-stamp names the same configure flags (and QEMU_VERSION, if
# given); the plugin is rebuilt whenever pqcount.c changes (under a second).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
BUILD=$CACHE/qemu-build
FLAGS="--target-list=aarch64-linux-user --enable-plugins --disable-system --disable-tools \
--disable-docs --disable-guest-agent --disable-werror --disable-download --disable-install-blobs"
STAMP=$PREFIX/.pqprof-qemu-stamp
[[ -f $ROOT/.pqprof-root-stamp ]] || "$TOOLS/make-root.sh"

if [[ -f $STAMP && -x $QEMU ]] && grep -qxF "flags=$FLAGS" "$STAMP" \
    && { [[ -z ${QEMU_VERSION:-} ]] || grep -qxF "qemu=$QEMU_VERSION" "$STAMP"; }; then
    echo "build-qemu: $QEMU is $(head -1 "$STAMP") with plugins (its stamp matches)"
else
    # The newest version the mirror serves: its Sources index can list versions whose files are
    # gone (seen: 11.1.3 and 11.1.2 listed, 404; 10.2.2 served).
    VERS=${QEMU_VERSION:-$(in_root "apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: //p' | sort -rV | uniq | xargs")}
    echo "build-qemu: Debian qemu source versions to try: $VERS"
    rm -rf "$BUILD"
    mkdir -p "$BUILD" "$PREFIX/bin" "$PREFIX/include" "$PREFIX/lib"
    # --disable-install-blobs: the +ds tarball has no firmware blobs, and meson would look for
    # them (pc-bios/meson.build). No ':' (the epoch) in the source folder's name: meson refuses it.
    in_root "set -e
        cd $BUILD
        VER=
        for v in $VERS; do
            # apt-get source applies Debian's quilt series (skip-unpack-edk2-blobs, skip-install-dtb, ...).
            if nice -n 19 ionice -c3 apt-get source -q qemu=\$v >source.log 2>&1; then VER=\$v; break; fi
            echo \"build-qemu: qemu \$v cannot be fetched: \$(grep -m1 -o '404.*' source.log || tail -1 source.log)\"
            rm -rf qemu-* qemu_*
        done
        [ -n \"\$VER\" ] || { echo 'build-qemu: no qemu source could be fetched'; exit 1; }
        rm -f qemu_*.tar.* qemu_*.dsc
        mv qemu-*/ src
        echo \"qemu=\$VER\" >version
        mkdir obj && cd obj
        nice -n 19 ionice -c3 ../src/configure --prefix=$PREFIX $FLAGS >configure.log 2>&1 \
            || { tail -40 configure.log; exit 1; }
        nice -n 19 ionice -c3 ninja -j$JOBS qemu-aarch64 >build.log 2>&1 || { tail -40 build.log; exit 1; }
        install -m755 qemu-aarch64 $QEMU
        install -m644 ../src/include/qemu/qemu-plugin.h $PREFIX/include/qemu-plugin.h"
    { cat "$BUILD/version"; echo "flags=$FLAGS"; } >"$STAMP"
    # The source and objects (about 950 MB) are not needed again: the stamp is in $PREFIX.
    rm -rf "$BUILD"
fi

mkdir -p "$PREFIX/lib"
SUM=$(sha256sum "$TOOLS/pqcount.c" | cut -c1-16)
if [[ ! -f $PLUGIN || "$(cat "$PLUGIN.src" 2>/dev/null)" != "$SUM" ]]; then
    in_root "gcc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC -I$PREFIX/include \
        \$(pkg-config --cflags glib-2.0) -o $PLUGIN $TOOLS/pqcount.c"
    echo "$SUM" >"$PLUGIN.src"
fi
in_root "$QEMU --version | head -1"
echo "build-qemu: $QEMU, $PLUGIN ($(du -sh "$PREFIX" | cut -f1))"
