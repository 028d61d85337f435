ALTER TABLE "usage_events" ADD COLUMN "served_model_group" text;--> statement-breakpoint
ALTER TABLE "usage_events" ADD COLUMN "attempts" integer;