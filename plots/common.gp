# Shared look of every mapp figure. `mapp plot` pastes it into each figure's
# script in place of the COMMON placeholder, so a generated script stands alone.
set grid xtics ytics mytics lc rgb '#d0d0d0' lw 1
set key outside right top vertical Left reverse box opaque noenhanced samplen 2 spacing 1.3
set title noenhanced font ',13'
set border 3
set tics nomirror out
set logscale x 2
set format x '%g'
set xrange [@XMIN@:@XMAX@]
set xtics (@XTICS@)
set xlabel 'MPI ranks'
set pointsize 1.2
set style line 100 lc rgb '#404040' dt 2 lw 1.5
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7
set linetype 2 lc rgb '#d62728' lw 2 pt 5
set linetype 3 lc rgb '#2ca02c' lw 2 pt 9
set linetype 4 lc rgb '#9467bd' lw 2 pt 11
set linetype 5 lc rgb '#ff7f0e' lw 2 pt 13
set linetype 6 lc rgb '#8c564b' lw 2 pt 4
set linetype 7 lc rgb '#e377c2' lw 2 pt 6
set linetype 8 lc rgb '#17becf' lw 2 pt 8
set linetype cycle 8
