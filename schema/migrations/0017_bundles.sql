-- Bundles: a product sold as a set of other variants. Its stock is its components': a checkout
-- takes the components' stock, a restock gives it back to them, and the bundle's own variants
-- hold the derived count (how many whole bundles the components make), refreshed whenever a
-- component's stock moves, so that its availability replicates like any product's.
CREATE TABLE IF NOT EXISTS bundles (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    product_id INT8 NOT NULL,
    components JSONB NOT NULL, -- [{variant_id, quantity}]
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, product_id)
);
-- The default operator class (jsonb_ops) answers the containment (@>) lookups: CockroachDB has
-- no jsonb_path_ops (a database migrated before keeps its jsonb_path_ops index of this name).
CREATE INDEX IF NOT EXISTS bundles_components ON bundles USING GIN (components);
