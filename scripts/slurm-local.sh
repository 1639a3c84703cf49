#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine, for testing `stsbench reproduce --executor slurm` (issue 25).
#
#   scripts/slurm-local.sh start    install slurm-wlm and munge if absent (apt), then start munged, slurmctld and
#                                   slurmd; prints `export SLURM_CONF=...` (eval "$(scripts/slurm-local.sh start)")
#   scripts/slurm-local.sh stop     cancel its jobs, stop the daemons it started (by their recorded PIDs) and
#                                   remove its folder
#   scripts/slurm-local.sh status   the daemons' PIDs and sinfo; exit 1 when it is not running
#   scripts/slurm-local.sh env      the export line for the clients (sinfo, sbatch, submitit)
#
# Everything lives under one folder, $SLURM_LOCAL_DIR (default /tmp/stsbench-slurm): slurm.conf, the munge key
# and socket, the state and spool folders, the logs and the PID files. Nothing is written to /etc: the clients
# find the cluster through SLURM_CONF, the daemons through their own options. Needs root (slurmd starts jobs as
# their users; SlurmUser=root) and, where Slurm is not installed, apt.
set -euo pipefail

DIR="${SLURM_LOCAL_DIR:-/tmp/stsbench-slurm}"
CONF="$DIR/slurm.conf"
MUNGE="$DIR/munge"
MARK="$DIR/.stsbench-slurm-local"  # only a folder holding this is ever removed by stop
DAEMONS=(munged slurmctld slurmd)

die() { echo "slurm-local: $*" >&2; exit 1; }
say() { echo "slurm-local: $*" >&2; }
pidfile() { case "$1" in munged) echo "$MUNGE/munged.pid" ;; *) echo "$DIR/$1.pid" ;; esac; }
# a recorded PID counts only while it is still that daemon (a PID reused by another process is left alone)
alive() { local f; f="$(pidfile "$1")"; [ -s "$f" ] && [ "$(ps -o comm= -p "$(cat "$f")" 2>/dev/null)" = "$1" ]; }
running() { local d; for d in "${DAEMONS[@]}"; do alive "$d" && return 0; done; return 1; }

install() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
    && command -v sbatch >/dev/null && return 0
  command -v apt-get >/dev/null || die "Slurm is not installed and there is no apt-get to install it (slurm-wlm, munge)"
  say "installing slurm-wlm and munge (apt-get)"
  local log; log="$(mktemp)"
  if ! { apt-get install -y -q slurm-wlm munge >"$log" 2>&1 \
      || { apt-get update -q >>"$log" 2>&1 && apt-get install -y -q slurm-wlm munge >>"$log" 2>&1; }; }; then
    die "apt-get install slurm-wlm munge failed: $(grep -m1 -E '^E:' "$log" || tail -n1 "$log")"
  fi
  rm -f "$log"
}

