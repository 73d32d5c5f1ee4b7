package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"vitrine/schema"
)

func TestCMSUsers(t *testing.T) {
	t.Parallel()
	c := newCMSSite(t)
	admin, editor, author, sub := schema.RoleAdministrator, schema.RoleEditor, schema.RoleAuthor, schema.RoleSubscriber
	uid := func(r schema.Role) schema.UserID { return c.users[r].ID }
	// The author has a published post: their profile is public.
	post := &schema.Post{Type: "post", Status: schema.StatusPublish, Title: "By the author", Content: "x", Author: uid(author),
		CommentStatus: "open", PingStatus: "open", Format: "standard", DateGMT: time.Now().UTC().Add(-time.Hour)}
	c.post(post)

	logins := func(r *response) string {
		t.Helper()
		var list []map[string]any
		if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var out []string
		for _, m := range list {
			out = append(out, fmt.Sprint(m["slug"]))
		}
		return strings.Join(out, ",")
	}
	// Anonymous and unprivileged callers see only authors of published posts.
	for _, tc := range []struct {
		role  schema.Role
		query string
		want  string
	}{
		{"", "", "author1"},
		{sub, "", "author1"},
		{editor, "", "author1"},
		{admin, "", "admin,author1,editor1,subscriber1"},
		{admin, "orderby=id&order=desc", "editor1,author1,subscriber1,admin"},
		{admin, "roles=editor,author", "author1,editor1"},
		{admin, "search=edit", "editor1"},
		{admin, "who=authors", "admin,author1,editor1"},
		{admin, "has_published_posts=1", "author1"},
		{admin, "capabilities=manage_categories", "admin,editor1"},
		{admin, "per_page=2&page=2", "editor1,subscriber1"},
		{admin, fmt.Sprintf("include=%d,%d&orderby=include", uid(editor), uid(admin)), "editor1,admin"},
	} {
		t.Run(fmt.Sprintf("list %s %s", tc.role, tc.query), func(t *testing.T) {
			if got := logins(c.rest(tc.role, "GET", "/cms/v2/users?"+tc.query, "")); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if r := c.rest(admin, "GET", "/cms/v2/users?per_page=2", ""); r.header.Get("X-WP-Total") != "4" || r.header.Get("X-WP-TotalPages") != "2" ||
		!strings.Contains(r.header.Get("Link"), `rel="next"`) {
		t.Errorf("paging headers %v", r.header)
	}

	// The read permission matrix.
	for _, tc := range []struct {
		name, route string
		status      map[schema.Role]int
		code        string
	}{
		{"list edit context", "/cms/v2/users?context=edit", map[schema.Role]int{"": 401, sub: 403, author: 403, editor: 403, admin: 200}, "rest_forbidden_context"},
		{"filter by role", "/cms/v2/users?roles=editor", map[schema.Role]int{"": 401, sub: 403, author: 403, editor: 403, admin: 200}, "rest_user_cannot_view"},
		{"order by email", "/cms/v2/users?orderby=email", map[schema.Role]int{"": 401, sub: 403, author: 403, editor: 403, admin: 200}, "rest_forbidden_orderby"},
		{"who=authors", "/cms/v2/users?who=authors", map[schema.Role]int{"": 401, sub: 403, author: 200, editor: 200, admin: 200}, "rest_forbidden_who"},
		{"a public author", fmt.Sprintf("/cms/v2/users/%d", uid(author)), map[schema.Role]int{"": 200, sub: 200, author: 200, editor: 200, admin: 200}, ""},
		{"a public author in edit context", fmt.Sprintf("/cms/v2/users/%d?context=edit", uid(author)), map[schema.Role]int{"": 401, sub: 403, author: 200, editor: 403, admin: 200}, "rest_user_cannot_view"},
		{"a user without posts", fmt.Sprintf("/cms/v2/users/%d", uid(editor)), map[schema.Role]int{"": 401, sub: 403, author: 403, editor: 200, admin: 200}, "rest_user_cannot_view"},
		{"me", "/cms/v2/users/me", map[schema.Role]int{"": 401, sub: 200, author: 200, editor: 200, admin: 200}, "rest_not_logged_in"},
		{"unknown user", "/cms/v2/users/999", map[schema.Role]int{"": 404, sub: 404, author: 404, editor: 404, admin: 404}, "rest_user_invalid_id"},
		{"bad context", "/cms/v2/users/me?context=nope", map[schema.Role]int{"": 400, sub: 400, author: 400, editor: 400, admin: 400}, "rest_invalid_param"},
	} {
		for _, role := range cmsRoles {
			t.Run(tc.name+" as "+string(role), func(t *testing.T) {
				want := tc.status[role]
				code := tc.code
				if want == 200 {
					code = ""
				}
				c.want(c.rest(role, "GET", tc.route, ""), want, code)
			})
		}
	}

	// Golden bodies of a user in each context.
	ref := "\x00"
	wpTime := regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"`)
	for _, tc := range []struct {
		role          schema.Role
		context, file string
	}{{"", "view", "cms_user_view.golden"}, {"", "embed", "cms_user_embed.golden"}, {admin, "edit", "cms_user_edit.golden"}} {
		r := c.rest(tc.role, "GET", fmt.Sprintf("/cms/v2/users/%d?context=%s", uid(author), tc.context), "")
		c.want(r, 200, "")
		golden(t, tc.file, wpTime.ReplaceAll(r.body, []byte(`"<time>"`)), ref)
	}

	// Creating users: create_users (administrators).
	for _, role := range []schema.Role{"", sub, author, editor} {
		want := map[bool]int{true: 401, false: 403}[role == ""]
		c.want(c.rest(role, "POST", "/cms/v2/users", `{"username":"new","email":"new@cms.example"}`), want, "rest_cannot_create_user")
	}
	for _, tc := range []struct{ name, body, code string }{
		{"missing", `{"username":"x"}`, "rest_missing_callback_param"},
		{"taken login", `{"username":"editor1","email":"x@cms.example"}`, "existing_user_login"},
		{"taken email", `{"username":"x","email":"EDITOR1@cms.example"}`, "existing_user_email"},
		{"bad email", `{"username":"x","email":"nope"}`, "rest_invalid_param"},
		{"bad role", `{"username":"x","email":"x@cms.example","roles":["pope"]}`, "rest_user_invalid_role"},
		{"bad login", `{"username":"a b","email":"x@cms.example"}`, "rest_user_invalid_username"},
		{"unknown field", `{"username":"x","email":"x@cms.example","foo":1}`, "rest_invalid_param"},
	} {
		t.Run("create "+tc.name, func(t *testing.T) { c.want(c.rest(admin, "POST", "/cms/v2/users", tc.body), 400, tc.code) })
	}
	r := c.rest(admin, "POST", "/cms/v2/users", `{"username":"writer","email":"writer@cms.example","name":"Wri Ter","roles":["author"],"password":"ignored"}`)
	c.want(r, 201, "")
	writer := r.json(t)
	if writer["username"] != "writer" || fmt.Sprint(writer["roles"]) != "[author]" || !strings.HasSuffix(r.header.Get("Location"), fmt.Sprintf("/cms/v2/users/%v", writer["id"])) {
		t.Errorf("created %s (Location %s)", r.body, r.header.Get("Location"))
	}

	// Updating: oneself, or edit_users; roles need edit_users.
	c.want(c.rest(sub, "POST", "/cms/v2/users/me", `{"name":"Sub Scriber","description":"Hi"}`), 200, "")
	if m := c.rest(sub, "GET", "/cms/v2/users/me?context=edit", "").json(t); m["name"] != "Sub Scriber" || m["description"] != "Hi" {
		t.Errorf("after self update: %v", m)
	}
	c.want(c.rest(sub, "PATCH", fmt.Sprintf("/cms/v2/users/%d", uid(author)), `{"name":"X"}`), 403, "rest_cannot_edit")
	c.want(c.rest("", "PATCH", fmt.Sprintf("/cms/v2/users/%d", uid(author)), `{"name":"X"}`), 401, "rest_cannot_edit")
	c.want(c.rest(editor, "PATCH", fmt.Sprintf("/cms/v2/users/%d", uid(author)), `{"name":"X"}`), 403, "rest_cannot_edit")
	c.want(c.rest(sub, "PATCH", "/cms/v2/users/me", `{"roles":["administrator"]}`), 403, "rest_cannot_edit_roles")
	c.want(c.rest(sub, "PATCH", "/cms/v2/users/me", `{"username":"other"}`), 400, "rest_user_invalid_argument")
	c.want(c.rest(sub, "PATCH", "/cms/v2/users/me", `{"email":"editor1@cms.example"}`), 400, "rest_user_invalid_email")
	c.want(c.rest(admin, "PATCH", "/cms/v2/users/me", `{"roles":["editor"]}`), 403, "rest_user_invalid_role")
	c.want(c.rest(admin, "PUT", fmt.Sprintf("/cms/v2/users/%v", writer["id"]), `{"roles":["editor"],"first_name":"Wri"}`), 200, "")

	// Deleting: edit_users, force, and a valid reassign; posts move to the reassignee.
	del := fmt.Sprintf("/cms/v2/users/%d", uid(author))
	c.want(c.rest(admin, "DELETE", del+"?force=true", ""), 400, "rest_missing_callback_param")
	c.want(c.rest(editor, "DELETE", del+"?force=true&reassign=1", ""), 403, "rest_user_cannot_delete")
	c.want(c.rest("", "DELETE", del+"?force=true&reassign=1", ""), 401, "rest_user_cannot_delete")
	c.want(c.rest(admin, "DELETE", del+"?reassign=1", ""), 501, "rest_trash_not_supported")
	c.want(c.rest(admin, "DELETE", del+fmt.Sprintf("?force=true&reassign=%d", uid(author)), ""), 400, "rest_user_invalid_reassign")
	c.want(c.rest(admin, "DELETE", del+"?force=true&reassign=999", ""), 400, "rest_user_invalid_reassign")
	r = c.rest(admin, "DELETE", del+fmt.Sprintf("?force=true&reassign=%d", uid(editor)), "")
	c.want(r, 200, "")
	if m := r.json(t); m["deleted"] != true || m["previous"].(map[string]any)["username"] != "author1" {
		t.Errorf("delete answer %s", r.body)
	}
	if m := c.rest("", "GET", fmt.Sprintf("/cms/v2/posts/%d", post.ID), "").json(t); m["author"] != float64(uid(editor)) {
		t.Errorf("post author after reassign: %v", m["author"])
	}
	c.want(c.rest(author, "GET", "/cms/v2/users/me", ""), 401, "invalid_username")
	if got := logins(c.rest("", "GET", "/cms/v2/users", "")); got != "editor1" {
		t.Errorf("public authors after reassign: %q", got)
	}
}

func TestCMSApplicationPasswords(t *testing.T) {
	c := newCMSSite(t)
	admin, editor, sub := schema.RoleAdministrator, schema.RoleEditor, schema.RoleSubscriber
	mine := fmt.Sprintf("/cms/v2/users/%d/application-passwords", c.users[editor].ID)

	// Who may manage whose passwords: oneself, or edit_users.
	for _, tc := range []struct {
		role   schema.Role
		route  string
		status int
		code   string
	}{
		{"", mine, 401, "rest_cannot_list_application_passwords"},
		{"", "/cms/v2/users/me/application-passwords", 401, "rest_not_logged_in"},
		{sub, mine, 403, "rest_cannot_list_application_passwords"},
		{editor, mine, 200, ""},
		{admin, mine, 200, ""},
		{editor, "/cms/v2/users/999/application-passwords", 404, "rest_user_invalid_id"},
	} {
		c.want(c.rest(tc.role, "GET", tc.route, ""), tc.status, tc.code)
	}
	c.want(c.rest(sub, "POST", mine, `{"name":"x"}`), 403, "rest_cannot_create_application_passwords")
	c.want(c.rest(editor, "POST", mine, `{}`), 400, "rest_missing_callback_param")
	c.want(c.rest(editor, "POST", mine, `{"name":"x","app_id":"nope"}`), 400, "rest_invalid_param")
	c.want(c.rest(editor, "POST", mine, `{"name":"tests"}`), 409, "application_password_duplicate_name")

	appID := "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	r := c.rest(editor, "POST", "/cms/v2/users/me/application-passwords", `{"name":"Phone","app_id":"`+appID+`"}`)
	c.want(r, 201, "")
	created := r.json(t)
	pw, uuid := created["password"].(string), created["uuid"].(string)
	if len(pw) != 29 || created["app_id"] != appID || created["last_used"] != nil || !strings.HasSuffix(r.header.Get("Location"), "/application-passwords/"+uuid) {
		t.Fatalf("created %s", r.body)
	}
	c.auth["phone"] = basic("editor1@cms.example", pw) // a login or an e-mail address
	if m := c.rest("phone", "GET", "/cms/v2/users/me", "").json(t); m["id"] != float64(c.users[editor].ID) {
		t.Fatalf("the new password does not authenticate: %v", m)
	}
	// Introspection names the password the request used, for the current user only.
	if m := c.rest("phone", "GET", "/cms/v2/users/me/application-passwords/introspect", "").json(t); m["uuid"] != uuid || m["name"] != "Phone" {
		t.Errorf("introspect: %v", m)
	}
	c.want(c.rest("phone", "GET", fmt.Sprintf("/cms/v2/users/%d/application-passwords/introspect", c.users[admin].ID), ""), 401,
		"rest_cannot_introspect_app_password_for_non_authenticated_user")
	if m := c.rest(editor, "GET", mine+"/introspect", "").json(t); m["name"] != "tests" {
		t.Errorf("introspect of the other password: %v", m)
	}

	var list []map[string]any
	json.Unmarshal(c.rest(admin, "GET", mine, "").body, &list)
	if len(list) != 2 || list[1]["uuid"] != uuid || list[1]["password"] != nil {
		t.Errorf("list %v", list)
	}
	// Its use was recorded (once a day at most), with the client's address the edge resolved.
	if len(list) == 2 && (list[1]["last_used"] == nil || list[1]["last_ip"] != "127.0.0.1") {
		t.Errorf("last_used %v, last_ip %v after the password was used", list[1]["last_used"], list[1]["last_ip"])
	}
	c.want(c.rest(editor, "GET", mine+"/"+uuid, ""), 200, "")
	c.want(c.rest(sub, "GET", mine+"/"+uuid, ""), 403, "rest_cannot_read_application_password")
	c.want(c.rest(editor, "GET", mine+"/3f2504e0-4f89-41d3-9a0c-0305e82c3399", ""), 404, "rest_application_password_not_found")
	c.want(c.rest(editor, "GET", mine+"/not-a-uuid", ""), 404, "rest_application_password_not_found")
	c.want(c.rest(editor, "PATCH", mine+"/"+uuid, `{"name":"tests"}`), 409, "application_password_duplicate_name")
	if m := c.rest(editor, "PUT", mine+"/"+uuid, `{"name":"Tablet"}`).json(t); m["name"] != "Tablet" {
		t.Errorf("rename: %v", m)
	}

	// A revoked password is refused at once, through the edge.
	c.want(c.rest(sub, "DELETE", mine+"/"+uuid, ""), 403, "rest_cannot_delete_application_password")
	r = c.rest(editor, "DELETE", mine+"/"+uuid, "")
	c.want(r, 200, "")
	if m := r.json(t); m["deleted"] != true || m["previous"].(map[string]any)["uuid"] != uuid {
		t.Errorf("delete %s", r.body)
	}
	c.want(c.rest("phone", "GET", "/cms/v2/users/me", ""), 401, "incorrect_password")
	c.want(c.rest("phone", "GET", "/cms/v2/categories", ""), 401, "incorrect_password")
	c.want(c.rest(editor, "DELETE", mine+"/"+uuid, ""), 404, "rest_application_password_not_found")

	// Deleting them all (here by an administrator) leaves the user with none.
	r = c.rest(admin, "DELETE", mine, "")
	if m := r.json(t); m["deleted"] != true || m["count"] != 1.0 {
		t.Errorf("delete all: %s", r.body)
	}
	c.want(c.rest(editor, "GET", "/cms/v2/users/me", ""), 401, "incorrect_password")
}
