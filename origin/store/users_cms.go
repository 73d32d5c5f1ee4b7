package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

// Users returns every staff user of the tenant by id. Staff lists are short (tens), so the CMS
// users routes filter and sort them in memory.
func (tx *Tx) Users(ctx context.Context, t *schema.Tenant) ([]*schema.User, error) {
	return appendRows(ctx, tx.pg, nil, `SELECT `+userColumns+` FROM users WHERE tenant_id = $1 ORDER BY id`, scanUser, t.ID)
}

// UserTaken reports which of the login, e-mail address and slug another user (not exclude)
// already holds.
func (tx *Tx) UserTaken(ctx context.Context, t *schema.Tenant, login, email, slug string, exclude schema.UserID) (loginTaken, emailTaken, slugTaken bool, err error) {
	err = tx.pg.QueryRow(ctx, `SELECT
		coalesce(bool_or(login = $2), false), coalesce(bool_or(lower(email) = lower($3)), false), coalesce(bool_or(slug = $4), false)
		FROM users WHERE tenant_id = $1 AND id <> $5`, t.ID, login, email, slug, int64(exclude)).Scan(&loginTaken, &emailTaken, &slugTaken)
	return
}

// CreateUserTx inserts a staff user inside a transaction.
func (tx *Tx) CreateUserTx(ctx context.Context, t *schema.Tenant, u *schema.User) error {
	if err := schema.ValidateUser(u); err != nil {
		return err
	}
	id, err := tx.allocIDs(ctx, t.ID, "user", 1)
	if err != nil {
		return err
	}
	u.ID, u.CreatedAt = schema.UserID(id), tx.Now()
	if err := tx.saveAuthor(ctx, t, false, u.ID, u); err != nil {
		return err
	}
	p := &u.Profile
	_, err = tx.pg.Exec(ctx, `INSERT INTO users (tenant_id, `+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		t.ID, int64(u.ID), u.Login, u.Email, u.DisplayName, u.Slug, string(u.Role), u.CreatedAt, u.Version,
		p.FirstName, p.LastName, p.Nickname, p.Description, p.URL, p.Locale)
	return mapError(err)
}

// UpdateUser writes a user's e-mail address, names, slug, role and profile (the login never
// changes).
func (tx *Tx) UpdateUser(ctx context.Context, t *schema.Tenant, u *schema.User) error {
	if err := schema.ValidateUser(u); err != nil {
		return err
	}
	if err := tx.saveAuthor(ctx, t, true, u.ID, u); err != nil {
		return err
	}
	p := &u.Profile
	tx.credentialsChanged(t)
	_, err := tx.pg.Exec(ctx, `UPDATE users SET email = $3, display_name = $4, slug = $5, role = $6, first_name = $7, last_name = $8,
		nickname = $9, description = $10, url = $11, locale = $12, version = $13 WHERE tenant_id = $1 AND id = $2`,
		t.ID, int64(u.ID), u.Email, u.DisplayName, u.Slug, string(u.Role), p.FirstName, p.LastName, p.Nickname, p.Description, p.URL, p.Locale, u.Version)
	return mapError(err)
}

