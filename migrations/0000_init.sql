CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_last4` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_uq` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_org_idx` ON `api_keys` (`org_id`);--> statement-breakpoint
CREATE TABLE `campaigns` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`workflow_id` integer NOT NULL,
	`telephony_configuration_id` integer,
	`state` text DEFAULT 'draft' NOT NULL,
	`source_type` text DEFAULT 'csv' NOT NULL,
	`source_id` text NOT NULL,
	`total_rows` integer DEFAULT 0 NOT NULL,
	`processed_rows` integer DEFAULT 0 NOT NULL,
	`failed_rows` integer DEFAULT 0 NOT NULL,
	`executed_count` integer DEFAULT 0 NOT NULL,
	`total_queued_count` integer DEFAULT 0 NOT NULL,
	`settings` text NOT NULL,
	`parent_campaign_id` integer,
	`redialed_campaign_id` integer,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`completed_at` text,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`telephony_configuration_id`) REFERENCES `telephony_configs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `campaigns_org_idx` ON `campaigns` (`org_id`,`id`);--> statement-breakpoint
CREATE INDEX `campaigns_config_idx` ON `campaigns` (`telephony_configuration_id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`org_id` integer NOT NULL,
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`org_id`, `scope`, `key`)
);
--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `phone_numbers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`config_id` integer NOT NULL,
	`address` text NOT NULL,
	`label` text,
	`is_active` integer DEFAULT true NOT NULL,
	`is_default_caller_id` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`config_id`) REFERENCES `telephony_configs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `phone_numbers_org_address_uq` ON `phone_numbers` (`org_id`,`address`);--> statement-breakpoint
CREATE INDEX `phone_numbers_config_idx` ON `phone_numbers` (`config_id`);--> statement-breakpoint
CREATE TABLE `telephony_configs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`provider` text NOT NULL,
	`is_default_outbound` integer DEFAULT false NOT NULL,
	`config` text NOT NULL,
	`secrets` text NOT NULL,
	`state` text DEFAULT '{}' NOT NULL,
	`inactive` integer DEFAULT false NOT NULL,
	`inactive_since` text,
	`inactive_reason` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `telephony_configs_org_name_uq` ON `telephony_configs` (`org_id`,`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `telephony_configs_org_default_uq` ON `telephony_configs` (`org_id`) WHERE is_default_outbound = 1;--> statement-breakpoint
CREATE TABLE `workflow_definitions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workflow_id` integer NOT NULL,
	`version_number` integer NOT NULL,
	`definition` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_definitions_version_uq` ON `workflow_definitions` (`workflow_id`,`version_number`);--> statement-breakpoint
CREATE TABLE `workflow_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`name` text NOT NULL,
	`workflow_id` integer NOT NULL,
	`workflow_uuid` text NOT NULL,
	`definition_id` integer,
	`campaign_id` integer,
	`contact_id` integer,
	`attempt` integer,
	`phone_number` text NOT NULL,
	`from_number` text,
	`initial_context` text DEFAULT '{}' NOT NULL,
	`telephony_configuration_id` integer,
	`provider` text,
	`provider_call_id` text,
	`status` text DEFAULT 'queued' NOT NULL,
	`answered_by` text,
	`error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`answered_at` text,
	`ended_at` text,
	`duration_seconds` integer,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_runs_name_uq` ON `workflow_runs` (`name`);--> statement-breakpoint
CREATE INDEX `workflow_runs_wf_idx` ON `workflow_runs` (`workflow_id`,`id`);--> statement-breakpoint
CREATE INDEX `workflow_runs_campaign_idx` ON `workflow_runs` (`campaign_id`);--> statement-breakpoint
CREATE INDEX `workflow_runs_provider_call_idx` ON `workflow_runs` (`provider`,`provider_call_id`);--> statement-breakpoint
CREATE TABLE `workflow_triggers` (
	`org_id` integer NOT NULL,
	`trigger_path` text NOT NULL,
	`workflow_id` integer NOT NULL,
	PRIMARY KEY(`org_id`, `trigger_path`, `workflow_id`),
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `workflow_triggers_wf_idx` ON `workflow_triggers` (`workflow_id`);--> statement-breakpoint
CREATE TABLE `workflows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`uuid` text NOT NULL,
	`name` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`current_definition_id` integer,
	`version_number` integer DEFAULT 1 NOT NULL,
	`template_context_variables` text DEFAULT '{}' NOT NULL,
	`call_disposition_codes` text DEFAULT '{"disposition_codes":[]}' NOT NULL,
	`workflow_configurations` text DEFAULT '{}' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflows_uuid_uq` ON `workflows` (`uuid`);--> statement-breakpoint
CREATE INDEX `workflows_org_idx` ON `workflows` (`org_id`);