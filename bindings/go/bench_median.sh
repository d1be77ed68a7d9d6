#!/bin/sh
# bench_median.sh — the tiny-op benchmarks run COUNT times (default 9); prints the median
# of each one's wall-clock ns/op and of its process CPU time per op. Run from bindings/go
# with PKG_CONFIG_PATH and CATALYST_TEST_CPU_PLUGIN set as README.md says.
set -eu
go test -run '^$' -bench 'TinyAdd|CgoCall' -benchtime "${BENCHTIME:-300000x}" -count "${COUNT:-9}" . |
  awk '/^Benchmark/ { for (i = 3; i < NF; i++) if ($(i + 1) ~ /ns\/op$/) print $1, $(i + 1), $i }' |
  sort -k1,2 -k3,3n |
  awk '{ key = $1 " " $2; v[key] = v[key] " " $3; n[key]++ }
       END { for (k in v) { split(substr(v[k], 2), a, " "); m = n[k];
                            split(k, name, " ");
                            printf "%-22s %-10s median %8.1f over %d runs\n", name[1], name[2], a[int((m + 1) / 2)], m } }' |
  sort
