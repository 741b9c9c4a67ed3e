# Strong scaling: the global problem fixed, speedup T(n0)/T(n) =
# fom(n)/fom(n0) over the smallest rank count n0; the dashed line is ideal
# (n / n0).
@COMMON@
set title '@TITLE@'
set ylabel 'speedup  T(@BASE_RANKS@) / T(n)'
set logscale y 2
set format y '%g'
@HOLLOW_NOTE@
# Each series' dash type: 2 (dashed) for a simulated series, 1 for measured.
array DASH[@NSERIES@] = [@DASHES@]
@DASH_NOTE@
@MODEL_NOTE@
plot x / @BASE_RANKS@. with lines ls 100 title 'ideal', \
     for [i=0:@NSERIES@-1] '@DATA@' index i using 1:2:3:4 with yerrorlines lt i+1 dt DASH[i+1] title columnheader(1)@HOLLOW@@MODEL@
