-- How an interaction ended ("login" or "cancelled"), so that the login page, opened again (Back
-- after Cancel), says what happened instead of "it took too long".
ALTER TABLE "interactions" ADD COLUMN "outcome" TEXT;
