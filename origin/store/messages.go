package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Subscriber is a newsletter subscription.
type Subscriber struct {
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
}

// Subscribe adds an email (normalised) to the newsletter. Subscribing an email twice changes
// nothing, and the caller cannot tell the two cases apart.
func (tx *Tx) Subscribe(ctx context.Context, t *schema.Tenant, email string) error {
	_, err := tx.pg.Exec(ctx, `INSERT INTO newsletter_subscribers (tenant_id, email, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, email) DO NOTHING`, t.ID, NormalizeEmail(email), tx.Now())
	return err
}

// Subscribers lists a page of the newsletter's subscribers, newest first, with their total count.
func (tx *Tx) Subscribers(ctx context.Context, t *schema.Tenant, offset, limit int) ([]Subscriber, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM newsletter_subscribers WHERE tenant_id = $1`, t.ID).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, []Subscriber{}, `SELECT email, created_at FROM newsletter_subscribers WHERE tenant_id = $1
		ORDER BY created_at DESC, email LIMIT $2 OFFSET $3`, func(row pgx.Row) (Subscriber, error) {
		var s Subscriber
		err := row.Scan(&s.Email, &s.CreatedAt)
		s.CreatedAt = s.CreatedAt.UTC()
		return s, err
	}, t.ID, limit, offset)
	return out, total, err
}

// ContactMessage is a message sent through the storefront's contact form.
type ContactMessage struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	Subject   string    `json:"subject"`
	Message   string    `json:"message"`
	ClientIP  string    `json:"client_ip"`
	Handled   bool      `json:"handled"`
	CreatedAt time.Time `json:"created_at"`
}

// InsertContactMessage stores a new (validated) contact message and sets its id and time.
func (tx *Tx) InsertContactMessage(ctx context.Context, t *schema.Tenant, m *ContactMessage) error {
	m.ID, m.CreatedAt, m.Handled = NewUUID(), tx.Now(), false
	_, err := tx.pg.Exec(ctx, `INSERT INTO contact_messages (tenant_id, id, name, email, subject, message, client_ip, handled, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, false, $8)`, t.ID, m.ID, m.Name, m.Email, m.Subject, m.Message, m.ClientIP, tx.Now())
	return err
}

const contactColumns = `id, name, email, subject, message, client_ip, handled, created_at`

func scanContact(row pgx.Row) (*ContactMessage, error) {
	var m ContactMessage
	if err := row.Scan(&m.ID, &m.Name, &m.Email, &m.Subject, &m.Message, &m.ClientIP, &m.Handled, &m.CreatedAt); err != nil {
		return nil, err
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return &m, nil
}

// ContactMessages lists a page of contact messages, newest first, with their total count;
// handled filters when not nil.
func (tx *Tx) ContactMessages(ctx context.Context, t *schema.Tenant, handled *bool, offset, limit int) ([]*ContactMessage, int, error) {
	var total int
	if err := tx.pg.QueryRow(ctx, `SELECT count(*) FROM contact_messages WHERE tenant_id = $1 AND ($2::BOOL IS NULL OR handled = $2)`,
		t.ID, handled).Scan(&total); err != nil {
		return nil, 0, err
	}
	out, err := appendRows(ctx, tx.pg, []*ContactMessage{}, `SELECT `+contactColumns+` FROM contact_messages
		WHERE tenant_id = $1 AND ($2::BOOL IS NULL OR handled = $2) ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
		scanContact, t.ID, handled, limit, offset)
	return out, total, err
}

// SetContactHandled marks a contact message handled (or not) and returns it.
func (tx *Tx) SetContactHandled(ctx context.Context, t *schema.Tenant, id string, handled bool) (*ContactMessage, error) {
	if !schema.ValidUUID(id) {
		return nil, notFound("contact message")
	}
	m, err := scanContact(tx.pg.QueryRow(ctx, `UPDATE contact_messages SET handled = $3 WHERE tenant_id = $1 AND id = $2
		RETURNING `+contactColumns, t.ID, id, handled))
	if err == pgx.ErrNoRows {
		return nil, notFound("contact message")
	}
	return m, err
}
