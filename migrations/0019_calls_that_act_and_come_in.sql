ALTER TABLE `phone_numbers` ADD `inbound_workflow_id` integer REFERENCES workflows(id);--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `direction` text DEFAULT 'outbound' NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `transfer` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `analysis` text;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `tool_calls` text;