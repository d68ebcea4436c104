ALTER TABLE `campaigns` ADD `import_error` text;--> statement-breakpoint
-- A campaign a request is still creating is now marked `creating` (hidden); `importing` became a visible state (a
-- background import). Rows a deploy left hidden mid-create stay hidden, and the cron still sweeps them.
UPDATE `campaigns` SET `state` = 'creating' WHERE `state` = 'importing';
