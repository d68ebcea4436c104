-- Why each run ended: the call session's reason (agent_hangup, callee_silent, media_lost, ...) or one read from the
-- carrier's final status (busy, no_answer, ...).
ALTER TABLE `workflow_runs` ADD `end_reason` text;