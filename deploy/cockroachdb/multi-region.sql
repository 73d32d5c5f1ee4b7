-- CockroachDB-only DDL, applied once after `vitrine migrate` on a multi-region cluster (and again
-- after a migration adds a table that belongs in a list below). Vitrine's migrations stay in the
-- SQL subset shared with PostgreSQL; localities live here. Every statement is idempotent.
-- origin/store/crdbcheck (TestMultiRegionDDL) parses this file with CockroachDB's grammar and
-- checks that every table it names exists in schema/migrations.
--
-- Topology: the primary region holds the relay, the replication and event logs and the writes that
-- must be serialised in one place; every region runs origins (for the writes of the shoppers it
-- serves) and edges (for every public read, from the region's NATS mirrors: deploy/nats).
--
-- How writes are routed:
--   * An edge forwards every write (cart, checkout, customer routes, back office) to the origin of
--     its own region (--origin-url). The shopper's rows are homed where they were first written:
--     the REGIONAL BY ROW tables below default their hidden crdb_region column to
--     gateway_region(), the region of the origin that inserted them. A shopper who travels is
--     still served correctly from another region's origin; the reads and writes of their rows
--     then cross to the home region (slower, never wrong).
--   * What replicates to edges (the catalog, content, the registry) is written in transactions
--     that also write log_versions and repl_outbox, which stay in the primary region: the relay
--     (one lease holder, in the primary region) publishes them. Back-office writes are therefore
--     sent to an origin in the primary region (or pay one cross-region round trip per write).
--   * A checkout in another region writes its order locally, and its stock decrement, coupon and
--     gift-card uses and event_outbox row in the primary region: one transaction spanning both.
--   * Unique constraints that do not include the region (orders (tenant_id, reference),
--     customers (tenant_id, email)) are checked in every region on insert by CockroachDB; ids that
--     come from id_alloc (customer ids) are allocated in the primary region.

ALTER DATABASE vitrine SET PRIMARY REGION "us-east1";
ALTER DATABASE vitrine ADD REGION IF NOT EXISTS "europe-west1";
ALTER DATABASE vitrine ADD REGION IF NOT EXISTS "asia-northeast1";
ALTER DATABASE vitrine SURVIVE REGION FAILURE;

-- GLOBAL: read in every region without a round trip to the primary, written rarely (a write pays
-- CockroachDB's commit wait, a few hundred milliseconds). The registry, the catalog and content a
-- back office edits, and the credentials every origin checks (last_used_at moves at most once a
-- minute for server keys, once a day for application passwords).
ALTER TABLE tenants SET LOCALITY GLOBAL;
ALTER TABLE tenant_domains SET LOCALITY GLOBAL;
ALTER TABLE tenant_settings SET LOCALITY GLOBAL;
ALTER TABLE cluster_meta SET LOCALITY GLOBAL;
ALTER TABLE products SET LOCALITY GLOBAL;
ALTER TABLE categories SET LOCALITY GLOBAL;
ALTER TABLE currencies SET LOCALITY GLOBAL;
ALTER TABLE shipping_methods SET LOCALITY GLOBAL;
ALTER TABLE storefront_sections SET LOCALITY GLOBAL;
ALTER TABLE flash_sales SET LOCALITY GLOBAL;
ALTER TABLE bundles SET LOCALITY GLOBAL;
ALTER TABLE reviews SET LOCALITY GLOBAL;
ALTER TABLE posts SET LOCALITY GLOBAL;
ALTER TABLE terms SET LOCALITY GLOBAL;
ALTER TABLE menu_locations SET LOCALITY GLOBAL;
ALTER TABLE media_files SET LOCALITY GLOBAL;
ALTER TABLE users SET LOCALITY GLOBAL;
ALTER TABLE app_passwords SET LOCALITY GLOBAL;
ALTER TABLE server_keys SET LOCALITY GLOBAL;
ALTER TABLE webhook_endpoints SET LOCALITY GLOBAL;
ALTER TABLE subscription_plans SET LOCALITY GLOBAL;

-- REGIONAL BY ROW: a shopper's own rows, homed in the region whose origin wrote them (the hidden
-- crdb_region column, DEFAULT gateway_region()). Children are homed with their parent because the
-- same origin writes both. No query of the origin names crdb_region: it is hidden from SELECT *,
-- and lookups by primary key search the gateway's region first.
ALTER TABLE customers SET LOCALITY REGIONAL BY ROW;
ALTER TABLE customer_addresses SET LOCALITY REGIONAL BY ROW;
ALTER TABLE customer_tokens SET LOCALITY REGIONAL BY ROW;
ALTER TABLE wishlist_items SET LOCALITY REGIONAL BY ROW;
ALTER TABLE carts SET LOCALITY REGIONAL BY ROW;
ALTER TABLE cart_items SET LOCALITY REGIONAL BY ROW;
ALTER TABLE orders SET LOCALITY REGIONAL BY ROW;
ALTER TABLE order_lines SET LOCALITY REGIONAL BY ROW;
ALTER TABLE idempotency_keys SET LOCALITY REGIONAL BY ROW;

-- REGIONAL BY TABLE in the primary region (the default; stated so that a reader sees the choice):
-- the per-tenant log versions (one hot row per tenant), both outboxes, the relay's lease and
-- slots, the replication digests and the id allocator, all next to the relay; and the counters
-- every checkout moves (stock on variants, coupon uses, gift-card balances, social proof), which a
-- GLOBAL table would make every checkout wait for. variants stay here for that reason although
-- they are catalog: edges never read the database, and an origin reads a variant inside the
-- checkout transaction that writes it.
ALTER TABLE log_versions SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE repl_outbox SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE event_outbox SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE relay_leases SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE repl_slots SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE repl_digests SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE id_alloc SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE variants SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE product_stats SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE coupons SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE gift_cards SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
ALTER TABLE throttles SET LOCALITY REGIONAL BY TABLE IN PRIMARY REGION;
