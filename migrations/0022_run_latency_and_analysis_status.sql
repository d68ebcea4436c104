ALTER TABLE `workflow_runs` ADD `latency` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `analysis_status` text;