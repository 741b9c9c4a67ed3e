#!/bin/bash
# mapp bisect on a history made here from the source repository: GOOD (its
# HEAD), two neutral commits, one that does not build, its repair, one that
# plants a sleep in heat's step loop, one more neutral commit (BAD). The
# bisect must skip the broken commit and name the planted one; a second
# bisect in the same folder reuses the builds; BAD not slower exits 1; bad
# input exits 2 with one line before anything is built.
. "$(dirname "$0")/lib.sh"
require_app heat
command -v git >/dev/null || { echo "git is not installed: skipping"; exit 77; }
git -C "$MAPP_SOURCE_DIR" rev-parse --verify --quiet HEAD >/dev/null ||
  { echo "$MAPP_SOURCE_DIR is not a git repository: skipping"; exit 77; }
# Four revisions are built (the broken one is tried too). mapp bisect names
# no CMake generator, so it builds with the one the environment chooses:
# Ninja where installed, whose configure and build of ccache'd objects take
# about half as long as make's (2.2 + 1.3 s against 2.6 + 4.1 s here).
if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null; then export CMAKE_GENERATOR=Ninja; fi

git clone --quiet "$MAPP_SOURCE_DIR" repo
in_repo() { git -C repo -c user.name=mapp-test -c user.email=mapp-test@localhost "$@"; }
# commit MESSAGE: commits what the caller changed; echoes its revision.
commit() {
  in_repo commit --quiet --all --message "$1"
  in_repo rev-parse HEAD
}
neutral() {
  echo "<!-- bisect test: $1 -->" >>repo/miniapps/heat/README.md
  commit "$1"
}
loop=repo/miniapps/heat/heat_mpi.c
grep -q '^    sweep(d);$' "$loop" && grep -q '^#include "heat.h"$' "$loop" ||
  fail "heat_mpi.c's step loop is not where this test plants its sleep"

GOOD=$(in_repo rev-parse HEAD)
neutral "neutral 1" >/dev/null
neutral "neutral 2" >/dev/null
cp "$loop" heat_mpi.c.orig
echo "this is not C" >>"$loop"
BROKEN=$(commit "does not build")
cp heat_mpi.c.orig "$loop"
REPAIRED=$(commit "builds again")
# 200 us a step: heat's tiny solve takes about 13 us a step, so the planted
# commit is some twenty times slower, far beyond this machine's noise (the
# bisect's --threshold 0.5 keeps the neutral commits' noise from counting:
# two builds of the same code differ by a third here, 9.7e8 against 6.4e8
# cell-updates/s, from where the code and its pages land).
sleep_line='    nanosleep(\&(struct timespec){.tv_nsec = 200000}, NULL); /* planted */'
sed -i "s|^    sweep(d);\$|    sweep(d);\n$sleep_line|" "$loop"
sed -i 's|^#include "heat.h"$|#include <time.h>\n\n#include "heat.h"|' "$loop"
PLANTED=$(commit "planted slowdown")
BAD=$(neutral "neutral 3")

heat_spec small.yaml small 1 # entry 0: one configuration; entry 1: two (refused)
cat >>small.yaml <<YAML
  - app: heat
    variants: [mpi]
    ranks: [1, 2]
YAML
bisect() { "$MAPP" bisect --repo repo --spec small.yaml --out results "$@"; }

# Bad input: one line, exit 2, nothing built.
expect_one_error_line bisect "$GOOD" nosuchrevision
expect_exit 2 bisect "$GOOD" nosuchrevision
expect_exit 2 bisect "$BAD" "$GOOD"
expect_output "is not an ancestor of BAD"
expect_exit 2 bisect "$GOOD" "$BAD" --entry 2
expect_output "--entry 2 is out of range"
expect_exit 2 bisect "$GOOD" "$BAD" --entry 1
expect_output "expands to 2 configurations"
expect_exit 2 bisect "$GOOD" "$BAD" --repetitions 3
expect_output "cannot reach significance"
expect_exit 2 "$MAPP" bisect "$GOOD" "$BAD" --repo repo
expect_output "--spec FILE is required"
[ ! -d results/bisect/worktrees ] || [ -z "$(ls results/bisect/worktrees)" ] || fail "bad input built something"

# The search: GOOD, BAD, then the middle (broken: skipped), its later
# neighbour (same), and the planted commit (SLOWER).
start=$SECONDS
expect_exit 0 bisect "$GOOD" "$BAD" --threshold 0.5
printf '%s\n' "$OUT"
echo "first bisect: $((SECONDS - start)) s"
expect_output "first bad revision: $PLANTED planted slowdown"
grep -E "^1 +${BROKEN:0:12} +FAILED +skip: does not build" <<<"$OUT" >/dev/null ||
  fail "the broken commit was not skipped"
# heat tiny's noise (sd near 20 % here) cannot rule out a 30 % change from a
# few repetitions: the repaired commit is the same or inconclusive, never slower.
grep -E "^2 +${REPAIRED:0:12} .* (same|inconclusive) " <<<"$OUT" >/dev/null ||
  fail "the repaired commit was not measured as the same (or inconclusive)"
grep -E "^3 +${PLANTED:0:12} .* SLOWER " <<<"$OUT" >/dev/null || fail "the planted commit was not measured as slower"
[ -x "results/bisect/worktrees/$PLANTED/build/bin/mapp-heat" ] || fail "no build in the planted commit's worktree"

# Again from the repaired commit: every revision's build is reused.
start=$SECONDS
expect_exit 0 bisect "$REPAIRED" "$BAD" --threshold 0.5
echo "second bisect: $((SECONDS - start)) s"
expect_output "first bad revision: $PLANTED"
! grep -q "built " <<<"$OUT" || { printf '%s\n' "$OUT"; fail "a revision built once was built again"; }
[ "$(grep -c ' reused ' <<<"$OUT")" = 3 ] || { printf '%s\n' "$OUT"; fail "not every build was reused"; }

# Nothing to find: exit 1, saying so.
expect_exit 1 bisect "$GOOD" "$REPAIRED" --threshold 0.5
expect_output "is not significantly slower than GOOD"
echo "bisect: ok"
