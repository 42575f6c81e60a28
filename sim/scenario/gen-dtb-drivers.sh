#!/bin/sh
# gen-dtb-drivers.sh KSRC CONFIG SUFFIX [DTS_DIR...] > sim/scenario/dtb_drivers_SUFFIX.inc
# Driver facts for the DTB importer (dtb_import.c), read from a full kernel
# source tree KSRC (drivers/, sound/) and a kernel .config CONFIG:
#
#   compatible -> driver   a struct of_device_id table whose name appears in
#                          the body of a `struct *_driver` of the same file
#                          (.of_match_table = T or of_match_ptr(T)); the
#                          driver's name is its .name string (a #define of
#                          the file resolved; else the file's base name).
#                          An i2c or spi driver's i2c_device_id/spi_device_id
#                          names too, as rows "i2c:NAME", "spi:NAME": the
#                          bus matches them against the first compatible
#                          without its vendor (of_alias_from_compatible())
#   bus                    that struct's type without _driver (platform,
#                          i2c, spi, amba, sdio, ...)
#   built                  y/m/n: the Kconfig symbols that build the file's
#                          object, from the Makefiles (obj-$(CONFIG_X) +=
#                          file.o; composite objects name-y/-objs/-$(CONFIG_Y)
#                          and obj-$(CONFIG_X) += name.o; each directory's
#                          obj-$(CONFIG_D) += dir/ up to drivers/ or sound/),
#                          looked up in CONFIG: y only when every one is y,
#                          m when each is y or m, n otherwise (also when a
#                          symbol is unset); ? when no Makefile rule names
#                          the object (a file #included by another, ...)
#   async suspend          the file calls device_enable_async_suspend()
#                          (DL_DTB_DRV_ASYNC_OWN), or the bus core calls it for
#                          every device it adds (DL_DTB_DRV_ASYNC_BUS: i2c clients,
#                          i2c_new_client_device(); sdio functions; usb, pci,
#                          scsi, ata, hid, mei; grep device_enable_async_suspend
#                          drivers/ for the callers)
#   async probe            PROBE_PREFER_ASYNCHRONOUS in the driver's struct
#   runtime PM             pm_runtime_enable( or devm_pm_runtime_enable( in
#                          the file
#
# What it does not capture: drivers that match a node by other means than
# an of_device_id table in the driver's own file (a table in another file,
# of_match_node() in a parent's probe, ACPI/PRP0001), a table shared by
# several files, facts that live in another file of a multi-file driver
# (the runtime-PM call in a helper file), conditional calls (#ifdef, a
# quirk that enables async suspend on some SoCs only), #if 0 blocks, and
# drivers that bind by name (platform_device_id only).  When several
# drivers claim a compatible, the one built best (y, then m, then n) wins,
# then the first by path (the kernel takes the first registered).
#
# With DTS_DIR... (e.g. KSRC/arch/arm64/boot/dts KSRC/scripts/dtc/include-prefixes),
# only compatibles that appear as a string in the first directory's *.dts
# files or in a file they #include (found beside the includer or under any
# DTS_DIR) are kept: the table stays small.  The importer takes a compatible
# that is not in the table for one without a driver, so the first directory
# must hold the sources of the DTBs imported (arm64's include arm's dtsi).
#
# Output: the C definitions of drv_SUFFIX[] (file, name, bus, CONFIG
# symbols: one chain that builds it, built, flags) and compat_SUFFIX[]
# (compatible, index into drv_SUFFIX), both sorted, for bsearch().
# Generated in this tree:
#   K=/var/cache/dlsim-kernel-src/6.12-full/linux-source-6.12
#   gen-dtb-drivers.sh $K /var/cache/dlsim-dtbs/x/boot/config-6.12.118+deb12-arm64 612 \
#     $K/arch/arm64/boot/dts $K/scripts/dtc/include-prefixes > sim/scenario/dtb_drivers_612.inc
#   K=/var/cache/dlsim-kernel-src/7.3-full/linux-source-7.3
#   gen-dtb-drivers.sh $K /var/cache/dlsim-kernel-src/7.3-config/config-7.3.4+deb13-arm64 73 \
#     $K/arch/arm64/boot/dts $K/scripts/dtc/include-prefixes > sim/scenario/dtb_drivers_73.inc
# (the 7.3 config is ./usr/src/linux-headers-7.3.4+deb13-arm64/.config of
# Debian's linux-headers-7.3.4+deb13-arm64 package, trixie-backports, arm64;
# shared/tools/kernel-src VERSION --full unpacks the trees).
set -eu
k=${1:?usage: gen-dtb-drivers.sh KERNEL_SOURCE_DIR CONFIG SUFFIX [DTS_DIR...]}
cfg=${2:?usage: gen-dtb-drivers.sh KERNEL_SOURCE_DIR CONFIG SUFFIX [DTS_DIR...]}
sfx=${3:?usage: gen-dtb-drivers.sh KERNEL_SOURCE_DIR CONFIG SUFFIX [DTS_DIR...]}
shift 3
case $sfx in *[!A-Za-z0-9_]*) echo "gen-dtb-drivers.sh: SUFFIX must be [A-Za-z0-9_]" >&2; exit 2 ;; esac
cfg=$(cd "$(dirname "$cfg")" && pwd)/$(basename "$cfg")
keep=$(mktemp)
trap 'rm -f "$keep"' EXIT
if [ $# -gt 0 ]; then
	# the first directory's *.dts and every *.dts(i) they #include, found
	# beside the includer or under one of the directories (as dtc -i does)
	find "$1" -name '*.dts' | DIRS="$*" perl -e '
		my @dirs = split " ", $ENV{DIRS}; my @todo = map { chomp; $_ } <STDIN>; my %seen;
		while (defined(my $f = shift @todo)) {
			next if $seen{$f}++;
			open(my $h, "<", $f) or next;
			(my $here = $f) =~ s{/[^/]*$}{};
			while (<$h>) {
				print "$1\n" while /"([^"\\]+)"/g;
				next unless /^\s*(?:#include|\/include\/)\s*[<"]([^>"]+\.dtsi?)[>"]/;
				for my $d ($here, @dirs) { if (-f "$d/$1") { push @todo, "$d/$1"; last; } }
			}
		}' | LC_ALL=C sort -u >"$keep"
