#!/usr/bin/env bash
# The option declarations of every mini-app (mapp_option.changes), walked
# from --help: every option there is classified in declarations.txt; --help
# shows the declaration the file expects; and --print-case with the option
# given takes the run off its preset's case (answer), also off its size
# (size), or leaves both (nothing). A declaration removed from an app's
# table fails here twice: its --help marker and its case.
#   check_declarations.sh BIN_DIR DECLARATIONS [APP...]
set -u
bin=${1:?BIN_DIR}
table=${2:?DECLARATIONS}
shift 2
apps=("$@")
# Without APPs named: every mini-app of the build (mapp-NAME with no '-' in NAME, as mapp list finds them).
if [ ${#apps[@]} -eq 0 ]; then
  for exe in "$bin"/mapp-*; do
    name=${exe##*/mapp-}
    [[ $name != *-* && -f $exe && -x $exe ]] && apps+=("$name")
  done
fi
[ ${#apps[@]} -gt 0 ] || { echo "check_declarations.sh: error: no mini-app in $bin" >&2; exit 2; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Lines of the table for app: its own, then the common ones it does not override.
rows_for() {
  local app=$1
  awk -v app="$app" '!/^#/ && NF == 4 && $1 == app {print $2, $3, $4; own[$2] = 1}
    !/^#/ && NF == 4 && $1 == "*" {common[++n] = $2 " " $3 " " $4; name[n] = $2}
    END {for (i = 1; i <= n; ++i) if (!own[name[i]]) print common[i]}' "$table"
}

expected_case() {
  case $1 in
  nothing) echo "case=tiny size=tiny" ;;
  answer) echo "case=none size=tiny" ;;
  size) echo "case=none size=custom" ;;
  esac
}

for app in "${apps[@]}"; do
  exe=$bin/mapp-$app
  [ -x "$exe" ] || { fail "$exe is missing"; continue; }
  help=$("$exe" --help) || { fail "$app --help failed"; continue; }
  rows=$(rows_for "$app")
  walked=0
  for opt in $(sed -n 's/^  --\([a-z0-9-]*\).*/\1/p' <<<"$help"); do
    [ "$opt" = help ] && continue
    grep -q "^$opt " <<<"$rows" || fail "$app --$opt is not classified in $table"
  done
  while read -r opt class value; do
    line=$(grep -E "^  --$opt( |$)" <<<"$help")
    [ -n "$line" ] || { fail "$app has no --$opt (classified in $table)"; continue; }
    [ "$class" = skip ] && continue
    marker=nothing
    grep -q '\[changes the answer' <<<"$line" && marker=answer
    grep -q '\[changes the size' <<<"$line" && marker=size
    # "[changes the answer: a|b]": only those values do
    only=$(sed -n 's/.*\[changes the [a-z]*: \([^]]*\)\].*/\1/p' <<<"$line")
    [ -n "$only" ] && ! tr '|' '\n' <<<"$only" | grep -qx -- "$value" && marker=nothing
    [ "$marker" = "$class" ] || fail "$app --$opt: --help declares '$marker', expected '$class'"
    if [ "$value" = - ]; then args=(--"$opt"); else args=(--"$opt" "$value"); fi
    got=$("$exe" --print-case "${args[@]}" 2>&1)
    want=$(expected_case "$class")
    [ "$got" = "$want" ] || fail "$app ${args[*]}: --print-case says '$got', expected '$want'"
    walked=$((walked + 1))
  done <<<"$rows"
  got=$("$exe" --print-case 2>&1)
  [ "$got" = "case=tiny size=tiny" ] || fail "$app --print-case alone says '$got'"
  echo "$app: $walked options walked"
done
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "every declaration as expected"
