# Sourced by ci/peer-venv.sh and ci/analysis-venv.sh: what both do to make
# a venv from pinned PyPI requirements, once. $me names the calling script
# in its messages.

# venv_fresh VENV STAMP HASH: exits 0 (the script is done) when VENV's
# Python is there and STAMP holds HASH (the requirements' and the Python's).
venv_fresh() {
  if [ -x "$1/bin/python" ] && [ -f "$2" ] && [ "$(cat "$2")" = "$3" ]; then
    echo "$me: $1 is up to date"
    exit 0
  fi
}

# venv_create PYTHON VENV STAMP: VENV made with PYTHON unless its Python is
# already there, and its stamp removed until the caller writes it again.
# Exit 2, with one line, when the venv module fails.
venv_create() {
  if [ ! -x "$2/bin/python" ]; then
    rm -rf "$2"
    "$1" -m venv "$2" >/dev/null || {
      echo "$me: '$1 -m venv' failed (Debian: apt-get install python3-venv, or run ci/install-deps.sh)" >&2; exit 2; }
  fi
  rm -f "$3"
}