// DeleteUser deletes a staff user, giving their posts to reassign (each such post is a
// replicated change of this transaction). Their application passwords go with them.
func (tx *Tx) DeleteUser(ctx context.Context, t *schema.Tenant, id, reassign schema.UserID) error {
	posts, err := appendRows(ctx, tx.pg, nil, `SELECT `+postColumns+` FROM posts WHERE tenant_id = $1 AND author_id = `+schema.IDString(id),
		scanPost, t.ID)
	if err != nil {
		return err
	}
	for _, old := range posts {
		p := *old
		p.Author = reassign
		if err := tx.UpdatePost(ctx, t, old, &p); err != nil {
			return err
		}
	}
	// Their revisions and autosaves too, as WordPress reassigns every post_author.
	if _, err := tx.pg.Exec(ctx, `UPDATE post_revisions SET author_id = $3 WHERE tenant_id = $1 AND author_id = $2`,
		t.ID, int64(id), int64(reassign)); err != nil {
		return err
	}
	if err := tx.saveAuthor(ctx, t, true, id, nil); err != nil {
		return err
	}
	tx.credentialsChanged(t)
	_, err = tx.pg.Exec(ctx, `DELETE FROM users WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id))
	return mapError(err)
}

// AppPasswordInfo is an application password as its routes show it (never the password).
type AppPasswordInfo struct {
	UUID      string
	UserID    schema.UserID
	AppID     string
	Name      string
	CreatedAt time.Time
	LastUsed  *time.Time
	LastIP    string
}

const appPasswordColumns = `uuid::text, user_id, app_id, name, created_at, last_used_at, last_ip`

func scanAppPassword(row pgx.Row) (*AppPasswordInfo, error) {
	var a AppPasswordInfo
	if err := row.Scan(&a.UUID, &a.UserID, &a.AppID, &a.Name, &a.CreatedAt, &a.LastUsed, &a.LastIP); err != nil {
		return nil, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if a.LastUsed != nil {
		u := a.LastUsed.UTC()
		a.LastUsed = &u
	}
	return &a, nil
}

// AppPasswords returns a user's application passwords, oldest first.
func (db *DB) AppPasswords(ctx context.Context, t *schema.Tenant, user schema.UserID) ([]*AppPasswordInfo, error) {
	out, err := appendRows(ctx, db.pool, nil, `SELECT `+appPasswordColumns+` FROM app_passwords
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at, uuid`, scanAppPassword, t.ID, int64(user))
	return out, mapError(err)
}

// AppPassword returns one of a user's application passwords by UUID.
func (db *DB) AppPassword(ctx context.Context, t *schema.Tenant, user schema.UserID, uuid string) (*AppPasswordInfo, error) {
	if !schema.ValidUUID(uuid) {
		return nil, notFound("application password")
	}
	a, err := scanAppPassword(db.pool.QueryRow(ctx, `SELECT `+appPasswordColumns+` FROM app_passwords WHERE tenant_id = $1 AND user_id = $2 AND uuid = $3`,
		t.ID, int64(user), uuid))
	if err == pgx.ErrNoRows {
		return nil, notFound("application password")
	}
	return a, mapError(err)
}

// AppPasswordByHash returns the application password with the keyed hash (the one a request
// authenticated with), or a not-found error.
func (db *DB) AppPasswordByHash(ctx context.Context, t *schema.Tenant, hash []byte) (*AppPasswordInfo, error) {
	a, err := scanAppPassword(db.pool.QueryRow(ctx, `SELECT `+appPasswordColumns+` FROM app_passwords WHERE tenant_id = $1 AND hash = $2`, t.ID, hash))
	if err == pgx.ErrNoRows {
		return nil, notFound("application password")
	}
	return a, mapError(err)
}

// NewAppPassword stores the keyed hash of a new application password, named and optionally tied
// to an application id (a UUID, or "").
func (db *DB) NewAppPassword(ctx context.Context, t *schema.Tenant, user schema.UserID, name, appID string, hash []byte) (*AppPasswordInfo, error) {
	if err := schema.ValidateText("name", name, 200, true); err != nil {
		return nil, err
	}
	a := &AppPasswordInfo{UUID: NewUUID(), UserID: user, AppID: appID, Name: name}
	err := db.Tx(ctx, func(tx *Tx) error {
		a.CreatedAt = tx.Now()
		_, err := tx.pg.Exec(ctx, `INSERT INTO app_passwords (tenant_id, uuid, user_id, name, hash, created_at, app_id) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			t.ID, a.UUID, int64(user), name, hash, a.CreatedAt, appID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// RenameAppPassword changes an application password's name.
func (db *DB) RenameAppPassword(ctx context.Context, t *schema.Tenant, user schema.UserID, uuid, name string) error {
	if err := schema.ValidateText("name", name, 200, true); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `UPDATE app_passwords SET name = $4 WHERE tenant_id = $1 AND user_id = $2 AND uuid = $3`, t.ID, int64(user), uuid, name)
	return mapError(err)
}

// RevokeAppPassword deletes one application password; the next request using it is refused by
// this process (edges forward every credentialed request to an origin), by the others once they
// hear of it or their cache entry expires (Config.CredentialTTL).
func (db *DB) RevokeAppPassword(ctx context.Context, t *schema.Tenant, user schema.UserID, uuid string) error {
	if !schema.ValidUUID(uuid) {
		return notFound("application password")
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM app_passwords WHERE tenant_id = $1 AND user_id = $2 AND uuid = $3`, t.ID, int64(user), uuid)
	db.credentialsChanged(t.ID) // whatever err says: the delete may have happened
	if err == nil && tag.RowsAffected() == 0 {
		return notFound("application password")
	}
	return mapError(err)
}

// RevokeAppPasswords deletes every application password of a user and returns how many there were.
func (db *DB) RevokeAppPasswords(ctx context.Context, t *schema.Tenant, user schema.UserID) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM app_passwords WHERE tenant_id = $1 AND user_id = $2`, t.ID, int64(user))
	db.credentialsChanged(t.ID)
	if err != nil {
		return 0, mapError(err)
	}
	return tag.RowsAffected(), nil
}

// TouchAppPassword records a use of an application password (time and address), at most once a
// day per password as WordPress does, so that authentication does not write on every request.
func (db *DB) TouchAppPassword(ctx context.Context, t *schema.Tenant, hash []byte, ip string, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE app_passwords SET last_used_at = $3, last_ip = $4
		WHERE tenant_id = $1 AND hash = $2 AND (last_used_at IS NULL OR last_used_at < $5)`, t.ID, hash, now, ip, now.Add(-24*time.Hour))
	return mapError(err)
}
