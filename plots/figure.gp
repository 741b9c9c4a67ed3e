# A figure a sweep spec asks for (plots: figures: in the spec): any x
# (ranks, threads, size or a matrix parameter) against any y (figure of
# merit, efficiency, speedup or a record field), the median of the
# repetitions with error bars from min to max, one line per series.
@COMMON@
unset logscale x
set autoscale x
set xtics autofreq
set format x '%g'
@XAXIS@
@YAXIS@
set title '@TITLE@'
set xlabel '@XLABEL@'
set ylabel '@YLABEL@'
@HOLLOW_NOTE@
# Each series' dash type: 2 (dashed) for a simulated series, 1 for measured.
array DASH[@NSERIES@] = [@DASHES@]
@DASH_NOTE@
plot for [i=0:@NSERIES@-1] '@DATA@' index i using 1:2:3:4 with yerrorlines lt i+1 dt DASH[i+1] title columnheader(1)@HOLLOW@
