-- ENS profile claims: a wallet's primary name and avatar as resolved at login (or their absence),
-- shared by every instance for ENS_CACHE_TTL.
CREATE TABLE "ens_profiles" (
    "address" TEXT NOT NULL,
    "name" TEXT,
    "avatar" TEXT,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ens_profiles_pkey" PRIMARY KEY ("address")
);

CREATE INDEX "ens_profiles_expires_at_idx" ON "ens_profiles"("expires_at");
