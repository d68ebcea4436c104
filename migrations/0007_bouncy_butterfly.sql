CREATE TABLE `callback_nonces` (
	`config_id` integer NOT NULL,
	`scheme` text NOT NULL,
	`nonce` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`config_id`, `scheme`, `nonce`)
);
--> statement-breakpoint
CREATE INDEX `callback_nonces_expires_idx` ON `callback_nonces` (`expires_at`);