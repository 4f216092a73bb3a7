#!/usr/bin/env bash
# brokerd's CPU seconds per GB produced, for two builds measured alternately in one run
# (old, new, new, old, ...), so that whatever else the machine does hits both alike.
# docs/performance.md, "Guarding the write path's cost".
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bench/cpu_per_gb.sh (--old BROKERD | --old-rev REV) [--new BROKERD] [options]

Measures a brokerd's CPU time (user + system, from /proc/PID/stat) per GB produced by
brokerd-load, for two builds, in alternating order over N rounds; each run is a fresh
single node on a free loopback port with a fresh data dir. Prints one line per run, then
per build the median CPU s/GB, its min-max, the median records/s and the peak RSS, and the
ratio new/old of the medians.

  --old PATH           the old brokerd binary
  --old-rev REV        or a git revision: built (Release) in a temporary git worktree,
                       the binary kept in the cache dir and reused on the next run
  --new PATH           the new brokerd binary (default: build/src/app/brokerd)
  --load PATH          brokerd-load (default: build/bench/loadgen/brokerd-load)
  --rounds N           rounds, each runs both builds (default 5)
  --gb X               GB (10^9 bytes of keys and values) produced per run (default 1)
  --partitions N       partitions of the topic (default 6)
  --record-bytes B     value bytes per record (default 1024)
  --keys N             distinct keys, chosen at random (default 10000)
  --acks A             0, 1 or all (default all)
  --producers N        producer threads of brokerd-load (default 1)
  --override K=V       passed to both brokers (repeatable)
  --max-ratio R        exit 2 when new/old of the median CPU s/GB exceeds R
  --tmp DIR            where data dirs go (default ${TMPDIR:-/tmp}); the same disk for both
  --cache DIR          where --old-rev builds are kept
                       (default ${XDG_CACHE_HOME:-~/.cache}/brokerd-cpu-per-gb)
  --build-jobs N       parallel jobs of an --old-rev build (default: all cores)
  -h, --help           this text

Exit status: 0 done, 1 a run or a build failed, 2 --max-ratio exceeded.
EOF
}

die() { echo "cpu_per_gb: $*" >&2; exit 1; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old="" old_rev="" new="$repo/build/src/app/brokerd" load="$repo/build/bench/loadgen/brokerd-load"
rounds=5 gb=1 partitions=6 record_bytes=1024 keys=10000 acks=all producers=1 max_ratio=""
tmp_base="${TMPDIR:-/tmp}" cache="${XDG_CACHE_HOME:-$HOME/.cache}/brokerd-cpu-per-gb"
build_jobs=$(nproc 2>/dev/null || echo 2)
overrides=()

while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --old|--old-rev|--new|--load|--rounds|--gb|--partitions|--record-bytes|--keys|--acks|--producers|--override|--max-ratio|--tmp|--cache|--build-jobs)
      (($# >= 2)) || die "$1 needs a value"
      case "$1" in
        --old) old=$2 ;; --old-rev) old_rev=$2 ;; --new) new=$2 ;; --load) load=$2 ;;
        --rounds) rounds=$2 ;; --gb) gb=$2 ;; --partitions) partitions=$2 ;;
        --record-bytes) record_bytes=$2 ;; --keys) keys=$2 ;; --acks) acks=$2 ;;
        --producers) producers=$2 ;; --override) overrides+=(--override "$2") ;;
        --max-ratio) max_ratio=$2 ;; --tmp) tmp_base=$2 ;; --cache) cache=$2 ;;
        --build-jobs) build_jobs=$2 ;;
      esac
      shift 2 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done

is_uint() { [[ $1 =~ ^[0-9]+$ ]] && (($1 > 0)); }
is_num() { [[ $1 =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]]; }
[[ -n $old || -n $old_rev ]] || { usage >&2; die "give --old or --old-rev"; }
[[ -n $old && -n $old_rev ]] && die "give --old or --old-rev, not both"
is_uint "$rounds" || die "--rounds must be a positive integer"
is_uint "$partitions" || die "--partitions must be a positive integer"
is_uint "$producers" || die "--producers must be a positive integer"
is_uint "$keys" || die "--keys must be a positive integer (the records are keyed)"
[[ $record_bytes =~ ^[0-9]+$ ]] && ((record_bytes >= 12)) || die "--record-bytes must be an integer >= 12"
is_num "$gb" && awk -v g="$gb" 'BEGIN { exit !(g > 0) }' || die "--gb must be a number > 0"
[[ -z $max_ratio ]] || is_num "$max_ratio" || die "--max-ratio must be a number"
[[ $acks == 0 || $acks == 1 || $acks == all ]] || die "--acks must be 0, 1 or all"
[[ -x $new ]] || die "no brokerd at $new (build it, or give --new)"
[[ -x $load ]] || die "no brokerd-load at $load (built into build/bench/loadgen/ when librdkafka-dev is installed; or give --load)"
[[ -n $old && ! -x $old ]] && die "no brokerd at $old"
for tool in awk curl getconf timeout; do command -v $tool >/dev/null || die "needs $tool"; done
clk_tck=$(getconf CLK_TCK)

