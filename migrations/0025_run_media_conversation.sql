ALTER TABLE `workflow_runs` ADD `media` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `conversation` integer;