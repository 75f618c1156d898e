#!/usr/bin/env bash
# The pre-registered replication's runs (PLAN.md), from a worktree of the plan's commit:
#
#   git worktree add ../prereg <plan commit> && cd ../prereg
#   VENV=/path/to/pelt/.venv benchmarks/preregistered/run.sh [SEED ...]    # default: 48 to 57
#
# The worktree's own src/ is put first on the path, so that later changes to the checkout the venv
# was installed from cannot touch the runs (checked before anything runs). Per seed: the demo model
# trained anew with that seed, its tables, LAMA and fine-tuning at the paper's markers
# (runs/prereg<seed>-markers), then the fine-tuning again at `both` over the same model, tables and
# L (runs/prereg<seed>-both). The corpus, linking, task entities and samples do not depend on the
# model: they are made once (runs/prereg-base) and linked into each run.
set -euo pipefail

root=$(git rev-parse --show-toplevel)
cd "$root"
venv=${VENV:-$root/.venv}
export PYTHONPATH="$root/src"
export PATH="$venv/bin:$PATH"
plan=benchmarks/preregistered
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(48 49 50 51 52 53 54 55 56 57)

where=$(python -c 'import pelt; print(pelt.__file__)')
case "$where" in
"$root/src/"*) ;;
*)
	echo "pelt is imported from $where, not from this worktree's src/" >&2
	exit 1
	;;
esac

snake() { snakemake --cores "${CORES:-2}" --rerun-triggers mtime --configfile config/config.yaml "$@"; }

echo "$(date -u +%FT%TZ) base: corpus, linking, task entities and samples at $(git rev-parse --short HEAD)"
snake --config run=prereg-base -- runs/prereg-base/results/samples/{wikipedia,biomed}/counts.json \
	>runs.base.log 2>&1 || {
	echo "base run failed: runs.base.log" >&2
	exit 1
}

for seed in "${seeds[@]}"; do
	for readout in markers both; do
		name=prereg$seed-$readout
		dir=runs/$name
		mkdir -p "$dir/results/eval"
		for stage in corpus linking task_entities samples; do
			ln -sfn "$root/runs/prereg-base/results/$stage" "$dir/results/$stage"
		done
		if [ "$readout" = both ]; then # the markers run's model, tables and LAMA (with its sweep's L)
			ln -sfn "$root/runs/prereg$seed-markers/results/models" "$dir/results/models"
			ln -sfn "$root/runs/prereg$seed-markers/results/tables" "$dir/results/tables"
			ln -sfn "$root/runs/prereg$seed-markers/results/eval/lama" "$dir/results/eval/lama"
		fi
		printf 'run: %s\ndemo_model: {seed: %s}\n' "$name" "$seed" >"$dir/overlay.yaml"
		echo "$(date -u +%FT%TZ) seed $seed, $readout: started"
		if snake "$plan/$readout.yaml" "$dir/overlay.yaml" -- "$dir"/results/eval/summary/{lama,fewrel,wiki80}.csv \
			>"$dir/driver.log" 2>&1; then
			echo "$(date -u +%FT%TZ) seed $seed, $readout: done"
		else
			echo "$(date -u +%FT%TZ) seed $seed, $readout: FAILED ($dir/driver.log)"
		fi
	done
done