# Everything this run starts or makes, cleaned up however it ends.
run_dir=$(mktemp -d "$tmp_base/cpu-per-gb.XXXXXX") || die "cannot make a directory in $tmp_base"
broker_pid="" load_pid="" build_tree=""
cleanup() {
  for pid in $load_pid $broker_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    fi
  done
  [[ -n $build_tree ]] && git -C "$repo" worktree remove --force "$build_tree" 2>/dev/null
  rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --old-rev: build the revision once, keep only its binary.
if [[ -n $old_rev ]]; then
  sha=$(git -C "$repo" rev-parse --verify "$old_rev^{commit}" 2>/dev/null) || die "no revision $old_rev"
  old="$cache/$sha/brokerd"
  if [[ -x $old ]]; then
    echo "--old-rev $old_rev = ${sha:0:12}: built before, reused"
  else
    command -v cmake >/dev/null && command -v ninja >/dev/null || die "--old-rev needs cmake and ninja"
    mkdir -p "$cache/$sha" || die "cannot make $cache/$sha"
    build_tree="$run_dir/src-${sha:0:12}"
    echo "--old-rev $old_rev = ${sha:0:12}: building (log: $cache/$sha/build.log)"
    git -C "$repo" worktree add --detach "$build_tree" "$sha" >"$cache/$sha/build.log" 2>&1 || die "git worktree add failed"
    if (cd "$build_tree" &&
        export CCACHE_NOHASHDIR=1 CCACHE_BASEDIR="$build_tree" &&
        cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release &&
        cmake --build build -j "$build_jobs" --target brokerd) >>"$cache/$sha/build.log" 2>&1; then
      cp "$build_tree/build/src/app/brokerd" "$old.tmp" && mv "$old.tmp" "$old" || die "cannot keep the binary"
    else
      die "building $old_rev failed: see $cache/$sha/build.log"
    fi
    git -C "$repo" worktree remove --force "$build_tree" && build_tree=""
  fi
fi

free_port() {  # a loopback port nothing answers on
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

cpu_ticks() {  # utime + stime of every thread of the process, in clock ticks
  local stat rest f
  stat=$(<"/proc/$1/stat") || return 1
  rest=${stat##*) }  # the fields after the command name, which may hold spaces
  read -r -a f <<<"$rest"
  echo $((f[11] + f[12]))  # fields 14 and 15 of proc(5)
}

hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

stop_broker() {
  local pid=$broker_pid
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "  broker $pid still running 30 s after SIGTERM; killed" >&2
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  broker_pid=""
}

records=$(awk -v g="$gb" -v b="$record_bytes" 'BEGIN { n = int(g * 1e9 / b + 0.5); print (n < 1 ? 1 : n) }')
# Bounds: brokerd-load stops at --records, or at this many seconds (8 MB/s at least).
load_cap=$(awk -v g="$gb" 'BEGIN { s = int(g * 125) + 60; print s }')

# run_load OUT CAP ARGS...: brokerd-load in the background (so a signal reaches the trap at
# once), bounded by timeout; returns its exit status.
run_load() {
  local out=$1 cap=$2; shift 2
  timeout -k 10 "$cap" "$load" "$@" >"$out" 2>>"$run_dir/load.log" &
  load_pid=$!
  wait "$load_pid"; local rc=$?
  load_pid=""
  return $rc
}

# run_one NAME BINARY: sets $result_line ("name cpu_s bytes cpu_s_per_gb records_per_s
# hwm_kib records"), or returns 1. Runs in this shell, so the trap knows its processes.
run_one() {
  result_line=""
  local name=$1 bin=$2 data port mport log out
  data="$run_dir/data-$name" log="$run_dir/broker-$name.log" out="$run_dir/load-$name.json"
  rm -rf "$data" && mkdir -p "$data"
  port=$(free_port) && mport=$(free_port) || { echo "  no free port" >&2; return 1; }
  "$bin" --override "log.dirs=$data" --override "listeners=PLAINTEXT://127.0.0.1:$port" \
    --override "metrics.listener=127.0.0.1:$mport" "${overrides[@]}" >"$log" 2>&1 &
  broker_pid=$!
  local ready=0
  for _ in $(seq 300); do  # up to 30 s
    kill -0 "$broker_pid" 2>/dev/null || break
    if curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$mport/ready"; then ready=1; break; fi
    sleep 0.1
  done
  if ((!ready)); then
    echo "  $name: brokerd did not become ready in 30 s; its log:" >&2; tail -n 20 "$log" >&2
    stop_broker; return 1
  fi
  local common=(--bootstrap "127.0.0.1:$port" --topic cpu-per-gb --partitions "$partitions"
    --mode produce --producers "$producers" --record-size "$record_bytes" --keys "$keys"
    --acks "$acks" --quiet --json)
  # The topic, its leaders and one record, before the measured window.
  if ! run_load "$out" 60 "${common[@]}" --records "$producers" --duration 50 ||
     ! grep -q '"failures": \[\]' "$out"; then
    echo "  $name: creating the topic failed:" >&2; cat "$out" >&2; tail -n 5 "$run_dir/load.log" >&2
    stop_broker; return 1
  fi
  local t0 t1 hwm
  t0=$(cpu_ticks "$broker_pid")
  run_load "$out" $((load_cap + 60)) "${common[@]}" --records "$records" --duration "$load_cap"
  local rc=$?
  sleep 1  # the grouped fsync of the last writes (log.flush.interval.ms, 1 s by default)
  t1=$(cpu_ticks "$broker_pid") && hwm=$(hwm_kib "$broker_pid") || {
    echo "  $name: brokerd died during the run; its log:" >&2; tail -n 20 "$log" >&2; broker_pid=""; return 1; }
  stop_broker
  rm -rf "$data"
  local re='"produce": \{"records": ([0-9]+), "bytes": ([0-9]+), "errors": ([0-9]+), "seconds": ([0-9.]+), "records_per_s": ([0-9.]+)'
  local json; json=$(<"$out")
  if ((rc != 0)) || [[ ! $json =~ $re ]] || [[ $json != *'"failures": []'* ]] || ((BASH_REMATCH[3] != 0)); then
    echo "  $name: brokerd-load failed (exit $rc): $json" >&2; return 1
  fi
  local recs=${BASH_REMATCH[1]} bytes=${BASH_REMATCH[2]} rps=${BASH_REMATCH[5]}
  result_line=$(awk -v n="$name" -v t=$((t1 - t0)) -v hz="$clk_tck" -v b="$bytes" -v r="$rps" -v h="$hwm" -v recs="$recs" \
    'BEGIN { cpu = t / hz; printf "%s %.2f %d %.4f %.0f %d %d\n", n, cpu, b, cpu / (b / 1e9), r, h, recs }')
}

echo "old: $old"
echo "new: $new"
echo "rounds $rounds x $gb GB: $records records of $record_bytes B, $keys keys, $partitions partitions," \
  "acks=$acks, $producers producer(s); brokerd-load $load"
results="$run_dir/results"
: >"$results"
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order=(old new); else order=(new old); fi
  for name in "${order[@]}"; do
    if [[ $name == old ]]; then bin=$old; else bin=$new; fi
    run_one "$name" "$bin" || exit 1
    echo "$r $result_line" >>"$results"
    read -r _ cpu bytes per_gb rps hwm recs <<<"$result_line"
    awk -v r="$r" -v n="$name" -v c="$cpu" -v b="$bytes" -v g="$per_gb" -v q="$rps" -v h="$hwm" -v k="$recs" \
      'BEGIN { printf "round %d %-3s  cpu %6.2f s  for %.3f GB (%d records)  %6.3f s/GB  %9.0f records/s  RSS %6.1f MiB\n",
               r, n, c, b / 1e9, k, g, q, h / 1024 }'
  done
done

# Summary: medians over the rounds, per build, and the ratio of the medians.
summary=$(awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { n = $2; k = ++cnt[n]; g[n, k] = $5; q[n, k] = $6; if ($7 > h[n]) h[n] = $7 }
  END {
    for (bi = 1; bi <= 2; bi++) {
      n = bi == 1 ? "old" : "new"; c = cnt[n]
      lo = hi = g[n, 1]
      for (k = 1; k <= c; k++) { x[k] = g[n, k]; y[k] = q[n, k]; if (x[k] < lo) lo = x[k]; if (x[k] > hi) hi = x[k] }
      m[n] = median(x, c); mq[n] = median(y, c)
      printf "%-3s  median %.3f CPU s/GB (min-max %.3f-%.3f over %d runs)  median %.0f records/s  peak RSS %.1f MiB\n",
             n, m[n], lo, hi, c, mq[n], h[n] / 1024
    }
    printf "new/old  %.3f CPU s/GB (medians)  %.3f records/s (medians)\n", m["new"] / m["old"], mq["new"] / mq["old"]
    printf "RATIO %.6f\n", m["new"] / m["old"]
  }' "$results")
echo "summary:"
grep -v '^RATIO' <<<"$summary"
ratio=$(awk '/^RATIO/ { print $2 }' <<<"$summary")
if [[ -n $max_ratio ]] && awk -v r="$ratio" -v m="$max_ratio" 'BEGIN { exit !(r > m) }'; then
  echo "new/old $ratio exceeds --max-ratio $max_ratio" >&2
  exit 2
fi
exit 0
