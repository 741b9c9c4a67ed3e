# The app's own figure of merit against the rank count (median of the
# repetitions, error bars min to max). Linear from zero, so a flat line is
# what weak scaling hopes for per rank and a doubling what strong scaling
# hopes for; SI prefixes on the axis (500M = 5e8).
@COMMON@
set title '@TITLE@'
set ylabel '@FOM@'
set yrange [0:*]
set format y '%.1s%c'
@HOLLOW_NOTE@
# Each series' dash type: 2 (dashed) for a simulated series, 1 for measured.
array DASH[@NSERIES@] = [@DASHES@]
@DASH_NOTE@
plot for [i=0:@NSERIES@-1] '@DATA@' index i using 1:2:3:4 with yerrorlines lt i+1 dt DASH[i+1] title columnheader(1)@HOLLOW@
