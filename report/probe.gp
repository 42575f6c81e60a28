# probe.gp - histogram of one run's devices by probe attempts and by defers.
#
# Run by report.c inside the output directory as
#   gnuplot -e "datafile='probe.tsv'; outfile='probe.png'; fmt='png'; nrows=N" probe.gp
# datafile: tab-separated, '#' header; columns
#   1 bin  2 label (count or range)  3 devices by attempts  4 devices by defers
if (!exists("nrows")) nrows = 10
if (!exists("fmt")) fmt = 'png'
width = 600 + 24 * nrows
if (width > 2000) width = 2000
if (fmt eq 'svg') {
	set terminal svg size width,440 dynamic noenhanced font 'sans,10' background '#ffffff'
} else {
	set terminal pngcairo size width,440 noenhanced font 'sans,10' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set title "Probe: devices by number of attempts (probe_start + probe_defer) and of defers"
set xlabel "attempts or defers per device"
set ylabel "devices"
set yrange [0:*]
set xrange [-0.6:nrows - 0.4]
set xtics rotate by -45 nomirror
set grid ytics
set key outside right top
set style fill solid 0.85 border -1
bw = 0.38
set boxwidth bw absolute
plot datafile using ($1 - 0.5 * bw):3 with boxes lc rgb '#4e79a7' title 'attempts', \
     ''       using ($1 + 0.5 * bw):4 with boxes lc rgb '#e15759' title 'defers', \
     ''       using 1:(0):xtic(2) with points ps 0 notitle
