-- Checkout bookkeeping. An order keeps, besides its lines, the rendered detail the shopper was
-- shown at purchase (immutable), what it reserved (stock, coupon uses, gift-card amounts) so that
-- a failed or abandoned payment can be compensated exactly, and the idempotency key it was
-- created under so that a retried request resumes it instead of creating another.
ALTER TABLE orders ADD COLUMN detail JSONB NOT NULL DEFAULT '{}';
ALTER TABLE orders ADD COLUMN reservation JSONB NOT NULL DEFAULT '{}';
ALTER TABLE orders ADD COLUMN checkout_key TEXT NOT NULL DEFAULT '';
CREATE INDEX orders_pending ON orders (status, created_at);
CREATE INDEX orders_checkout_key ON orders (tenant_id, checkout_key);

-- The resource an idempotent request created (an order id), recorded before its side effects,
-- so that a request taking over a stale key can find and resume it.
ALTER TABLE idempotency_keys ADD COLUMN resource TEXT NOT NULL DEFAULT '';
