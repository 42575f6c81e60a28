# makespan.gp - makespan per run (order) and per operation, with the lower bound.
#
# Run by report.c inside the output directory as
#   gnuplot -e "datafile='makespan.tsv'; outfile='makespan.png'; fmt='png'; nrows=N" makespan.gp
# datafile: tab-separated, '#' header, '-' for a missing value; columns
#   1 run_id  2 label  3 makespan_ms  4 lower_bound_ms  5 probe_ms  6 suspend_ms  7 resume_ms
# Labels come from the data file only, never from this command line.
if (!exists("nrows")) nrows = 10
if (!exists("fmt")) fmt = 'png'
width = 560 + 70 * nrows
if (width > 2400) width = 2400
if (fmt eq 'svg') {
	set terminal svg size width,520 dynamic noenhanced font 'sans,10' background '#ffffff'
} else {
	set terminal pngcairo size width,520 noenhanced font 'sans,10' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set datafile missing "-"
set title "Makespan per run and operation; lower bound = max(critical path, CPU work / K)"
set ylabel "simulated time (ms)"
set yrange [0:*]
set xrange [-0.6:nrows - 0.4]
set xtics rotate by -30 nomirror
set grid ytics
set key outside right top
set style fill solid 0.85 border -1
bw = 0.18
set boxwidth bw absolute
plot datafile using ($0 - 1.5 * bw):3 with boxes lc rgb '#4e79a7' title 'makespan', \
     ''       using ($0 - 0.5 * bw):5 with boxes lc rgb '#59a14f' title 'probe', \
     ''       using ($0 + 0.5 * bw):6 with boxes lc rgb '#f28e2b' title 'suspend', \
     ''       using ($0 + 1.5 * bw):7 with boxes lc rgb '#76b7b2' title 'resume', \
     ''       using ($0 - 2.2 * bw):4:(4.4 * bw):(0) with vectors nohead lw 2 lc rgb '#e15759' title 'lower bound', \
     ''       using 0:(0):xtic(2) with points ps 0 notitle
