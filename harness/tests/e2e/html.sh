#!/bin/bash
# report.html and the history site (`mapp history publish`) opened in a real
# browser. Records are made from a real one (html_fixture.py, no app runs):
# a results folder with a failed run, and a history of 12 revisions (a
# planted 10 % slowdown) and of 6 (flat). Without a browser: the pages are
# written, strings from records are escaped, bad input to publish exits 2.
# With chromium (--headless, --dump-dom): each page loads with nothing on
# the console, its figures are inline SVGs that draw a plot, and its
# tables, rows, links, headings, commands and log tails are there
# (html_check.py). Then the check is shown to fail on a page with a script
# (a console error), on a figure cut short, on a figure whose files were
# deleted before the report, and on a page missing a table. Skips (77)
# where chromium is not installed.
TESTS=$(cd "$(dirname "$0")" && pwd)
. "$TESTS/lib.sh"
TEMPLATE=${1:?usage: html.sh history-template.json}
unset MAPP_HISTORY
R=res/html-demo

python3 "$TESTS/html_fixture.py" "$TEMPLATE" .
expect_exit 0 "$MAPP" history add history.jsonl --db res/history.sqlite
expect_exit 0 "$MAPP" report $R
expect_output "$R/report.html"
expect_exit 0 "$MAPP" history publish site --db res/history.sqlite
expect_output "site/index.html (3 configuration pages)"
n1=heat_mpi_serial_tiny_weak_n1_t1__vm
n4=heat_mpi_serial_tiny_weak_n4_t1__vm
for page in index $n1 heat_mpi_serial_tiny_weak_n2_t1__vm $n4; do [ -s site/$page.html ] || fail "no site/$page.html"; done
[ -s site/figures/history-$n1.svg ] || fail "no trend figure of $n1"

# publishing again with fewer configurations removes the pages and figure
# files of the ones left out, which the last publish listed in .mapp-site,
# and nothing of the user's; publishing them all again brings them back
echo "notes" >site/notes.html && echo "mine" >site/figures/mine.svg
expect_exit 0 "$MAPP" history publish site --db res/history.sqlite --only ranks=1
expect_output "site/index.html (1 configuration page)"
expect_output "8 files of configurations no longer published removed from site"
[ -s site/$n1.html ] && [ -s site/figures/history-$n1.svg ] || fail "the kept configuration's page or figure is gone"
for f in site/$n4.html site/figures/history-$n4.svg site/figures/history-$n4.dat site/figures/history-$n4.gp; do
  [ ! -e "$f" ] || fail "$f of a configuration no longer published is still there"
done
[ -s site/notes.html ] && [ -s site/figures/mine.svg ] || fail "publish removed a file it had not written"
# (paths out of the site, relative and absolute, both in the scratch folder)
printf '../outside.html\n%s/outside-absolute.html\n' "$PWD" >>site/.mapp-site
echo "outside" >outside.html && echo "outside" >outside-absolute.html
expect_exit 0 "$MAPP" history publish site --db res/history.sqlite
expect_output "site/index.html (3 configuration pages)"
[ -s outside.html ] && [ -s outside-absolute.html ] || fail "a path out of the site in .mapp-site was removed"
[ -s site/$n4.html ] && [ -s site/figures/history-$n4.svg ] || fail "publishing every configuration again left one out"
[ "$(wc -l <site/.mapp-site)" = 12 ] || fail "site/.mapp-site does not list 3 pages and their 9 figure files"

# a record's strings are text in the page, never markup
grep -qF "vm &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; &#39;single&#39;" $R/report.html ||
  fail "the host name is not escaped in report.html"
grep -qF 'vm <script>' $R/report.html && fail "a record's <script> reached report.html"
# the same content in both renderings: the failed run's command and log tail
grep -qF "log line 30 of the failed run" $R/report.md || fail "report.md lacks the failed run's log tail"
grep -qF "mpirun -np 4 --oversubscribe" $R/report.md || fail "report.md lacks the failed run's command"

# ---- publish: bad input is one line and exit 2
expect_exit 2 "$MAPP" history publish site --db missing.sqlite
expect_output "no history at missing.sqlite"
expect_one_error_line "$MAPP" history publish site --db missing.sqlite
touch afile
expect_exit 2 "$MAPP" history publish afile/site --db res/history.sqlite
expect_one_error_line "$MAPP" history publish afile/site --db res/history.sqlite
expect_exit 2 "$MAPP" history publish --db res/history.sqlite
expect_exit 2 "$MAPP" history publish site extra --db res/history.sqlite

CHROMIUM=
for c in chromium chromium-browser; do command -v "$c" >/dev/null && CHROMIUM=$c && break; done
[ -n "$CHROMIUM" ] || { echo "html: chromium is not installed: the pages were not opened in a browser (skipping)"; exit 77; }