write_conf() {
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"  # nproc follows OMP_NUM_THREADS otherwise
  mem="$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)"  # MiB, as slurmd measures it
  cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh: a one-node test cluster.
ClusterName=stsbench-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${SLURM_LOCAL_PORT:-6817}
SlurmdPort=$(( ${SLURM_LOCAL_PORT:-6817} + 1 ))
AuthType=auth/munge
CredType=cred/munge
# cred_expire: how long a requeued job waits before it may start again (default 120 s): seconds here
AuthInfo=socket=$MUNGE/munge.socket.2,cred_expire=${SLURM_LOCAL_CRED_EXPIRE:-5}
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
# Scheduling passes every second (not every 30-60 s): a requeued job starts again as soon as it may.
SchedulerParameters=sched_interval=1,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
# A job's processes that ignore SIGTERM (submitit's bypass) get SIGKILL 5 s after it, not 30.
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  [ "$(id -u)" = 0 ] || die "needs root (slurmd runs jobs as their users); run it as root or skip the Slurm tests"
  if running; then
    alive slurmctld && alive slurmd && alive munged || die "partly running in $DIR; run '$0 stop' first"
    say "already running in $DIR"
    echo "export SLURM_CONF=$CONF"
    return 0
  fi
  install
  if [ -e "$DIR" ] && [ ! -e "$MARK" ]; then
    die "$DIR exists and was not made by this script; set SLURM_LOCAL_DIR to another folder"
  fi
  rm -rf "$DIR"
  mkdir -p "$DIR"/{state,spool,log} "$MUNGE"
  touch "$MARK"
  chmod 755 "$DIR"
  # munged runs as the munge user and refuses a key or socket folder that others can write or cannot enter.
  chown munge:munge "$MUNGE"
  chmod 711 "$MUNGE"
  if ! runuser -u munge -- test -x "$MUNGE"; then
    rm -rf "$DIR"
    die "the munge user cannot reach $MUNGE (a parent folder is private); set SLURM_LOCAL_DIR to a folder under /tmp"
  fi
  runuser -u munge -- mungekey --create --keyfile="$MUNGE/munge.key" >/dev/null 2>&1 \
    || runuser -u munge -- sh -c "dd if=/dev/urandom bs=1 count=1024 of='$MUNGE/munge.key' 2>/dev/null" \
    || fail_start "could not write a munge key in $MUNGE"
  chmod 400 "$MUNGE/munge.key"
  write_conf
  export SLURM_CONF="$CONF"
  runuser -u munge -- munged --key-file="$MUNGE/munge.key" --socket="$MUNGE/munge.socket.2" \
    --pid-file="$MUNGE/munged.pid" --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed" \
    || fail_start "munged did not start"
  slurmctld -c -f "$CONF" || fail_start "slurmctld did not start"
  slurmd -f "$CONF" || fail_start "slurmd did not start"
  local i
  for i in $(seq 1 60); do
    if [ "$(sinfo -h -N -o %t 2>/dev/null)" = "idle" ]; then
      say "running in $DIR: node $(hostname -s), $(sinfo -h -N -o %c) CPUs, partition local"
      echo "export SLURM_CONF=$CONF"
      return 0
    fi
    sleep 0.5
  done
  fail_start "the node did not become idle in 30 s (sinfo: $(sinfo -h -N -o '%t %E' 2>&1 | head -n1))"
}

fail_start() {
  local log
  log="$(tail -n 3 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" "$MUNGE/munged.log" 2>/dev/null | grep -iE 'error|fatal' | tail -n1 || true)"
  stop >/dev/null 2>&1 || true
  die "$1${log:+ ($log)}"
}

terminate() {  # SIGTERM to each daemon named that is still ours, then SIGKILL to any left after 10 s
  local d pids=() i
  for d in "$@"; do
    alive "$d" || continue
    pids+=("$(cat "$(pidfile "$d")")")
    kill -TERM "${pids[-1]}" 2>/dev/null || true
    say "stopping $d (pid ${pids[-1]})"
  done
  for i in $(seq 1 100); do
    kill -0 "${pids[@]}" 2>/dev/null || break
    sleep 0.1
  done
  for d in "$@"; do  # still there, and still that daemon (not a reused PID)
    if alive "$d"; then kill -KILL "$(cat "$(pidfile "$d")")" 2>/dev/null || true; fi
  done
}

stop() {
  [ -e "$MARK" ] || { say "not running (no $DIR)"; return 0; }
  if alive slurmctld; then  # its jobs first: slurmstepd and the job processes are not slurmd's PIDs
    local jobs i
    jobs="$(SLURM_CONF="$CONF" squeue -h -o %A 2>/dev/null || true)"
    # shellcheck disable=SC2086  # one argument per job id
    [ -n "$jobs" ] && SLURM_CONF="$CONF" scancel $jobs 2>/dev/null || true
    for i in $(seq 1 40); do
      [ -z "$(SLURM_CONF="$CONF" squeue -h -t R,CG,S -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  # slurmd and slurmctld together (each takes a second or two to end), then munged, which they use
  terminate slurmd slurmctld
  terminate munged
  rm -rf "$DIR"
}

status() {
  local d ok=0
  for d in munged slurmctld slurmd; do
    if alive "$d"; then echo "$d: pid $(cat "$(pidfile "$d")")"; else echo "$d: not running"; ok=1; fi
  done
  [ "$ok" = 0 ] && SLURM_CONF="$CONF" sinfo
  return "$ok"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 start|stop|status|env   (folder: \$SLURM_LOCAL_DIR, default /tmp/stsbench-slurm)" >&2; exit 2 ;;
esac
