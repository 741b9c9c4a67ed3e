# Sourced by the apps' shell tests: comparing answer files and launching a
# program on some ranks.
# same A B: every dataset of A bit for bit equal in B (h5diff without a
# tolerance); one line naming the first that differs.
same() {
  local d datasets
  datasets=$(h5ls -r "$1" | awk '$2 == "Dataset" {print $1}')
  [ -n "$datasets" ] || { echo "no datasets in $1"; return 1; }
  for d in $datasets; do h5diff -q "$1" "$2" "$d" "$d" >/dev/null || { echo "dataset $d differs: $1 $2"; return 1; }; done
}
# on_ranks RANKS PROGRAM ARGS...: PROGRAM on 1 rank directly, else under mpirun.
on_ranks() {
  local ranks=$1
  shift
  if [ "$ranks" -eq 1 ]; then "$@"; else mpirun -q -np "$ranks" --oversubscribe "$@"; fi
}
