#!/bin/bash
# archfit's Slurm prolog: before a job starts on a GPU node, check that the
# Python environment it brings runs on this node's GPUs and driver. When it
# does not, drain the node with archfit's one-line answer as the reason (what
# fails and the command that fixes it) and fail the prolog, so that Slurm
# requeues the job instead of letting it die with "no kernel image is
# available" minutes into its run. docs/fleet.md has the whole recipe.
#
#   slurm.conf:  Prolog=/etc/slurm/prolog.d/archfit.sh
#                PrologFlags=Alloc        (check at allocation, before any step)
#   a job:       sbatch --comment "archfit=/shared/envs/comfyui" job.sh
#
# The job names its environment with archfit=PATH in its comment: a venv, a
# ComfyUI folder, a site-packages directory, or any file or folder to scan.
# Settings, from slurmd's environment or /etc/default/archfit:
#   ARCHFIT              the archfit command (default: archfit on PATH)
#   ARCHFIT_DEFAULT_ENV  what to check when a job names nothing (default: nothing, pass)
#   ARCHFIT_CHECK_ARGS   more `archfit check` arguments, e.g. "--kb /etc/archfit/kb"
#   SCONTROL             the scontrol command (default: scontrol on PATH)
#
# Exit 0: fits, nothing named, or archfit itself could not run (logged; a
# broken check never blocks the cluster). Exit 1: the environment does not
# fit; the node is drained with the reason.
set -u

# shellcheck source=/dev/null
[ -r /etc/default/archfit ] && . /etc/default/archfit
# Prologs run with no search path (Slurm's rule): name one.
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
ARCHFIT=${ARCHFIT:-archfit}
SCONTROL=${SCONTROL:-scontrol}
node=${SLURMD_NODENAME:-$(hostname -s)}
job=${SLURM_JOB_ID:-}

say() {
  echo "archfit prolog (job ${job:-?} on $node): $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t archfit-prolog -- "job ${job:-?}: $*"
  return 0
}

# The job's comment: Slurm gives it to the prolog in newer releases; ask
# scontrol otherwise (the comment runs to the end of its line there, spaces
# and all).
comment=${SLURM_JOB_COMMENT:-}
if [ -z "$comment" ] && [ -n "$job" ]; then
  comment=$("$SCONTROL" show job "$job" 2>/dev/null | sed -n 's/^.*[[:space:]]Comment=//p' | head -n 1)
fi
environment=""
set -f  # the comment's words are words, not patterns
for word in $comment; do
  case $word in archfit=*) environment=${word#archfit=} ;; esac
done
set +f
[ -n "$environment" ] || environment=${ARCHFIT_DEFAULT_ENV:-}
if [ -z "$environment" ]; then
  exit 0  # nothing named: nothing to check
fi

# What archfit is given: the kind of folder decides the option.
if [ -f "$environment/pyvenv.cfg" ]; then
  target=(--venv "$environment")
elif [ -f "$environment/main.py" ] && [ -d "$environment/custom_nodes" ]; then
  target=(--comfyui "$environment")
elif [ -d "$environment" ] && case $environment in */site-packages | */dist-packages) true ;; *) false ;; esac; then
  target=(--site-packages "$environment")
elif [ -e "$environment" ]; then
  target=("$environment")
else
  say "the job names $environment, which is not on this node; not checked"
  exit 0
fi

errors=$(mktemp) || exit 0
# shellcheck disable=SC2086  # ARCHFIT_CHECK_ARGS is words by design
output=$("$ARCHFIT" check --no-progress ${ARCHFIT_CHECK_ARGS:-} "${target[@]}" 2>"$errors")
status=$?
# The last line is the answer: "fails: … run: pip install …"; when archfit
# could not run, its own message is on stderr.
last_line() { sed '/^[[:space:]]*$/d' | tail -n 1 | tr -d '\r'; }
answer=$(printf '%s\n' "$output" | last_line)
[ "$status" -le 1 ] || answer=$(last_line <"$errors")
rm -f "$errors"

case $status in
  0)
    exit 0
    ;;
  1)
    reason="archfit: $environment: $answer"
    say "$reason; draining $node"
    "$SCONTROL" update NodeName="$node" State=DRAIN Reason="${reason:0:1000}" ||
      say "scontrol could not drain $node"
    exit 1
    ;;
  *)
    say "archfit could not check $environment (exit $status): $answer"
    exit 0
    ;;
esac
