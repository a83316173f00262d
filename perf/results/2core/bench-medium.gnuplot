# Plots of bench-medium.csv, written by bp bench. To redraw them from the CSV, in this directory:
#   gnuplot -e "dir='.'" bench-medium.gnuplot
if (!exists('dir')) dir = 'perf/results/2core'
stem = dir.'/bench-medium'
csv = stem.'.csv'
tmin = 1
tmax = 2
layout_rows = 2
layout_cols = 3
width = 1920
height = 960
array scene[4]
array nmax[4]
array algos[4]
array top[4]
workload = ''
scene[1] = 'uniform3'; nmax[1] = 1000000; algos[1] = 'brute sap grid hash shifts buckets quadtree closest'; top[1] = 'sap grid hash shifts buckets quadtree closest'
scene[2] = 'clustered3'; nmax[2] = 1000000; algos[2] = 'brute sap grid hash shifts buckets quadtree closest'; top[2] = 'sap grid hash shifts buckets quadtree closest'
scene[3] = 'uniform2'; nmax[3] = 1000000; algos[3] = 'brute sap grid hash shifts buckets quadtree closest'; top[3] = 'sap grid hash shifts buckets quadtree closest'
scene[4] = 'mixed3'; nmax[4] = 1000000; algos[4] = 'brute sap grid hash shifts buckets quadtree closest'; top[4] = 'sap grid hash shifts buckets quadtree closest'
set datafile separator comma
set datafile missing NaN
set termoption noenhanced
term = strstrt(GPVAL_TERMINALS, 'pngcairo') > 0 ? 'pngcairo' : 'png'
sel(s, a) = strcol(1) eq s && strcol(4).(column(18) > 0 ? '-incremental' : '') eq a
set grid
set key top left
eval sprintf('set terminal %s size %d,%d', term, width, height)

set output stem.'-time-vs-n.png'
set multiplot layout layout_rows, layout_cols title sprintf('step time vs n (median of the runs, %d thread%s)%s', tmin, tmin == 1 ? '' : 's', workload)
set logscale xy
set xlabel 'entities n'
set ylabel 'ms per step'
do for [s = 1:|scene|] {
	set title scene[s]
	plot for [a in algos[s]] csv every ::1 using (sel(scene[s], a) && column(5) == tmin ? column(3) : NaN):7 \
		smooth unique with linespoints title a
}
unset multiplot
unset logscale

set output stem.'-speedup.png'
set multiplot layout layout_rows, layout_cols title sprintf('speed-up over %d thread%s at the largest n%s', tmin, tmin == 1 ? '' : 's', workload)
set xlabel 'threads'
set ylabel 'speed-up'
set xrange [0:tmax + 1]
if (tmax <= 16) { set xtics 1 }
set yrange [0:*]
do for [s = 1:|scene|] {
	set title sprintf('%s n=%d', scene[s], nmax[s])
	plot for [a in top[s]] csv every ::1 using (sel(scene[s], a) && column(3) == nmax[s] ? column(5) : NaN):13 \
		smooth unique with linespoints title a, \
		x / tmin with lines dashtype 2 lc rgb 'gray' title 'ideal'
}
unset multiplot

set output stem.'-stages.png'
set multiplot layout layout_rows, layout_cols title sprintf('time per stage at the largest n, %d thread%s (medians)%s', tmin, tmin == 1 ? '' : 's', workload)
set style fill solid 0.85 border -1
set boxwidth 0.6
set xlabel ''
set ylabel 'ms'
set key outside right top
set xtics rotate by -30
do for [s = 1:|scene|] {
	set title sprintf('%s n=%d', scene[s], nmax[s])
	k = words(top[s])
	set xrange [0.4:k + 0.6]
	set xtics ()
	do for [i = 1:k] { set xtics add (word(top[s], i) i) }
	plot for [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):(column(9) + column(10) + column(11) + column(12)) \
			with boxes lc rgb '#e41a1c' title (i == 1 ? 'merge' : ''), \
		for [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):(column(9) + column(10) + column(11)) \
			with boxes lc rgb '#377eb8' title (i == 1 ? 'find' : ''), \
		for [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):(column(9) + column(10)) \
			with boxes lc rgb '#4daf4a' title (i == 1 ? 'build' : ''), \
		for [i = 1:k] csv every ::1 using (sel(scene[s], word(top[s], i)) && column(3) == nmax[s] && column(5) == tmin ? i : NaN):9 \
			with boxes lc rgb '#984ea3' title (i == 1 ? 'prepare' : '')
}
unset multiplot
