CREATE TABLE "usage_events" (
	"request_id" text PRIMARY KEY NOT NULL,
	"key_id" text,
	"model_group" text,
	"provider" text,
	"deployment" text,
	"upstream_model" text,
	"operation" text NOT NULL,
	"input_tokens" integer NOT NULL,
	"output_tokens" integer NOT NULL,
	"cached_input_tokens" integer NOT NULL,
	"reasoning_tokens" integer NOT NULL,
	"usage_source" text NOT NULL,
	"cost_usd" double precision NOT NULL,
	"status" integer NOT NULL,
	"stream" boolean NOT NULL,
	"latency_ms" double precision NOT NULL,
	"time_to_first_token_ms" double precision,
	"overhead_ms" double precision NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "virtual_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"name" text NOT NULL,
	"owner" text,
	"team" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"allowed_model_groups" text[],
	"rpm_limit" integer,
	"tpm_limit" integer,
	"budget_usd" double precision,
	"budget_period" text,
	"expires_at" timestamp (3) with time zone,
	"disabled" boolean DEFAULT false NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "virtual_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "virtual_keys_budget_check" CHECK (("virtual_keys"."budget_usd" is null) = ("virtual_keys"."budget_period" is null) and ("virtual_keys"."budget_period" is null or "virtual_keys"."budget_period" in ('day', 'week', 'month', 'total')))
);
--> statement-breakpoint
CREATE INDEX "usage_events_key_started_idx" ON "usage_events" USING btree ("key_id","started_at");--> statement-breakpoint
CREATE INDEX "usage_events_started_idx" ON "usage_events" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "virtual_keys_created_idx" ON "virtual_keys" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "virtual_keys_owner_created_idx" ON "virtual_keys" USING btree ("owner","created_at","id");--> statement-breakpoint
CREATE INDEX "virtual_keys_team_created_idx" ON "virtual_keys" USING btree ("team","created_at","id");