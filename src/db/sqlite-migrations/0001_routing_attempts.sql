ALTER TABLE `usage_events` ADD `served_model_group` text;--> statement-breakpoint
ALTER TABLE `usage_events` ADD `attempts` integer;