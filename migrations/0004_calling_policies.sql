CREATE TABLE `calling_policies` (
	`org_id` integer PRIMARY KEY NOT NULL,
	`allowed_countries` text,
	`blocked_number_types` text,
	`allowed_numbers` text DEFAULT '[]' NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
