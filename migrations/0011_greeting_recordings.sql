CREATE TABLE `greeting_recordings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`recording_id` text NOT NULL,
	`name` text NOT NULL,
	`key` text NOT NULL,
	`sample_rate` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`size_bytes` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `greeting_recordings_org_recording_uq` ON `greeting_recordings` (`org_id`,`recording_id`);