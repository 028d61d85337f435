CREATE TABLE `stored_responses` (
	`id` text PRIMARY KEY NOT NULL,
	`key_id` text,
	`model_group` text NOT NULL,
	`deployment_id` text NOT NULL,
	`native` integer NOT NULL,
	`previous_response_id` text,
	`input_items` text NOT NULL,
	`response` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `stored_responses_expires_idx` ON `stored_responses` (`expires_at`);--> statement-breakpoint
CREATE TABLE `usage_events` (
	`request_id` text PRIMARY KEY NOT NULL,
	`client_request_id` text,
	`key_id` text,
	`model_group` text,
	`provider` text,
	`deployment` text,
	`upstream_model` text,
	`operation` text NOT NULL,
	`client_api` text,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cached_input_tokens` integer NOT NULL,
	`reasoning_tokens` integer NOT NULL,
	`usage_source` text NOT NULL,
	`cost_usd` real NOT NULL,
	`status` integer NOT NULL,
	`stream` integer NOT NULL,
	`latency_ms` real NOT NULL,
	`time_to_first_token_ms` real,
	`overhead_ms` real NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_events_key_started_idx` ON `usage_events` (`key_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `usage_events_started_idx` ON `usage_events` (`started_at`);--> statement-breakpoint
CREATE INDEX `usage_events_client_request_idx` ON `usage_events` (`client_request_id`) WHERE "usage_events"."client_request_id" is not null;--> statement-breakpoint
CREATE TABLE `virtual_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`name` text NOT NULL,
	`owner` text,
	`team` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`allowed_model_groups` text,
	`rpm_limit` integer,
	`tpm_limit` integer,
	`budget_usd` real,
	`budget_period` text,
	`expires_at` integer,
	`disabled` integer DEFAULT false NOT NULL,
	`revoked_at` integer,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	CONSTRAINT "virtual_keys_budget_check" CHECK(("virtual_keys"."budget_usd" is null) = ("virtual_keys"."budget_period" is null) and ("virtual_keys"."budget_period" is null or "virtual_keys"."budget_period" in ('day', 'week', 'month', 'total')))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `virtual_keys_key_hash_unique` ON `virtual_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `virtual_keys_created_idx` ON `virtual_keys` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `virtual_keys_owner_created_idx` ON `virtual_keys` (`owner`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `virtual_keys_team_created_idx` ON `virtual_keys` (`team`,`created_at`,`id`);