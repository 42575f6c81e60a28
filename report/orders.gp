# orders.gp - makespan per scenario/order group: mean and sd over the runs that
# differ only in their seed (`dlsim compare --seeds N`), with the lower bound.
#
# Run by report.c inside the output directory as
#   gnuplot -e "datafile='orders.tsv'; outfile='orders.png'; fmt='png'; nrows=N" orders.gp
# datafile: tab-separated, '#' header, '-' for a missing value; columns
#   1 group  2 label  3 runs  4 makespan_ms  5 makespan_sd_ms  6 lower_bound_ms
#   7 probe_ms  8 probe_sd_ms  9 suspend_ms  10 suspend_sd_ms  11 resume_ms  12 resume_sd_ms
# Labels come from the data file only, never from this command line.
if (!exists("nrows")) nrows = 10
if (!exists("fmt")) fmt = 'png'
width = 560 + 90 * nrows
if (width > 2400) width = 2400
if (fmt eq 'svg') {
	set terminal svg size width,540 dynamic noenhanced font 'sans,10' background '#ffffff'
} else {
	set terminal pngcairo size width,540 noenhanced font 'sans,10' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set datafile missing "-"
set title "Makespan per scenario and order: mean +/- sd over seeds; red: mean lower bound"
set ylabel "makespan: probe + suspend + resume (ms)"
set yrange [0:*]
set xrange [-0.6:nrows - 0.4]
set xtics rotate by -30 nomirror
set grid ytics
set key outside right top
set style fill solid 0.85 border -1
set errorbars small
bw = 0.18
set boxwidth bw absolute
plot datafile using ($0 - 1.5 * bw):4:5 with boxerrorbars lc rgb '#4e79a7' title 'makespan', \
     ''       using ($0 - 0.5 * bw):7:8 with boxerrorbars lc rgb '#59a14f' title 'probe', \
     ''       using ($0 + 0.5 * bw):9:10 with boxerrorbars lc rgb '#f28e2b' title 'suspend', \
     ''       using ($0 + 1.5 * bw):11:12 with boxerrorbars lc rgb '#76b7b2' title 'resume', \
     ''       using ($0 - 2.2 * bw):6:(4.4 * bw):(0) with vectors nohead lw 2 lc rgb '#e15759' title 'lower bound', \
     ''       using 0:(0):xtic(2) with points ps 0 notitle
