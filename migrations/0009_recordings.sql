ALTER TABLE `calling_policies` ADD `record_calls` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `recording_key` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `recording_rate` integer;