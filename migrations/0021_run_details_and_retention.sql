ALTER TABLE `calling_policies` ADD `retention` text;--> statement-breakpoint
ALTER TABLE `calling_policies` ADD `redact_pii` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `details_key` text;--> statement-breakpoint
CREATE INDEX `workflow_runs_org_phone_idx` ON `workflow_runs` (`org_id`,`phone_number`);