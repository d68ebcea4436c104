ALTER TABLE `calling_policies` ADD `local_hours` text;--> statement-breakpoint
ALTER TABLE `calling_policies` ADD `attempt_cap` text;