# util.gp - callbacks in progress, blocked workers and ready devices of one run over time.
#
# Run by report.c inside the output directory as
#   gnuplot -e "datafile='util.tsv'; outfile='util.png'; fmt='png'; nrows=N" util.gp
# datafile: tab-separated, '#' header; a step function (each line holds until
# the next): 1 time_ms  2 busy  3 blocked  4 ready  5 K (the run's workers)
if (!exists("nrows")) nrows = 10
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'svg') {
	set terminal svg size 1200,460 dynamic noenhanced font 'sans,10' background '#ffffff'
} else {
	set terminal pngcairo size 1200,460 noenhanced font 'sans,10' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set title "Callbacks in progress (running or sleeping in the driver), workers blocked on a dependency, devices ready but not started"
set xlabel "time from the run's start (ms)"
set ylabel "callbacks in progress"
set y2label "blocked workers, ready devices"
set yrange [0:*]
set offsets 0, 0, 1, 0
set y2range [0:*]
set ytics nomirror
set y2tics
set grid xtics ytics
set key outside right top
plot datafile using 1:2 with steps lw 1.5 lc rgb '#4e79a7' title 'callbacks in progress (left)', \
     ''       using 1:5 with lines dt 2 lw 1 lc rgb '#555555' title 'K, the simulated CPUs (left)', \
     ''       using 1:3 axes x1y2 with steps lw 1.5 lc rgb '#e15759' title 'blocked (right)', \
     ''       using 1:4 axes x1y2 with steps lw 1 lc rgb '#59a14f' title 'ready (right)'
