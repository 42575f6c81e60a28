# scaling.gp - simulated makespan and the simulator's wall time against the
# number of devices, one line per order, log-log.
#
# Run by report.c inside the output directory as
#   gnuplot -e "datafile='scaling.tsv'; outfile='scaling.png'; fmt='png'; nrows=N" scaling.gp
# nrows: the number of orders, i.e. of data blocks (separated by two blank
# lines).  Each block starts with a header line "order <NAME> ..." whose
# second column titles the block; then: 1 devices  2 makespan_ms  3 wall_ms  4 runs.
# Order names come from the data file only, never from this command line.
if (!exists("nrows")) nrows = 1
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'svg') {
	set terminal svg size 1000,560 dynamic noenhanced font 'sans,10' background '#ffffff'
} else {
	set terminal pngcairo size 1000,560 noenhanced font 'sans,10' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set datafile missing "-"
set title "Scaling: simulated makespan (solid) and wall time of the simulator (dashed) per order"
set xlabel "devices"
set ylabel "makespan or wall time (ms)"
set logscale xy
set grid xtics ytics mxtics mytics
set key outside right top
plot for [i=0:nrows-1] datafile index i using 1:2 with linespoints lw 2 pt 7 lc i+1 title columnheader(2), \
     for [i=0:nrows-1] datafile index i using 1:3 with linespoints lw 1 dt 2 pt 6 lc i+1 notitle
