#!/usr/bin/env bash
# A Slurm job array that runs one spec sharded, one shard per array task, and
# a dependent job that merges the shards into one run (byte-identical to the
# unsharded run). No cluster manager of our own: Slurm does the scheduling.
#
#   scripts/slurm-array.sh SPEC.toml [SHARDS] [PROFILE]
#
# Environment (all optional):
#   OUT           final run folder              (default results/runs)
#   SHARD_DIR     where the shards write        (default results/shards/<spec id>)
#   DPREPRO_DATA  data folder, on shared storage (the binary's search order
#                 applies: without it, the per-user folder, and stand-ins for
#                 missing files)
#   SBATCH_ARGS   extra sbatch arguments, e.g. "--partition=cpu --time=02:00:00"
#   CPUS          cores per shard (default 2); each shard runs that many workers
#
# The binary is built once here, on the login node, into bin/; the folder
# must be on storage the compute nodes see. Every array task runs
#   dprepro run SPEC --profile PROFILE --shard auto --workers CPUS --out SHARD_DIR/<task>
# and picks its shard index and count from SLURM_ARRAY_TASK_ID/_MIN/_COUNT
# (--shard auto: the binary reads them only when asked to).
# The merge job runs once every task has ended (afterany), and refuses to
# write a result if a shard is missing or unfinished. Not afterok: Slurm
# keeps an array's worst exit code, so once a task has failed or been
# cancelled, afterok on the array can never be met, even after that task
# was requeued and finished.
#
# A task that dies (scancel, time limit, node failure, pre-emption) leaves
# a checkpoint of its finished units and resumes from it when requeued
# (both jobs are submitted with --requeue, which sites with JobRequeue=0
# require for that):
#   scontrol requeue ARRAY_i
# Requeued while other tasks still run, the merge waits for it. Requeued
# after the array has ended, the merge has already run and refused (its
# log names the unfinished shard): when the task has finished, requeue the
# merge job too (scontrol requeue MERGE). Slurm delays a requeued job's
# start (its BeginTime); `scontrol update JobId=ID StartTime=now` lifts it.
# (Tested on a real single-node Slurm: cli TestSlurmArrayScript_RealScheduler.)
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${1:?usage: scripts/slurm-array.sh SPEC.toml [SHARDS] [PROFILE]}"
shards="${2:-10}"
profile="${3:-paper}"
cpus="${CPUS:-2}"
[ -f "$spec" ] || { echo "slurm-array.sh: spec $spec: no such file" >&2; exit 2; }
case "$shards" in ''|*[!0-9]*|0) echo "slurm-array.sh: SHARDS must be a positive integer (got $shards)" >&2; exit 2;; esac
command -v sbatch >/dev/null || { echo "slurm-array.sh: sbatch not found (is this a Slurm login node?)" >&2; exit 2; }
id="$(basename "$spec" .toml)"
out="${OUT:-results/runs}"
shard_dir="${SHARD_DIR:-results/shards/$id}"
mkdir -p bin "$shard_dir" "$out"
go build -buildvcs=true -o bin/dprepro ./cmd/dprepro

dirs=""
for ((i = 0; i < shards; i++)); do dirs="${dirs:+$dirs,}$shard_dir/$i"; done

# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} \
  --job-name="dprepro-$id" --array="0-$((shards - 1))" --cpus-per-task="$cpus" --requeue \
  --output="$shard_dir/slurm-%A_%a.log" --export=ALL \
  --wrap "bin/dprepro run '$spec' --profile '$profile' --shard auto --workers $cpus --heartbeat 60s --out '$shard_dir'/\$SLURM_ARRAY_TASK_ID")
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} \
  --job-name="dprepro-$id-merge" --dependency="afterany:$array" --cpus-per-task="$cpus" --requeue \
  --output="$shard_dir/slurm-merge-%j.log" --export=ALL \
  --wrap "bin/dprepro merge '$spec' --profile '$profile' --workers $cpus --shards '$dirs' --out '$out'")
# The merge runs the same bin/dprepro as the shards: a checkpoint records the
# program's SHA-256, and shards of another build are refused.
echo "submitted array job $array ($shards shards of $spec at the $profile profile) and merge job $merge"
echo "shards write to $shard_dir/<i>; the merged run goes to $out/<spec id>/$profile-seed<seed>"
echo "a task that dies resumes from its checkpoint when requeued: scontrol requeue ${array}_<i> (then the merge job too, if it has already run and refused)"
