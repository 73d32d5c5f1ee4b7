package store

import (
	"context"
	"crypto/subtle"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"vitrine/schema"
)

const userColumns = `id, login, email, display_name, slug, role, created_at, version,
	first_name, last_name, nickname, description, url, locale`

// userColumnsOf is userColumns qualified by a table alias.
func userColumnsOf(alias string) string {
	cols := strings.Split(strings.ReplaceAll(userColumns, "\n\t", " "), ", ")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

func scanUser(row pgx.Row) (*schema.User, error) {
	var u schema.User
	var role string
	p := &u.Profile
	if err := row.Scan(&u.ID, &u.Login, &u.Email, &u.DisplayName, &u.Slug, &role, &u.CreatedAt, &u.Version,
		&p.FirstName, &p.LastName, &p.Nickname, &p.Description, &p.URL, &p.Locale); err != nil {
		return nil, err
	}
	u.Role = schema.Role(role)
	u.CreatedAt = u.CreatedAt.UTC()
	return &u, nil
}

// CreateUser inserts a staff user, allocating its id from the tenant's user id space.
func (db *DB) CreateUser(ctx context.Context, t *schema.Tenant, u *schema.User) error {
	if u.Slug == "" {
		u.Slug = schema.Slugify(u.Login)
	}
	if u.DisplayName == "" {
		u.DisplayName = u.Login
	}
	if err := schema.ValidateUser(u); err != nil {
		return err
	}
	return db.Tx(ctx, func(tx *Tx) error {
		id, err := tx.allocIDs(ctx, t.ID, "user", 1)
		if err != nil {
			return err
		}
		u.ID = schema.UserID(id)
		u.CreatedAt = tx.Now()
		if err := tx.saveAuthor(ctx, t, false, u.ID, u); err != nil {
			return err
		}
		p := &u.Profile
		_, err = tx.pg.Exec(ctx, `INSERT INTO users (tenant_id, `+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			t.ID, int64(u.ID), u.Login, u.Email, u.DisplayName, u.Slug, string(u.Role), u.CreatedAt, u.Version,
			p.FirstName, p.LastName, p.Nickname, p.Description, p.URL, p.Locale)
		return mapError(err)
	})
}

// UserByLogin returns a user by login or e-mail address.
func (db *DB) UserByLogin(ctx context.Context, t *schema.Tenant, login string) (*schema.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE tenant_id = $1 AND (login = $2 OR lower(email) = lower($2))`,
		t.ID, login))
	if err == pgx.ErrNoRows {
		return nil, notFound("user")
	}
	return u, mapError(err)
}

// AppPassword describes an application password (never the password itself).
type AppPassword struct {
	UUID      string
	UserID    schema.UserID
	Name      string
	CreatedAt time.Time
}

// CreateAppPassword stores the keyed hash of a new application password for a user.
func (db *DB) CreateAppPassword(ctx context.Context, t *schema.Tenant, user schema.UserID, name string, hash []byte) (*AppPassword, error) {
	if err := schema.ValidateText("name", name, 200, true); err != nil {
		return nil, err
	}
	ap := &AppPassword{UUID: NewUUID(), UserID: user, Name: name}
	err := db.Tx(ctx, func(tx *Tx) error {
		ap.CreatedAt = tx.Now()
		_, err := tx.pg.Exec(ctx, `INSERT INTO app_passwords (tenant_id, uuid, user_id, name, hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.ID, ap.UUID, int64(user), name, hash, ap.CreatedAt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ap, nil
}

// DeleteAppPasswords deletes a user's application passwords that have the given name.
func (db *DB) DeleteAppPasswords(ctx context.Context, t *schema.Tenant, user schema.UserID, name string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM app_passwords WHERE tenant_id = $1 AND user_id = $2 AND name = $3`, t.ID, int64(user), name)
	db.credentialsChanged(t.ID) // whatever err says: the delete may have happened
	return mapError(err)
}

// Authenticate returns the user whose application password has the keyed hash, provided the user
// is the one named by login (a login or an e-mail address). A credential of one tenant never
// authenticates on another: the lookup is keyed by tenant. It returns a CodeUnauthorized error
// whose CMSCode tells an unknown user from a wrong password, as WordPress does.
func (db *DB) Authenticate(ctx context.Context, t *schema.Tenant, login string, hash []byte) (*schema.User, error) {
	u, _, err := db.authenticate(ctx, t, login, hash)
	return u, err
}

// AuthenticateUse is Authenticate for an API request: it also records the password's use (time
// and client address), at most once a day per password as WordPress does, so that
// authentication writes once a day rather than on every request. A password verified within
// Config.CredentialTTL is trusted without asking the database again (credcache.go).
func (db *DB) AuthenticateUse(ctx context.Context, t *schema.Tenant, login string, hash []byte, ip string, now time.Time) (*schema.User, error) {
	u, lastUsed, gen := db.creds.lookup(t.ID, hash, login, now)
	if u == nil {
		var err error
		if u, lastUsed, err = db.authenticate(ctx, t, login, hash); err != nil {
			return nil, err
		}
		db.creds.keep(t.ID, hash, u, lastUsed, gen, now)
	}
	if lastUsed == nil || now.Sub(*lastUsed) >= 24*time.Hour {
		// A record of use, not a condition of it: the request goes on if the write fails (the
		// next request tries again).
		if db.TouchAppPassword(ctx, t, hash, ip, now) == nil {
			db.creds.used(t.ID, hash, now)
		}
	}
	return u, nil
}

// ForgetCredentials drops what this process remembers of the tenants' verified application
// passwords: another process changed their users or passwords (Config.OnCredentialsChange).
func (db *DB) ForgetCredentials(tenantIDs ...string) {
	db.creds.forget(tenantIDs...)
}

// CredentialStats returns what the cache of verified application passwords answered.
func (db *DB) CredentialStats() CredentialStats { return db.creds.snapshot() }

// credentialsChanged forgets the tenant's verified passwords once a change to its users or
// application passwords has committed, here and, through OnCredentialsChange, elsewhere.
func (db *DB) credentialsChanged(tenantIDs ...string) {
	if len(tenantIDs) == 0 {
		return
	}
	db.creds.forget(tenantIDs...)
	if db.cfg.OnCredentialsChange != nil {
		db.cfg.OnCredentialsChange(tenantIDs)
	}
}

func (db *DB) authenticate(ctx context.Context, t *schema.Tenant, login string, hash []byte) (*schema.User, *time.Time, error) {
	row := db.pool.QueryRow(ctx, `SELECT `+userColumnsOf("u")+`, a.hash, a.last_used_at
		FROM app_passwords a JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.user_id
		WHERE a.tenant_id = $1 AND a.hash = $2`, t.ID, hash)
	var u schema.User
	var role string
	var stored []byte
	var lastUsed *time.Time
	p := &u.Profile
	err := row.Scan(&u.ID, &u.Login, &u.Email, &u.DisplayName, &u.Slug, &role, &u.CreatedAt, &u.Version,
		&p.FirstName, &p.LastName, &p.Nickname, &p.Description, &p.URL, &p.Locale, &stored, &lastUsed)
	if err == pgx.ErrNoRows {
		if _, uerr := db.UserByLogin(ctx, t, login); uerr != nil {
			if schema.ErrorCode(uerr) == schema.CodeNotFound {
				return nil, nil, &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "invalid_username",
					Message: "Unknown username. Check again or try your email address."}
			}
			return nil, nil, uerr
		}
		return nil, nil, &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "incorrect_password",
			Message: "The provided password is an invalid application password."}
	}
	if err != nil {
		return nil, nil, mapError(err)
	}
	if subtle.ConstantTimeCompare(stored, hash) != 1 || !(u.Login == login || strings.EqualFold(u.Email, login)) {
		return nil, nil, &schema.Error{Code: schema.CodeUnauthorized, CMSCode: "incorrect_password",
			Message: "The provided password is an invalid application password."}
	}
	u.Role = schema.Role(role)
	u.CreatedAt = u.CreatedAt.UTC()
	return &u, lastUsed, nil
}

// User returns a staff user of the tenant by id.
func (tx *Tx) User(ctx context.Context, t *schema.Tenant, id schema.UserID) (*schema.User, error) {
	u, err := scanUser(tx.pg.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE tenant_id = $1 AND id = $2`, t.ID, int64(id)))
	if err == pgx.ErrNoRows {
		return nil, notFound("user")
	}
	return u, err
}
