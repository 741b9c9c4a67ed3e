# Flattens a Google Benchmark JSON file (its own layout: one key per line)
# into "ROW<TAB>KEY<TAB>VALUE" lines, one per numeric field of each result.
# ROW is the benchmark's name without "/real_time" and the "_median"
# suffix; with aggregates only the medians are kept (mean, stddev and cv
# are dropped); real_time and cpu_time are converted to seconds. A row that
# skipped with an error gets "error 1".
function flush(   k, scale) {
  if (name == "" || !keep) return
  scale = unit == "ns" ? 1e-9 : unit == "us" ? 1e-6 : unit == "ms" ? 1e-3 : 1
  for (k in value) {
    if (k == "real_time" || k == "cpu_time") printf "%s\t%s\t%.9g\n", name, k, value[k] * scale
    else printf "%s\t%s\t%s\n", name, k, value[k]
  }
  if (failed) printf "%s\terror\t1\n", name
  name = ""
}
function string_of(line) {
  sub(/^[^:]*: *"/, "", line)
  sub(/",? *$/, "", line)
  return line
}
/^ *"name": "/ {
  flush()
  split("", value)
  name = string_of($0)
  keep = name !~ /_(mean|stddev|cv)$/
  sub(/_median$/, "", name)
  sub(/\/real_time$/, "", name)
  unit = "ns"
  failed = 0
  next
}
/^ *"time_unit": "/ { unit = string_of($0); next }
/^ *"error_occurred": true/ { failed = 1; next }
/^ *"[A-Za-z0-9_]+": -?[0-9.]+([eE][-+]?[0-9]+)?,? *$/ {
  key = $0
  sub(/^ *"/, "", key)
  sub(/".*/, "", key)
  v = $0
  sub(/^[^:]*: */, "", v)
  sub(/,? *$/, "", v)
  value[key] = v
  next
}
/^ *}/ { flush() }
END { flush() }
