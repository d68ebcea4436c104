ALTER TABLE `webhook_deliveries` ADD `run_id` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `node_id` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `url` text;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_run_idx` ON `webhook_deliveries` (`run_id`);