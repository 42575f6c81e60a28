# fidelity.gp - a kernel sweep's twins against the kernel: per phase, each board's median
# ratio twin / kernel (points; model twins left of the tic, replay twins right of it,
# model twins of boot probe context, "model-boot", on it),
# with p10 to p90 over the boards (bars) and their median (a diamond).
#
# Run by report/fidelity.c inside the output directory as
#   gnuplot -e "datafile='fidelity.tsv'; outfile='fidelity.png'; fmt='png'; nrows=N" fidelity.gp
# datafile: tab-separated, '#' comments; two blocks (gnuplot's index 0 and 1):
#   0, a board's ratio:  1 kind (0 model, 1 replay, 2 model-boot)  2 phase_index  3 phase  4 ratio  5 board
#   1, over the boards:  1 kind  2 phase_index  3 phase  4 p10  5 median  6 p90  7 boards
# The phases are dlsim's nine (sim/sweep/fidelity.h), named here; board names come from
# the data file only and are not drawn.
if (!exists("nrows")) nrows = 10
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'svg') {
	set terminal svg size 1100,520 dynamic noenhanced font 'sans,10' background '#ffffff'
} else {
	set terminal pngcairo size 1100,520 noenhanced font 'sans,10' background '#ffffff'
}
set output outfile
set datafile separator "\t"
set title "Twin / kernel per phase: a point per board (its median over its kernel runs); bars p10 to p90 over the boards, diamond the median"
set ylabel "twin / kernel (log scale)"
set logscale y
set xrange [-0.6:8.6]
set xtics ("probe" 0, "prepare" 1, "suspend" 2, "suspend_late" 3, "suspend_noirq" 4, \
           "resume_noirq" 5, "resume_early" 6, "resume" 7, "complete" 8) rotate by -30 nomirror
set grid ytics
set key outside right top
set arrow from -0.6,1 to 8.6,1 nohead dt 2 lc rgb '#555555'
# each board's point is moved sideways a little at random, so that equal ratios stay apart
off(k) = k == 0 ? -0.12 : k == 1 ? 0.12 : 0
pts(k) = k == 0 ? -0.3 : k == 1 ? 0.3 : 0
x0(k, want) = k == want ? 1 : NaN
plot datafile index 0 using (x0($1, 0) * ($2 + pts(0) + 0.1 * (rand(0) - 0.5))):4 \
         with points pt 7 ps 0.7 lc rgb '#4e79a7' title 'model twin, a board', \
     ''       index 0 using (x0($1, 1) * ($2 + pts(1) + 0.1 * (rand(0) - 0.5))):4 \
         with points pt 7 ps 0.7 lc rgb '#f28e2b' title 'replay twin, a board', \
     ''       index 1 using (x0($1, 0) * ($2 + off(0))):5:4:6 with yerrorbars pt 13 ps 1.6 lw 2 \
         lc rgb '#1f3b63' title 'model: p10, median, p90', \
     ''       index 1 using (x0($1, 1) * ($2 + off(1))):5:4:6 with yerrorbars pt 13 ps 1.6 lw 2 \
         lc rgb '#a3520b' title 'replay: p10, median, p90', \
     ''       index 0 using (x0($1, 2) * ($2 + pts(2) + 0.1 * (rand(0) - 0.5))):4 \
         with points pt 7 ps 0.7 lc rgb '#59a14f' title 'model-boot twin, a board', \
     ''       index 1 using (x0($1, 2) * ($2 + off(2))):5:4:6 with yerrorbars pt 13 ps 1.6 lw 2 \
         lc rgb '#2d5a27' title 'model-boot: p10, median, p90'
