ALTER TABLE `workflow_runs` ADD `gathered_context` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `disposition` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `usage` text;