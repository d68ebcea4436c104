CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`api_key_id` integer,
	`action` text NOT NULL,
	`resource_type` text NOT NULL,
	`resource_id` integer,
	`summary` text DEFAULT '{}' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_org_idx` ON `audit_log` (`org_id`,`id`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_at` text;--> statement-breakpoint
ALTER TABLE `campaigns` ADD `created_by_key_id` integer;--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `created_by_key_id` integer;