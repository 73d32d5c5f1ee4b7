-- Checkout bookkeeping. An order keeps, besides its lines, the rendered detail the shopper was
-- shown at purchase (immutable), what it reserved (stock, coupon uses, gift-card amounts) so that
-- a failed or abandoned payment can be compensated exactly, and the idempotency key it was
-- created under so that a retried request resumes it instead of creating another.
ALTER TABLE orders ADD COLUMN IF NOT EXISTS detail JSONB NOT NULL DEFAULT '{}';
ALTER TABLE orders ADD COLUMN IF NOT EXISTS reservation JSONB NOT NULL DEFAULT '{}';
ALTER TABLE orders ADD COLUMN IF NOT EXISTS checkout_key TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS orders_pending ON orders (status, created_at);
CREATE INDEX IF NOT EXISTS orders_checkout_key ON orders (tenant_id, checkout_key);

-- The resource an idempotent request created (an order id), recorded before its side effects,
-- so that a request taking over a stale key can find and resume it.
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS resource TEXT NOT NULL DEFAULT '';
