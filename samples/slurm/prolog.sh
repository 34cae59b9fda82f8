#!/bin/bash
# archfit's Slurm prolog: before a job starts on a GPU node, check that the
# Python environment it names runs on this node's GPUs and driver. When it
# does not, the *job* is held (requeued in held state; cancelled when it
# cannot be requeued) with archfit's one-line answer in its AdminComment —
# what fails and the command that fixes it — and the node stays up for
# everyone else's jobs. Only a fault of the node itself (no GPU or driver
# where one is expected) drains the node. docs/fleet.md has the recipe.
#
#   slurm.conf:  Prolog=/etc/slurm/prolog.d/archfit.sh
#                PrologFlags=Alloc        (check at allocation, before any step)
#   a job:       sbatch --comment "archfit=/shared/envs/comfyui" job.sh
#                sbatch --comment 'archfit="/shared/envs/my env"' job.sh
#
# Every setting comes from one file, /etc/archfit/slurm-prolog.conf (bash,
# owned by root and writable by no one else; samples/slurm/slurm-prolog.conf
# documents each). Slurm gives a prolog no environment of slurmd's, so
# nothing else is read; ARCHFIT_PROLOG_CONFIG names another file (tests).
#
# Exit 0: the job may start, or it was held or cancelled as a job. Exit 1:
# only a node fault (the node is drained with the reason; Slurm requeues
# the job). A job never decides what root scans or runs: what it names must
# lie under a folder the config allows, is only ever a path, and is read
# with the job's user's rights.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

config=${ARCHFIT_PROLOG_CONFIG:-/etc/archfit/slurm-prolog.conf}
node=${SLURMD_NODENAME:-$(hostname -s)}
job=${SLURM_JOB_ID:-}

say() {
  echo "archfit prolog (job ${job:-?} on $node): $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t archfit-prolog -- "job ${job:-?}: $*"
  return 0
}

