# A configuration's figure of merit against commit (mapp history plot): the
# median of each revision's repetitions with their min and max as error
# bars, oldest commit on the left; dashed lines mark the change points the
# detector found (E-Divisive means), labelled with their size.
@COMMON@
unset logscale x
set xrange [-0.5:@XMAX@]
set xtics rotate by 45 right font ',9' (@XTICS@)
set xlabel 'commit, oldest first (by commit date, else by when it ran)'
set ylabel '@FOM@'
set yrange [0:*]
set format y '%.1s%c'
set title '@TITLE@'
set key inside bottom right
@MARKS@
plot '@DATA@' using 1:2:3:4 with yerrorlines lt 1 title 'median (min-max) of the repetitions'
