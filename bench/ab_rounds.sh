# Sourced by the bench/ab_*.sh scripts: abRounds ROUNDS UNIT OLD NEW runs `figure OLD` and
# `figure NEW` (a function of the caller printing one number, smaller is better) alternately,
# ROUNDS times, prints each round, then each binary's minimum and median and the median of
# the rounds' ratios (new / old). On a shared machine a single figure moves by tens of
# percent from one minute to the next; alternating rounds see the same noise, so the ratio
# is the figure to quote.
abRounds() {
  local rounds=$1 unit=$2 old=$3 new=$4 tmp r a b
  tmp=$(mktemp)
  printf '%-6s %10s %10s %8s\n' round "old $unit" "new $unit" "new/old"
  for r in $(seq "$rounds"); do
    a=$(figure "$old")
    b=$(figure "$new")
    awk -v r="$r" -v a="$a" -v b="$b" 'BEGIN { printf "%-6s %10s %10s %8.3f\n", r, a, b, b / a }'
    echo "$a $b" >>"$tmp"
  done
  awk -v unit="$unit" '
    function median(v, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { n++; a[n] = $1; b[n] = $2; q[n] = $2 / $1; if (n == 1 || $1 < amin) amin = $1; if (n == 1 || $2 < bmin) bmin = $2 }
    END {
      printf "old: min %g, median %g %s\n", amin, median(a, n), unit
      printf "new: min %g, median %g %s\n", bmin, median(b, n), unit
      printf "median of the rounds'"'"' new/old: %.3f\n", median(q, n)
    }' "$tmp"
  rm -f "$tmp"
}
