ALTER TABLE `workflow_runs` ADD `lease_id` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `greeting_override` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `notes` text;