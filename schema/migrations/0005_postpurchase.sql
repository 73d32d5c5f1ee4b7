-- Post-purchase and checkout administration.

-- Gift cards get an id for staff to address them by (their codes are stored only hashed and
-- shown once, at issue) and a merchant's note ("refund for order 7KQF-...").
ALTER TABLE gift_cards ADD COLUMN IF NOT EXISTS id UUID NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE gift_cards ADD COLUMN IF NOT EXISTS note TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX IF NOT EXISTS gift_cards_id ON gift_cards (tenant_id, id);

-- Returns keep every transition they went through: [{status, note, by, at}].
ALTER TABLE returns ADD COLUMN IF NOT EXISTS history JSONB NOT NULL DEFAULT '[]';
