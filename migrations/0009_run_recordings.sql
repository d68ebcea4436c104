ALTER TABLE `workflow_runs` ADD `recording_key` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `recording_rate` integer;