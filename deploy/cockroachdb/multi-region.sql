-- CockroachDB-only DDL, applied after `vitrine migrate` on a multi-region cluster. Vitrine's
-- migrations stay in the SQL subset shared with PostgreSQL; localities live here.
--
-- The origin is the only writer and runs in the primary region. Other regions hold non-voting
-- replicas for survival and for reads by stand-by origins.

ALTER DATABASE vitrine SET PRIMARY REGION "us-east1";
ALTER DATABASE vitrine ADD REGION "europe-west1";
ALTER DATABASE vitrine ADD REGION "asia-northeast1";
ALTER DATABASE vitrine SURVIVE REGION FAILURE;

-- The registry is read by every origin and written rarely: a GLOBAL table serves consistent reads
-- from every region without a round trip to the primary.
ALTER TABLE tenants SET LOCALITY GLOBAL;
ALTER TABLE tenant_domains SET LOCALITY GLOBAL;
ALTER TABLE cluster_meta SET LOCALITY GLOBAL;

-- Everything else stays REGIONAL BY TABLE in the primary region (the default), next to the
-- origin that writes it: log_versions (one hot row per tenant), both outboxes, the catalog,
-- posts, users, application passwords, leases and the id allocator.
