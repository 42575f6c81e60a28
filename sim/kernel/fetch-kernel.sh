#!/bin/sh
# fetch-kernel.sh CACHE VERSION...: the Debian kernels that `dlsim --mode kernel`
# boots, fetched once with `apt-get download` and unpacked into CACHE/VERSION
# (never installed on this machine, never in the source tree):
#   CACHE/VERSION/vmlinuz   the image        CACHE/VERSION/build   its kbuild tree
#   CACHE/VERSION/release   the release string (uname -r of the guest)
# 6.12: Debian 12's linux-image-6.12.*-amd64-unsigned, headers and kbuild, built
# with gcc-12 like the host's.
set -eu
cache=${1:?usage: fetch-kernel.sh CACHE VERSION...}
shift
for v in "$@"; do
	dir=$cache/$v
	if [ -e "$dir/vmlinuz" ] && [ -e "$dir/build/Makefile" ]; then
		echo "kernel $v: $(cat "$dir/release") in $dir"
		continue
	fi
	case $v in
	6.12) ;;
	*) echo "fetch-kernel: kernel '$v' is not supported yet (6.12)" >&2; exit 2 ;;
	esac
	img=$(apt-cache search --names-only "^linux-image-$v\\.[0-9]+\\+deb[0-9]+-amd64-unsigned\$" |
	      awk '{print $1}' | sort -V | tail -n 1)
	if [ -z "$img" ]; then
		SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
		$SUDO apt-get update -qq
		img=$(apt-cache search --names-only "^linux-image-$v\\.[0-9]+\\+deb[0-9]+-amd64-unsigned\$" |
		      awk '{print $1}' | sort -V | tail -n 1)
	fi
	[ -n "$img" ] || { echo "fetch-kernel: no linux-image-$v package in the archive" >&2; exit 1; }
	rel=${img#linux-image-}; rel=${rel%-unsigned}        # 6.12.118+deb12-amd64
	abi=${rel%-amd64}                                     # 6.12.118+deb12
	echo "fetching kernel $v: $rel"
	rm -rf "$dir.tmp"; mkdir -p "$dir.tmp/debs"
	(cd "$dir.tmp/debs" && apt-get download -q "$img" "linux-headers-$rel" \
		"linux-headers-$abi-common" "linux-kbuild-$abi")
	for d in "$dir.tmp"/debs/*.deb; do dpkg-deb -x "$d" "$dir.tmp/root"; done
	rm -rf "$dir.tmp/debs"
	hdr=$dir/root/usr/src/linux-headers-$rel
	# the headers' Makefile includes the common tree by its installed path: point it here
	sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" "$dir.tmp/root/usr/src/linux-headers-$rel/Makefile"
	ln -s "root/boot/vmlinuz-$rel" "$dir.tmp/vmlinuz"
	ln -s "root/usr/src/linux-headers-$rel" "$dir.tmp/build"
	echo "$rel" > "$dir.tmp/release"
	rm -rf "$dir"; mv "$dir.tmp" "$dir"
	[ -e "$hdr/Makefile" ] || { echo "fetch-kernel: $hdr/Makefile missing" >&2; exit 1; }
	echo "kernel $v: $rel in $dir"
done
