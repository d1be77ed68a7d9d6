#!/bin/sh
# check_cases.sh — the smoke test of a Google Benchmark program: it runs, exits 0, no case
# reports an error, and each named case prints its line. Never a timing threshold.
#
#   check_cases.sh "case1 case2 ..." PROGRAM [ARGS...]
set -u
names=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -ne 0 ]; then
  echo "check_cases.sh: $1 exited with status $status" >&2
  exit 1
fi
if printf '%s\n' "$out" | grep -q 'ERROR OCCURRED'; then
  echo "check_cases.sh: a case reported an error (above)" >&2
  exit 1
fi
for name in $names; do
  # UseRealTime() cases print as NAME/real_time.
  if ! printf '%s\n' "$out" | grep -Eq "^$name(/real_time)? "; then
    echo "check_cases.sh: no line for case $name" >&2
    exit 1
  fi
done
