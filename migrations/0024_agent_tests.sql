CREATE TABLE `agent_test_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`workflow_id` integer NOT NULL,
	`version_number` integer NOT NULL,
	`scenario_id` integer,
	`repetitions` integer NOT NULL,
	`status` text DEFAULT 'running' NOT NULL,
	`results` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`finished_at` text,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `agent_test_runs_version_idx` ON `agent_test_runs` (`workflow_id`,`version_number`,`id`);--> statement-breakpoint
CREATE INDEX `agent_test_runs_org_idx` ON `agent_test_runs` (`org_id`,`id`);--> statement-breakpoint
CREATE TABLE `agent_test_scenarios` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`workflow_id` integer NOT NULL,
	`name` text NOT NULL,
	`spec` text NOT NULL,
	`revision` integer DEFAULT 1 NOT NULL,
	`agent_version` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_test_scenarios_name_uq` ON `agent_test_scenarios` (`workflow_id`,`name`);--> statement-breakpoint
CREATE INDEX `agent_test_scenarios_org_idx` ON `agent_test_scenarios` (`org_id`,`workflow_id`);--> statement-breakpoint
ALTER TABLE `workflow_runs` ADD `is_test` integer DEFAULT false NOT NULL;