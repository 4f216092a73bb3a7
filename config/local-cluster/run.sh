#!/usr/bin/env bash
# Starts or stops a three-node brokerd cluster on this machine (node1.yaml, node2.yaml and
# node3.yaml beside this script: zones a, b and c, clients on 127.0.0.1:19092, 29092, 39092).
#
#   config/local-cluster/run.sh [start]   start the nodes not running, wait until all three serve
#   config/local-cluster/run.sh stop      SIGTERM each node, wait until it has exited
#   config/local-cluster/run.sh status    show which nodes run, and the quorum
#
# BROKERD names the brokerd binary (default: build/src/app/brokerd of this repository),
# BROKERCTL the brokerctl binary (default: build/src/brokerctl/brokerctl beside it).
# START_TIMEOUT and STOP_TIMEOUT bound the waits, in seconds (60 and 30).
#
# The nodes run in the repository root, so their data is in data/local-cluster/nodeN; each
# node's pid and output are data/local-cluster/nodeN.pid and nodeN.log. To start again
# from nothing: stop, then rm -r data/local-cluster.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

# Relative binary paths are taken from the caller's directory, before the cd below.
absolute() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }
brokerd=$(absolute "${BROKERD:-$root/build/src/app/brokerd}")
brokerctl=$(absolute "${BROKERCTL:-$(dirname "$(dirname "$brokerd")")/brokerctl/brokerctl}")
start_timeout=${START_TIMEOUT:-60}
stop_timeout=${STOP_TIMEOUT:-30}

cd "$root"  # log.dirs in the node files are relative to the repository root
data=$root/data/local-cluster
nodes=(1 2 3)

client_port() { echo "${1}9092"; }
controller_port() { echo "${1}9093"; }
pid_file() { echo "$data/node$1.pid"; }
log_file() { echo "$data/node$1.log"; }

# True when process $2 runs with node $1's config (a pid reused by another process, or one
# that has exited and not been reaped yet, has another or an empty command line).
is_node() { { tr '\0' ' ' <"/proc/$2/cmdline"; } 2>/dev/null | grep -q -- "local-cluster/node$1.yaml"; }

# The pid of node $1 when it runs.
running_pid() {
  local f pid
  f=$(pid_file "$1")
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] && is_node "$1" "$pid" || return 1
  echo "$pid"
}

port_answers() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# True when node $1 serves clients: its log says so since its last start, and its port answers.
serving() {
  awk '/^----- /{s=0} / serving on /{s=1} END{exit !s}' "$(log_file "$1")" 2>/dev/null &&
    port_answers "$(client_port "$1")"
}

# The quorum as the first node that answers describes it (brokerctl follows a follower's
# answer to the leader).
quorum() {
  [[ -x $brokerctl ]] || return 0
  local n
  for n in "${nodes[@]}"; do
    "$brokerctl" cluster quorum --bootstrap-controller "127.0.0.1:$(controller_port "$n")" --timeout-ms 2000 \
      2>/dev/null && return 0
  done
  echo "quorum: no controller listener describes it (none answers, or there is no leader)"
}

start() {
  if [[ ! -x $brokerd ]]; then
    echo "run.sh: no brokerd binary at $brokerd (build it, or set BROKERD)" >&2
    exit 1
  fi
  local n pid started=()
  mkdir -p "$data"
  for n in "${nodes[@]}"; do
    if pid=$(running_pid "$n"); then
      echo "node $n already runs (pid $pid)"
      continue
    fi
    echo "----- $(date '+%F %T') $brokerd --config $here/node$n.yaml" >>"$(log_file "$n")"
    nohup "$brokerd" --config "$here/node$n.yaml" >>"$(log_file "$n")" 2>&1 </dev/null &
    echo $! >"$(pid_file "$n")"
    started+=("$n")
  done

  # A node opens its client port only once the quorum has a leader, it has replayed the
  # metadata log and the controller has unfenced it.
  local deadline=$((SECONDS + start_timeout)) waiting
  while :; do
    waiting=()
    for n in "${nodes[@]}"; do
      if ! running_pid "$n" >/dev/null; then
        echo "run.sh: node $n exited during start; the end of $(log_file "$n"):" >&2
        tail -n 20 "$(log_file "$n")" >&2
        ((${#started[@]} == 0)) || stop "${started[@]}"
        exit 1
      fi
      serving "$n" || waiting+=("$n")
    done
    ((${#waiting[@]} == 0)) && break
    if ((SECONDS >= deadline)); then
      echo "run.sh: node(s) ${waiting[*]} not serving after ${start_timeout} s; see $data/node*.log" >&2
      ((${#started[@]} == 0)) || stop "${started[@]}"
      exit 1
    fi
    sleep 0.2
  done

  echo "Three nodes serve:"
  for n in "${nodes[@]}"; do
    echo "  node $n  pid $(running_pid "$n")  clients 127.0.0.1:$(client_port "$n")" \
      " controller 127.0.0.1:$(controller_port "$n")  metrics http://127.0.0.1:${n}9644/metrics"
  done
  echo "Data, logs and pids: $data"
  echo
  quorum
  echo
  echo "Bootstrap servers: 127.0.0.1:19092,127.0.0.1:29092,127.0.0.1:39092"
  echo "  $brokerctl --bootstrap-server 127.0.0.1:19092 cluster describe"
  echo "  $brokerctl cluster quorum --bootstrap-controller 127.0.0.1:19093"
  echo "Stop: $0 stop"
}

# Stops the nodes named (default: all), each by the pid it was started with.
stop() {
  local n pid pids=() targets=("$@")
  ((${#targets[@]})) || targets=("${nodes[@]}")
  for n in "${targets[@]}"; do
    if pid=$(running_pid "$n"); then
      kill -TERM "$pid"
      pids+=("$n:$pid")
    else
      rm -f "$(pid_file "$n")"
    fi
  done
  local deadline=$((SECONDS + stop_timeout)) left entry
  while :; do
    left=()
    for entry in ${pids[@]+"${pids[@]}"}; do
      if is_node "${entry%%:*}" "${entry#*:}"; then
        left+=("$entry")
      else
        rm -f "$(pid_file "${entry%%:*}")"
        echo "node ${entry%%:*} stopped (pid ${entry#*:})"
      fi
    done
    ((${#left[@]} == 0)) && return 0
    if ((SECONDS >= deadline)); then
      echo "run.sh: still running ${stop_timeout} s after SIGTERM (node:pid): ${left[*]}" >&2
      return 1
    fi
    pids=("${left[@]}")
    sleep 0.2
  done
}

status() {
  local n pid
  for n in "${nodes[@]}"; do
    if pid=$(running_pid "$n"); then
      if serving "$n"; then
        echo "node $n  pid $pid  serving on 127.0.0.1:$(client_port "$n")"
      else
        echo "node $n  pid $pid  not serving clients yet"
      fi
    else
      echo "node $n  not running"
    fi
  done
  echo
  quorum
}

case ${1:-start} in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 [start|stop|status]" >&2
    exit 2
    ;;
esac
