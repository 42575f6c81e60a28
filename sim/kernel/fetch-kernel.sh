#!/bin/sh
# fetch-kernel.sh CACHE VERSION...: the Debian kernels that `dlsim --mode kernel`
# boots, fetched once with `apt-get download` and unpacked into CACHE/VERSION
# (never installed on this machine, never in the source tree):
#   CACHE/VERSION/vmlinuz   the image        CACHE/VERSION/build   its kbuild tree
#   CACHE/VERSION/release   the release string (uname -r of the guest)
# 6.12: Debian 12's linux-image-6.12.*-amd64-unsigned, headers and kbuild, built
# with gcc-12 like the host's.
# 7.3: Debian 13 backports' 7.3.N (the 6.16 async suspend/resume rework).  Its
# kbuild needs libc6 >= 2.38 and gcc-14, so CACHE/7.3 is a minimal Debian 13 root
# (mmdebstrap: gcc-14, binutils, make, the headers and kbuild) with the unsigned
# image unpacked beside; the marker CACHE/7.3/kbuild-chroot makes dlsim build its
# module in there (kbuild-chroot.sh).  Debian 13's suites are reached with a
# private apt configuration (CACHE/apt) on the mirror this machine's apt uses;
# the machine's own apt sources are never touched.
set -eu
cache=${1:?usage: fetch-kernel.sh CACHE VERSION...}
shift

# fetch_trixie VERSION: the Debian 13 root with the kernel's headers, kbuild and image.
fetch_trixie() {
	command -v mmdebstrap >/dev/null ||
		{ echo "fetch-kernel: kernel $1 needs mmdebstrap: run 'make deps'" >&2; exit 1; }
	a=$cache/apt
	mkdir -p "$a/lists/partial" "$a/archives/partial"
	# the same Debian mirror this machine's apt already uses, with Debian 13's suites
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/{print $2; exit}')
	[ -n "$uri" ] || uri=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || { echo "fetch-kernel: no Debian mirror in this machine's apt sources" >&2; exit 1; }
	printf 'deb %s trixie main\ndeb %s trixie-backports main\n' "$uri" "$uri" >"$a/sources.list"
	o="-o Dir::Etc::sourcelist=$a/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$a/lists"
	o="$o -o Dir::Cache=$a -o APT::Get::List-Cleanup=0"
	apt-get $o update -qq
	pkg=$(apt-cache $o search --names-only "^linux-binary-unsigned-$1\\.[0-9]+\\+deb13-amd64\$" |
	      awk '{print $1}' | sort -V | tail -n 1)
	[ -n "$pkg" ] || { echo "fetch-kernel: no linux-binary-unsigned-$1 package in trixie-backports" >&2; exit 1; }
	rel=${pkg#linux-binary-unsigned-}                     # 7.3.4+deb13-amd64
	echo "fetching kernel $1: $rel (a Debian 13 root with gcc-14 for its modules)"
	rm -rf "$dir.tmp"
	mmdebstrap --quiet --variant=essential --include="binutils,make,linux-headers-$rel" \
		trixie "$dir.tmp" "deb $uri trixie main" "deb $uri trixie-backports main"
	mkdir "$dir.tmp/debs"
	(cd "$dir.tmp/debs" && apt-get $o -o APT::Sandbox::User=root download -q "$pkg" "linux-base-$rel")
	for d in "$dir.tmp"/debs/*.deb; do dpkg-deb -x "$d" "$dir.tmp"; done
	rm -rf "$dir.tmp/debs"
	ln -s "usr/lib/modules/$rel/vmlinuz.unsigned" "$dir.tmp/vmlinuz"
	ln -s "usr/src/linux-headers-$rel" "$dir.tmp/build"
	echo "$rel" >"$dir.tmp/release"
	: >"$dir.tmp/kbuild-chroot"
	[ -e "$dir.tmp/build/Makefile" ] && [ -e "$dir.tmp/vmlinuz" ] ||
		{ echo "fetch-kernel: $dir.tmp: no headers or no image" >&2; exit 1; }
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	echo "kernel $1: $rel in $dir ($(du -sh "$dir" | cut -f1))"
}

for v in "$@"; do
	dir=$cache/$v
	if [ -e "$dir/vmlinuz" ] && [ -e "$dir/build/Makefile" ]; then
		echo "kernel $v: $(cat "$dir/release") in $dir"
		continue
	fi
	case $v in
	6.12) ;;
	7.3) fetch_trixie "$v"; continue ;;
	*) echo "fetch-kernel: kernel '$v' is not supported (6.12 or 7.3)" >&2; exit 2 ;;
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
