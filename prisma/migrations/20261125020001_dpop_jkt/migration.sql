-- The authorization request's dpop_jkt (RFC 9449 10), kept by the login and its code: the code is
-- redeemed only with a DPoP proof of that key.
ALTER TABLE "interactions" ADD COLUMN "dpop_jkt" TEXT;

ALTER TABLE "authorization_codes" ADD COLUMN "dpop_jkt" TEXT;
