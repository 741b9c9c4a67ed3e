# Speedup of each variant/backend over the reference at the same rank
# count and problem: fom / fom(reference). Above 1.0 (dashed) is faster.
@COMMON@
set title '@TITLE@'
set ylabel 'speedup over @REFERENCE@  (fom / fom_ref)'
set yrange [0:@YMAX@]
set format y '%.2f'
@HOLLOW_NOTE@
# Each series' dash type: 2 (dashed) for a simulated series, 1 for measured.
array DASH[@NSERIES@] = [@DASHES@]
@DASH_NOTE@
plot 1.0 with lines ls 100 title '@REFERENCE@ (reference)', \
     for [i=0:@NSERIES@-1] '@DATA@' index i using 1:2:3:4 with yerrorlines lt i+1 dt DASH[i+1] title columnheader(1)@HOLLOW@
