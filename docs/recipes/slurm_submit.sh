#!/bin/bash
# Submits a job's reduce as a Slurm array and the join after it.
#
# usage: slurm_submit.sh TRACES OUT [PER_TASK] [-- COMMAND ARGS...]
#   TRACES    the folder of the job's traces (one per rank)
#   OUT       the folder for the .ddg files and the join's output
#   PER_TASK  ranks per array task (default 1)
#   COMMAND   what the join runs (default: replay --format json)
# Prints the two Slurm job ids. Extra sbatch options (partition, account)
# go in SBATCH_* environment variables, which sbatch reads.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
traces=${1:?usage: slurm_submit.sh TRACES OUT [PER_TASK] [-- COMMAND ARGS...]}
out=${2:?usage: slurm_submit.sh TRACES OUT [PER_TASK] [-- COMMAND ARGS...]}
shift 2
per=1
if [ $# -gt 0 ] && [ "$1" != "--" ]; then per=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
mkdir -p "$out"
find "$traces" -maxdepth 1 -type f \
  \( -name '*.json' -o -name '*.json.gz' -o -name '*.cupti' \) | sort \
  > "$out/traces.txt"
ranks=$(wc -l < "$out/traces.txt")
if [ "$ranks" -eq 0 ]; then
  echo "slurm_submit.sh: $traces holds no traces" >&2
  exit 2
fi
tasks=$(((ranks + per - 1) / per))
array=$(sbatch --parsable --array=0-$((tasks - 1)) \
  "$here/slurm_reduce.sbatch" "$out/traces.txt" "$out" "$per")
join=$(sbatch --parsable --dependency=afterok:"${array%%;*}" \
  "$here/slurm_join.sbatch" "$out" "$@")
echo "reduce: job ${array%%;*} ($tasks tasks for $ranks ranks); join: job ${join%%;*} (writes $out/join.out)"