# A path root may run or read settings from: it and every folder above it
# owned by root (or whoever runs this) and writable by no one else; a
# folder with the sticky bit (/tmp) passes, as in archfit's own rule.
trusted() {
  local path owner mode name
  local -a chain=()
  path=$(realpath -e -- "$1" 2>/dev/null) || return 1
  while :; do
    chain+=("$path")
    [ "$path" = / ] && break
    path=${path%/*}
    [ -n "$path" ] || path=/
  done
  # One stat for the whole chain: a prolog runs before every job.
  while read -r owner mode name; do
    [ "$owner" = 0 ] || [ "$owner" = "$EUID" ] || return 1
    if [ -d "$name" ] && [ $((8#$mode & 01000)) -ne 0 ]; then
      :  # sticky: no one replaces another's entry
    elif [ $((8#$mode & 022)) -ne 0 ]; then
      return 1
    fi
  done < <(stat -L -c '%u %a %n' -- "${chain[@]}" 2>/dev/null || echo "x 0 missing")
  return 0
}

# The settings, with their defaults; the config overrides them.
ARCHFIT=archfit
SCONTROL=scontrol
SCANCEL=scancel
ARCHFIT_ALLOWED_ROOTS=()
ARCHFIT_DEFAULT_ENV=""
ARCHFIT_CHECK_ARGS=()
ARCHFIT_TIMEOUT=60
if [ -e "$config" ]; then
  if ! trusted "$config"; then
    say "not reading $config: it or a folder above it can be written by someone other than root; nothing checked"
    exit 0
  fi
  # shellcheck source=/dev/null
  . "$config"
fi
# scontrol and scancel, found and judged when first needed (a job that
# fits needs neither).
slurm_tools_checked=""
check_slurm_tools() {
  [ -z "$slurm_tools_checked" ] || return 0
  local tool found
  for tool in SCONTROL SCANCEL; do
    if ! found=$(command -v -- "${!tool}") || ! trusted "$found"; then
      say "not running ${!tool} (from $tool): not found, or someone other than root can replace it; nothing done"
      exit 0
    fi
    printf -v "$tool" '%s' "$found"
  done
  slurm_tools_checked=yes
}
case $ARCHFIT_TIMEOUT in
  '' | *[!0-9]* | 0)
    say "ARCHFIT_TIMEOUT=$ARCHFIT_TIMEOUT in $config is not a whole number of seconds above 0; using 60"
    ARCHFIT_TIMEOUT=60
    ;;
esac

# The job's comment: Slurm gives it to the prolog (SLURM_JOB_COMMENT);
# older releases only through scontrol.
comment=${SLURM_JOB_COMMENT:-}
if [ -z "$comment" ] && [ -n "$job" ]; then
  check_slurm_tools
  comment=$("$SCONTROL" show job "$job" 2>/dev/null | sed -n 's/^.*[[:space:]]Comment=//p' | head -n 1)
fi

# The job is held, as a job, with the reason in its own record.
hold_job() {
  local reason="archfit: $1"
  reason=${reason//$'\n'/ }
  reason=${reason:0:1000}
  say "$reason; holding the job"
  [ -n "$job" ] || exit 0
  check_slurm_tools
  # A task of a job array: its JobId may be the array's own, which scontrol
  # and scancel take for every task; the task is named ARRAY_TASK instead
  # (Slurm 22.05 gives a prolog no SLURM_ARRAY_* variables).
  local this=$job record array_job array_task
  record=$("$SCONTROL" -o show job "$job" 2>/dev/null | grep -E "^JobId=$job( |\$)" | head -n 1)
  array_job=$(sed -n 's/.* ArrayJobId=\([0-9]*\).*/\1/p' <<<"$record")
  array_task=$(sed -n 's/.* ArrayTaskId=\([0-9]*\).*/\1/p' <<<"$record")
  [ -n "$array_job" ] && [ -n "$array_task" ] && this=${array_job}_$array_task
  "$SCONTROL" update JobId="$this" AdminComment="$reason" >/dev/null 2>&1 ||
    say "scontrol could not set the job's AdminComment"
  # A job that cannot be requeued (--no-requeue, an interactive srun) is
  # cancelled instead: it must not start.
  if ! "$SCONTROL" requeuehold "$this" >/dev/null 2>&1; then
    "$SCANCEL" "$this" >/dev/null 2>&1 || say "neither requeuehold nor scancel took the job"
  fi
  exit 0
}

# archfit=PATH or archfit="PATH WITH SPACES", once.
words=()
rest=$comment
pattern='(^|[[:space:]])archfit=("[^"]*"|[^[:space:]"]*)(.*)$'
while [[ $rest =~ $pattern ]]; do
  words+=("${BASH_REMATCH[2]}")
  rest=${BASH_REMATCH[3]}
done
if [ "${#words[@]}" -gt 1 ]; then
  hold_job "the job's comment names ${#words[@]} environments (archfit= ${#words[@]} times); name one"
fi
environment=${words[0]:-}
environment=${environment#\"}
environment=${environment%\"}
if [ -z "$environment" ]; then
  environment=$ARCHFIT_DEFAULT_ENV
  [ -n "$environment" ] || exit 0  # nothing named: nothing to check
else
  # Only a path under a folder the administrator allows: never an option,
  # never root's whole machine.
  if [ "${environment:0:1}" != / ]; then
    hold_job "$environment is not an absolute path; name the environment as archfit=/path"
  fi
  if [ ! -e "$environment" ]; then
    say "the job names $environment, which is not on this node; not checked"
    exit 0
  fi
  real=$(realpath -e -- "$environment") || hold_job "$environment cannot be resolved on $node"
  allowed=""
  for root in "${ARCHFIT_ALLOWED_ROOTS[@]}"; do
    root_real=$(realpath -e -- "$root" 2>/dev/null) || continue
    case $real/ in "${root_real%/}"/*) allowed=$root_real ;; esac
  done
  if [ -z "$allowed" ]; then
    hold_job "$environment is not under a folder this cluster checks (${ARCHFIT_ALLOWED_ROOTS[*]:-none is set}); ask your administrator"
  fi
  environment=$real
fi

# What archfit is given: the kind of folder decides the option.
if [ -f "$environment/pyvenv.cfg" ]; then
  target=(--venv "$environment")
elif [ -f "$environment/main.py" ] && [ -d "$environment/custom_nodes" ]; then
  target=(--comfyui "$environment")
elif [ -d "$environment" ] && case $environment in */site-packages | */dist-packages) true ;; *) false ;; esac; then
  target=(--site-packages "$environment")
else
  target=(-- "$environment")
fi

archfit_path=$(command -v -- "$ARCHFIT") || { say "no archfit command ($ARCHFIT); nothing checked"; exit 0; }
if ! trusted "$archfit_path"; then
  say "not running $archfit_path: someone other than root can replace it; nothing checked"
  exit 0
fi

# The check reads with the job's user's rights, not root's: nothing the
# job could not read itself is read, or named in a reason.
as_job_user=()
if [ "$EUID" = 0 ] && [ -n "${SLURM_JOB_UID:-}" ] && [ "$SLURM_JOB_UID" != 0 ]; then
  if command -v setpriv >/dev/null 2>&1; then
    # Its groups too (a shared environment is often group-readable), when
    # the node knows the user.
    groups=--clear-groups
    getent passwd "$SLURM_JOB_UID" >/dev/null 2>&1 && groups=--init-groups
    as_job_user=(setpriv --reuid="$SLURM_JOB_UID" --regid="${SLURM_JOB_GID:-$SLURM_JOB_UID}" "$groups")
  else
    say "no setpriv (util-linux) to check as the job's user; nothing checked"
    exit 0
  fi
fi

errors=$(mktemp) || exit 0
output=$(timeout -k 5 "$ARCHFIT_TIMEOUT" "${as_job_user[@]}" "$archfit_path" check --no-progress \
  "${ARCHFIT_CHECK_ARGS[@]}" "${target[@]}" 2>"$errors")
status=$?
# The last line is the answer: "fails: … run: …", "unknown: …"; when archfit
# could not run at all, its own message is on stderr.
last_line() {
  local line last=""
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%$'\r'}
    [[ $line =~ ^[[:space:]]*$ ]] || last=$line
  done
  printf '%s' "$last"
}
answer=$(last_line <<<"$output")
[ -n "$answer" ] || answer=$(last_line <"$errors")
rm -f "$errors"

case $status in
  0)
    exit 0
    ;;
  1)
    hold_job "$environment: $answer"
    ;;
  124 | 137)
    say "archfit did not finish checking $environment within $ARCHFIT_TIMEOUT s; the job starts unchecked"
    exit 0
    ;;
  *)
    # No GPU or driver where the config asks archfit to find them: the
    # node's fault, not the job's.
    case $answer in
      "unknown: no GPU to judge against"*)
        reason="archfit: $answer"
        reason=${reason:0:1000}
        say "$reason; draining $node"
        check_slurm_tools
        "$SCONTROL" update NodeName="$node" State=DRAIN Reason="$reason" >/dev/null 2>&1 ||
          say "scontrol could not drain $node"
        exit 1
        ;;
    esac
    say "archfit could not judge $environment (exit $status): ${answer:-no message}; the job starts unchecked"
    exit 0
    ;;
esac