fi
cd "$k"
echo "/* Generated by sim/scenario/gen-dtb-drivers.sh from $(basename "$k") and $(basename "$cfg"); do not edit. */"
echo "#define DRV_SOURCE_$sfx \"$(basename "$k") and $(basename "$cfg")\""
grep -rlE --include='*.c' 'of_device_id|i2c_device_id|spi_device_id' drivers sound | LC_ALL=C sort |
	CFG="$cfg" KEEP="$keep" FILTER="${1:+1}" SFX="$sfx" perl -e '
use strict; use warnings;
my %cfg; open(my $c, "<", $ENV{CFG}) or die "$ENV{CFG}: $!";
while (<$c>) { $cfg{$1} = $2 if /^CONFIG_(\w+)=(\S+)/; }
my (%keep, %keep_sfx);
if ($ENV{FILTER}) { open(my $kf, "<", $ENV{KEEP}) or die; while (<$kf>) { chomp; $keep{$_} = 1; $keep_sfx{$1} = 1 if /^[^,]*,(.+)$/; } }
my %bus_async = map { $_ => 1 } qw(i2c sdio usb pci scsi ata hid mei mmc);
my %mk;	# dir -> { entry -> [ [lhs, cond], ... ] }
sub slurp { my $f = shift; open(my $h, "<", $f) or return undef; local $/; my $t = <$h>; return $t; }
sub makefile {
	my $d = shift;
	return $mk{$d} if exists $mk{$d};
	my $t = slurp("$d/Makefile") // slurp("$d/Kbuild") // "";
	$t =~ s/\\\n/ /g;
	my %e;
	for my $l (split /\n/, $t) {
		$l =~ s/#.*//;
		next unless $l =~ /^\s*([\w.-]+?)-(y|m|objs|\$\(CONFIG_(\w+)\))\s*[:+]?=\s*(.*)$/;
		my ($lhs, $kind, $sym, $rhs) = ($1, $2, $3, $4);
		my $cond = defined $sym ? $sym : ($kind eq "m" ? "=m" : "=y");
		for my $w (split " ", $rhs) {
			$w = "$1.o" if $w =~ /^\$\(([\w.-]+)-(?:y|objs)\)$/;	# msm-y += $(adreno-y)
			next unless $w =~ /\.o$|\/$/;
			push @{$e{$w}}, [$lhs, $cond];
		}
	}
	return $mk{$d} = \%e;
}
sub val { my $s = shift; return 2 if $s eq "=y"; return 1 if $s eq "=m";
	my $v = $cfg{$s} // "n"; return $v eq "y" ? 2 : $v eq "m" ? 1 : 0; }
# best state of object $o (relative to $d): [state, [symbols]], state -1 unknown
sub obj_state {
	my ($d, $o, $depth) = @_;
	return [-1, []] if $depth > 6;
	my $e = makefile($d)->{$o};
	if (!$e) {
		# a parent directory may name it as sub/file.o
		if ($d =~ m{^(.*)/([^/]+)$} && $1 ne "") { return obj_state($1, "$2/$o", $depth + 1); }
		return [-1, []];
	}
	my $best = [-1, []];
	for my $r (@$e) {
		my ($lhs, $cond) = @$r;
		my $v = val($cond); my @syms = $cond =~ /^=/ ? () : ("CONFIG_$cond");
		my $res;
		if ($lhs eq "obj") {
			my $ds = dir_state($d, $depth + 1);
			$res = [$ds->[0] < 0 ? $v : ($v < $ds->[0] ? $v : $ds->[0]), [@syms, @{$ds->[1]}]];
		} elsif ($lhs =~ /^(?:ccflags|asflags|subdir|lib|always|hostprogs|targets|extra|clean-files)$/) {
			next;
		} else {
			my $up = obj_state($d, "$lhs.o", $depth + 1);
			next if $up->[0] < 0;
			$res = [$v < $up->[0] ? $v : $up->[0], [@syms, @{$up->[1]}]];
		}
		$best = $res if $res->[0] > $best->[0];
	}
	return $best;
}
my %dcache;
sub dir_state {
	my ($d, $depth) = @_;
	return $dcache{$d} if $dcache{$d};
	my $r;
	if ($d eq "drivers") { $r = [2, []]; }
	elsif ($d eq "sound") { $r = [val("SOUND"), ["CONFIG_SOUND"]]; }
	elsif ($d =~ m{^(.*)/([^/]+)$}) { $r = obj_state($1, "$2/", $depth); $r = [-1, []] if $r->[0] < 0 && 0; }
	else { $r = [-1, []]; }
	return $dcache{$d} = $r;
}
my (@drv, %best);
while (my $f = <STDIN>) {
	chomp $f;
	my $t = slurp($f) // next;
	$t =~ s{/\*.*?\*/}{ }gs;
	$t =~ s{(^|[\s;{}])//[^\n]*}{$1}g;
	my (%tables, %ids);
	while ($t =~ /struct\s+of_device_id\s+(?:__\w+\s+)*(\w+)\s*\[[^\]]*\]\s*(?:__\w+\s*)?=\s*(\{(?:[^{}]++|(?-1))*\})/g) {
		my ($n, $b) = ($1, $2);
		my @cs = $b =~ /\.compatible\s*=\s*"([^"]+)"/g;
		$tables{$n} = \@cs if @cs;
	}
	# i2c_device_id/spi_device_id: matched against the compatible without its vendor
	while ($t =~ /struct\s+(?:i2c|spi)_device_id\s+(?:__\w+\s+)*(\w+)\s*\[[^\]]*\]\s*(?:__\w+\s*)?=\s*(\{(?:[^{}]++|(?-1))*\})/g) {
		my ($n, $b) = ($1, $2);
		my @ns = $b =~ /\{\s*(?:\.name\s*=\s*)?"([^"]+)"/g;
		$ids{$n} = \@ns if @ns;
	}
	next unless %tables || %ids;
	my %def; $def{$1} = $2 while $t =~ /^\s*#\s*define\s+(\w+)\s+"([^"]+)"/mg;
	(my $base = $f) =~ s{.*/}{}; $base =~ s/\.c$//;
	(my $dir = $f) =~ s{/[^/]+$}{};
	my $flags_file = 0;
	$flags_file |= 1 if $t =~ /\bdevice_enable_async_suspend\s*\(/;
	$flags_file |= 4 if $t =~ /\b(?:devm_)?pm_runtime_enable\s*\(/;
	my $st;
	while ($t =~ /struct\s+(\w+?)_driver\s+(?:__\w+\s+)*(\w+)\s*(?:__\w+\s*)?=\s*(\{(?:[^{}]++|(?-1))*\})/g) {
		my ($bus, $body) = ($1, $3);
		$bus =~ s/_device$//;
		my @keys;
		for my $tn (sort keys %tables) {
			push @keys, @{$tables{$tn}} if $body =~ /\b\Q$tn\E\b/;
		}
		if (($bus eq "i2c" || $bus eq "spi") && $body =~ /\.id_table\s*=\s*(\w+)/ && $ids{$1}) {
			push @keys, map { "$bus:$_" } @{$ids{$1}};
		}
		next unless @keys;
		my $name = $base;
		if ($body =~ /\.name\s*=\s*"([^"]+)"/) { $name = $1; }
		elsif ($body =~ /\.name\s*=\s*(\w+)/ && defined $def{$1}) { $name = $def{$1}; }
		$st //= obj_state($dir, "$base.o", 0);
		my $flags = $flags_file;
		$flags |= 2 if $body =~ /PROBE_PREFER_ASYNCHRONOUS/;
		$flags |= 8 if $bus_async{$bus};
		my $built = $st->[0] == 2 ? "y" : $st->[0] == 1 ? "m" : $st->[0] == 0 ? "n" : "?";
		my %seen; my $syms = join(" ", grep { !$seen{$_}++ } @{$st->[1]});
		push @drv, [$f, $name, $bus, $syms, $built, $flags];
		my $i = $#drv;
		my $rank = { y => 3, m => 2, n => 1, "?" => 0 }->{$built};
		for my $cs (@keys) {
			if ($cs =~ /^(?:i2c|spi):(.*)$/) { next if $ENV{FILTER} && !$keep_sfx{$1}; }
			elsif ($ENV{FILTER} && !$keep{$cs}) { next; }
			next if $cs =~ /["\\]/;
			my $o = $best{$cs};
			$best{$cs} = [$i, $rank] if !$o || $rank > $o->[1];
		}
	}
}
# keep only the drivers some kept compatible uses, renumbered in path order
my %used; $used{$_->[0]} = 1 for values %best;
my @keep = sort { $drv[$a][0] cmp $drv[$b][0] || $drv[$a][1] cmp $drv[$b][1] || $a <=> $b } keys %used;
my %renum; @renum{@keep} = 0 .. $#keep;
my $s = $ENV{SFX};
print "static const struct dl_dtb_driver drv_$s\[] = {\n";
for my $i (@keep) {
	my ($f, $n, $b, $y, $bt, $fl) = @{$drv[$i]};
	my @fl; push @fl, "DL_DTB_DRV_ASYNC_OWN" if $fl & 1; push @fl, "DL_DTB_DRV_ASYNC_PROBE" if $fl & 2;
	push @fl, "DL_DTB_DRV_RPM" if $fl & 4; push @fl, "DL_DTB_DRV_ASYNC_BUS" if $fl & 8;
	printf "\t{ \"%s\", \"%s\", \"%s\", \"%s\", %s, %s },\n", $f, $n, $b, $y,
		{ y => "DL_DTB_BUILT_IN", m => "DL_DTB_MODULE", n => "DL_DTB_NOT_BUILT", "?" => "DL_DTB_BUILD_UNKNOWN" }->{$bt},
		@fl ? join("|", @fl) : "0";
}
print "};\n\nstatic const struct dtb_compat compat_$s\[] = {\n";
{ use bytes; for my $cs (sort keys %best) { printf "\t{ \"%s\", %d },\n", $cs, $renum{$best{$cs}[0]}; } }
print "};\n";
'
