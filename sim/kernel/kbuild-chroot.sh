#!/bin/sh
# kbuild-chroot.sh ROOT CMD...: runs a kbuild command inside the Debian root ROOT
# that fetch-kernel.sh made for a kernel whose modules the host cannot build
# (7.3: gcc-14, binutils 2.44, libc6 2.41; the host's gcc 12 fails on
# -fmin-function-alignment).  Paths in CMD are ROOT-relative.  A private mount and
# PID namespace gives objtool its /proc; nothing is mounted on the host.
set -eu
root=${1:?usage: kbuild-chroot.sh ROOT CMD...}
shift
u=""
[ "$(id -u)" = 0 ] || u=--map-root-user
exec unshare $u --mount --pid --fork --mount-proc="$root/proc" \
	chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/ LC_ALL=C "$@"
