-- Nothing looks a run up by its carrier call id: the index only cost writes (see bench/dispatch/README.md).
DROP INDEX `workflow_runs_provider_call_idx`;
