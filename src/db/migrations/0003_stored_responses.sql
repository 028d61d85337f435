CREATE TABLE "stored_responses" (
	"id" text PRIMARY KEY NOT NULL,
	"key_id" text,
	"model_group" text NOT NULL,
	"deployment_id" text NOT NULL,
	"native" boolean NOT NULL,
	"previous_response_id" text,
	"input_items" jsonb NOT NULL,
	"response" jsonb,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "stored_responses_expires_idx" ON "stored_responses" USING btree ("expires_at");