# browse PAGE NAME: the DOM of PAGE as chromium built it (NAME.dom) and its
# log (NAME.log: console messages are logged as INFO:CONSOLE lines).
browse() {
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$SCRATCH/chromium-profile" \
    --enable-logging=stderr --v=0 --dump-dom "file://$SCRATCH/$1" >"$2.dom" 2>"$2.log" ||
    fail "chromium could not open $1: $(tail -3 "$2.log")"
}
# check PAGE NAME CHECKS...: PAGE opened in the browser passes html_check.py.
check() {
  local page=$1 name=$2
  shift 2
  browse "$page" "$name"
  python3 "$TESTS/html_check.py" "$page" "$name.dom" "$name.log" "$@"
}
# check_fails PAGE NAME WHY CHECKS...: the check fails on PAGE, saying WHY.
check_fails() {
  local page=$1 name=$2 why=$3 out
  shift 3
  out=$(check "$page" "$name" "$@") && fail "the check passed $page ($name)"
  grep -qF -- "$why" <<<"$out" || { printf '%s\n' "$out" >&2; fail "the check of $page ($name) does not say '$why'"; }
  echo "html: $name fails the check, as it should:"
  grep -F -- "$why" <<<"$out" | head -2 | sed 's/^/  /'
}

report_checks=(--title "mapp results: html-demo" --tables 6 --figures 6
  --heading "What each technique buys here" --heading Coverage --heading Machine --heading heat
  --heading "figure of merit per variant and rank count" --heading "Performance history" --heading "Failed runs"
  --heading "heat tasks/omp n=4 t=1 tiny rep 2: verification"
  --text "vm <script>alert(1)</script> & \"quoted\" 'single'" --text "2 of 3 failed"
  --pre "mpirun -np 4 --oversubscribe --bind-to none mapp-heat --variant tasks --backend omp"
  --pre "log line 11 of the failed run" --pre "log line 30 of the failed run" --no-pre "log line 10 of")
check $R/report.html report "${report_checks[@]}" || fail "report.html"
check site/index.html index --title "mapp history: history" --tables 1 --rows 0:3 --trends 3 --links 3 --figures 0 \
  --heading "system vm" --text SLOWER --text "100006c0ffee slower -10.0 %" || fail "the history index"
check site/$n1.html page-n1 --title "heat mpi/serial tiny weak n1 t1 @vm" --figures 1 --tables 2 --rows 0:1 --rows 1:12 \
  --links 1 --heading "Change points" --heading Revisions --text "a slowdown" || fail "the page of n1"
check site/$n4.html page-n4 --title "heat mpi/serial tiny weak n4 t1 @vm" --figures 1 --tables 1 --rows 0:6 --links 1 \
  --text "None: E-Divisive means finds no step" || fail "the page of n4"
# a history of 6 revisions (the last 6 of the fixture's): its site as well
python3 - history.jsonl >history6.jsonl <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
last6 = sorted({r["git_revision"] for r in records})[-6:]
for r in records:
    if r["git_revision"] in last6: print(json.dumps(r))
PY
expect_exit 0 "$MAPP" history add history6.jsonl --db res/history6.sqlite
expect_output "added 54 of 54 records"
expect_exit 0 "$MAPP" history publish site6 --db res/history6.sqlite
check site6/index.html index6 --title "mapp history: history6" --tables 1 --rows 0:3 --trends 3 --links 3 --figures 0 ||
  fail "the index of a 6-revision history"
check site6/$n1.html page6-n1 --figures 1 --tables 1 --rows 0:6 --links 1 || fail "the n1 page of a 6-revision history"

# ---- the check fails where it should
# a script (blocked by the page's Content-Security-Policy: a console error)
sed 's|</main>|<script>document.title = "changed"</script></main>|' $R/report.html >$R/planted-script.html
check_fails $R/planted-script.html planted-script "console: " "${report_checks[@]}"
# a figure cut short: the first inline SVG loses its plots
python3 - $R/report.html $R/planted-cut.html <<'PY'
import sys
page = open(sys.argv[1]).read()
start = page.index('<g id="f1-gnuplot_plot_1"')
open(sys.argv[2], "w").write(page[:start] + page[page.index("</svg>", start):])
PY
check_fails $R/planted-cut.html planted-cut "figure 1 (heat: weak-efficiency) draws no plot" "${report_checks[@]}"
# a page without its coverage table
python3 - $R/report.html $R/planted-table.html <<'PY'
import re, sys
page = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r'(<h2>Coverage</h2>\n)<div class="table">.*?</div>\n', r"\1", page, count=1, flags=re.S))
PY
check_fails $R/planted-table.html planted-table "5 tables, expected 6" "${report_checks[@]}"
# a figure whose files are gone when the report is written (the records
# made older than the plots, so that report does not draw them again)
rm $R/plots/heat-fom.svg $R/plots/heat-fom.png
touch -d '1 hour ago' $R/results.jsonl
expect_exit 0 "$MAPP" report $R
check_fails $R/report.html planted-missing "a missing figure: Figure missing: heat: fom" "${report_checks[@]}"
echo "html: ok"
