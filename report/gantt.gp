# gantt.gp - per-device timeline of one run's suspend and resume phases.
#
# Run by report.c inside the output directory as
#   gnuplot -e "datafile='gantt.tsv'; outfile='gantt.png'; fmt='png'; nrows=N" gantt.gp
# datafile: tab-separated, '#' header; one line per phase of a device:
#   1 row  2 device  3 op (1 suspend, 2 resume)  4 op name  5 phase  6 start_ms  7 end_ms
#   8 critical (1: on the critical path)
# Device names come from the data file only (ytic labels), never from this command line.
if (!exists("nrows")) nrows = 10
if (!exists("fmt")) fmt = 'png'
height = 140 + 14 * nrows
if (fmt eq 'svg') {
	set terminal svg size 1200,height dynamic noenhanced font 'sans,9' background '#ffffff'
} else {
	set terminal pngcairo size 1200,height noenhanced font 'sans,9' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set title "Suspend and resume per device; outlined: the critical path"
set xlabel "time from the first suspend's start (ms)"
set yrange [nrows - 0.5:-0.5]
set ytics nomirror
set grid xtics
set key outside right top
set style fill solid 0.85 border -1
mid(a, b) = (a + b) / 2
half(a, b) = (b - a) / 2
plot datafile using ($3 == 1 ? mid($6, $7) : NaN):1:(half($6, $7)):(0.35):ytic(2) \
          with boxxyerror lc rgb '#4e79a7' title 'suspend', \
     ''       using ($3 == 2 ? mid($6, $7) : NaN):1:(half($6, $7)):(0.35):ytic(2) \
          with boxxyerror lc rgb '#f28e2b' title 'resume', \
     ''       using ($8 == 1 ? mid($6, $7) : NaN):1:(half($6, $7)):(0.45) \
          with boxxyerror fs empty border lc rgb '#b00020' lw 2 lc rgb '#b00020' title 'critical path'
