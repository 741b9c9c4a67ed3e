# Weak-scaling efficiency: eff(n) = fom(n) / (n * fom(1)), the problem per
# rank fixed. 1.0 (dashed) is perfect; error bars span the repetitions'
# min and max.
@COMMON@
set title '@TITLE@'
set ylabel 'weak-scaling efficiency  fom(n) / (n · fom(1))'
set yrange [0:@YMAX@]
set format y '%.2f'
@HOLLOW_NOTE@
# Each series' dash type: 2 (dashed) for a simulated series, 1 for measured.
array DASH[@NSERIES@] = [@DASHES@]
@DASH_NOTE@
@MODEL_NOTE@
plot 1.0 with lines ls 100 title 'ideal', \
     for [i=0:@NSERIES@-1] '@DATA@' index i using 1:2:3:4 with yerrorlines lt i+1 dt DASH[i+1] title columnheader(1)@HOLLOW@@MODEL@
