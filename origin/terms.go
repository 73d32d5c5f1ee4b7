package origin

import (
	"context"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"vitrine/edge/pipeline"
	"vitrine/origin/handler"
	"vitrine/origin/store"
	"vitrine/schema"
)

// termInput is the writable fields of a CMS term.
type termInput struct {
	ID          *handler.Int       `json:"id"`
	Name        *string            `json:"name"`
	Slug        *string            `json:"slug"`
	Description *string            `json:"description"`
	Parent      *handler.Int       `json:"parent"`
	Meta        *map[string]string `json:"meta"`
}

func (s *Server) termHandlers() {
	for _, base := range []string{"categories", "tags"} {
		tax := schema.TaxCategory
		if base == "tags" {
			tax = schema.TaxTag
		}
		s.bind("cms."+base+".create", func(ctx *fasthttp.RequestCtx, rq *handler.Request) { s.createTerm(ctx, rq, tax) })
		s.bind("cms."+base+".update", func(ctx *fasthttp.RequestCtx, rq *handler.Request) { s.updateTerm(ctx, rq, tax) })
		s.bind("cms."+base+".delete", func(ctx *fasthttp.RequestCtx, rq *handler.Request) { s.deleteTerm(ctx, rq, tax) })
	}
}

var termNotFound = &schema.Error{Code: schema.CodeNotFound, CMSCode: "rest_term_invalid", Message: "Term does not exist."}

// decodeTerm reads and validates a term body (types first, then permissions, as WordPress).
func decodeTerm(ctx *fasthttp.RequestCtx, tax string, creating bool) (*termInput, error) {
	var in termInput
	if err := handler.JSONBody(ctx, &in); err != nil {
		if creating && len(ctx.Request.Body()) == 0 {
			return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "name",
				Message: "Missing parameter(s): name", Params: map[string]string{"name": "name"}}
		}
		if !creating && len(ctx.Request.Body()) == 0 {
			return &in, nil
		}
		return nil, err
	}
	if creating && in.Name == nil {
		return nil, &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_missing_callback_param", Field: "name",
			Message: "Missing parameter(s): name", Params: map[string]string{"name": "name"}}
	}
	if in.Parent != nil && tax == schema.TaxTag {
		return nil, schema.InvalidParam("parent", "parent is not a valid property of Object.")
	}
	if in.Meta != nil && len(*in.Meta) > 0 {
		for k := range *in.Meta {
			return nil, schema.InvalidParam("meta", k+" is not a valid property of Object.")
		}
	}
	return &in, nil
}

// termView renders a term as a write answers it (edit context) with the count of its published
// posts from the origin's replica.
func (s *Server) termView(rq *handler.Request, t *schema.Term) *schema.TermView {
	count := rq.Tenant.Snapshot().TermCounts(t.Taxonomy)[t.ID]
	path := "/cms/v2/" + schema.TaxonomyBase(t.Taxonomy) + "/" + strconv.FormatInt(int64(t.ID), 10)
	allow := s.recordHints(context.Background(), rq, nil, t)(path) // allow.go
	return schema.RenderTerm(t, "edit", count, allow, schema.Site{Base: rq.Info.BaseURL})
}

// applyTerm applies the input to t and checks the names, slugs and parent the store must hold:
// a name unique under its parent (term_exists), an explicit slug unique in the taxonomy
// (duplicate_term_slug), a derived slug made unique with -2, -3…, and a parent of the taxonomy
// that is not the term itself or one of its descendants.
func applyTerm(ctx context.Context, rq *handler.Request, tx *store.Tx, in *termInput, t, old *schema.Term) error {
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
		if t.Name == "" {
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "empty_term_name", Message: "A name is required for this term."}
		}
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	if in.Parent != nil {
		t.Parent = schema.TermID(*in.Parent)
	}
	if t.Parent != 0 && (old == nil || old.Parent != t.Parent) {
		for id, hops := t.Parent, 0; id != 0; hops++ {
			p, err := tx.Term(ctx, rq.Info, id)
			if schema.ErrorCode(err) == schema.CodeNotFound || (err == nil && p.Taxonomy != t.Taxonomy) || hops > 1000 {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_term_invalid", Message: "Parent term does not exist.", Status: 400}
			}
			if err != nil {
				return err
			}
			if old != nil && p.ID == old.ID {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_term_invalid", Message: "Parent term does not exist.", Status: 400}
			}
			id = p.Parent
		}
	}
	if in.Name != nil && (old == nil || !strings.EqualFold(old.Name, t.Name) || old.Parent != t.Parent) {
		dup, err := tx.TermByName(ctx, rq.Info, t.Taxonomy, t.Name, t.Parent)
		if err != nil {
			return err
		}
		if dup != nil && (old == nil || dup.ID != old.ID) {
			msg := "A term with the name provided already exists in this taxonomy."
			if t.Taxonomy == schema.TaxCategory {
				msg = "A term with the name provided already exists with this parent."
			}
			return &schema.Error{Code: schema.CodeInvalid, CMSCode: "term_exists", Message: msg, Status: 400}
		}
	}
	var exclude schema.TermID
	if old != nil {
		exclude = old.ID
	}
	switch {
	case in.Slug != nil && schema.Slugify(*in.Slug) != "":
		slug := schema.Slugify(*in.Slug)
		if old == nil || slug != old.Slug {
			taken, err := tx.TermSlugTaken(ctx, rq.Info, t.Taxonomy, slug, exclude)
			if err != nil {
				return err
			}
			if taken {
				return &schema.Error{Code: schema.CodeInvalid, CMSCode: "duplicate_term_slug", Status: 400,
					Message: "The slug \u201c" + slug + "\u201d is already in use by another term."}
			}
		}
		t.Slug = slug
	case old == nil:
		base := schema.Slugify(t.Name)
		if base == "" {
			base = "term"
		}
		slug, err := tx.UniqueTermSlug(ctx, rq.Info, t.Taxonomy, base, exclude)
		if err != nil {
			return err
		}
		t.Slug = slug
	}
	return nil
}

func (s *Server) createTerm(ctx *fasthttp.RequestCtx, rq *handler.Request, tax string) {
	in, err := decodeTerm(ctx, tax, true)
	if err == nil && !can(rq, schema.CapManageCategories) {
		err = cannot(rq, "rest_cannot_create", "Sorry, you are not allowed to create terms in this taxonomy.")
	}
	if err == nil && in.ID != nil {
		err = &schema.Error{Code: schema.CodeInvalid, CMSCode: "rest_term_exists", Message: "Cannot create existing term."}
	}
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var term schema.Term
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		term = schema.Term{Taxonomy: tax}
		if err := applyTerm(ctx, rq, tx, in, &term, nil); err != nil {
			return err
		}
		return tx.CreateTerm(ctx, rq.Info, &term)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation,
		schema.Site{Base: rq.Info.BaseURL}.RestURL("/cms/v2/"+schema.TaxonomyBase(tax)+"/"+strconv.FormatInt(int64(term.ID), 10)))
	s.Written(ctx, rq, commits, fasthttp.StatusCreated, s.termView(rq, &term))
}

func loadTerm(ctx *fasthttp.RequestCtx, rq *handler.Request, tx *store.Tx, tax string) (*schema.Term, error) {
	id, err := strconv.ParseInt(pipeline.Param(ctx, "id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, termNotFound
	}
	t, err := tx.Term(ctx, rq.Info, schema.TermID(id))
	if schema.ErrorCode(err) == schema.CodeNotFound || (err == nil && t.Taxonomy != tax) {
		return nil, termNotFound
	}
	return t, err
}

func (s *Server) updateTerm(ctx *fasthttp.RequestCtx, rq *handler.Request, tax string) {
	in, err := decodeTerm(ctx, tax, false)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var term schema.Term
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadTerm(ctx, rq, tx, tax)
		if err != nil {
			return err
		}
		if !can(rq, schema.CapManageCategories) {
			return cannot(rq, "rest_cannot_update", "Sorry, you are not allowed to edit this term.")
		}
		term = *old
		if err := applyTerm(ctx, rq, tx, in, &term, old); err != nil {
			return err
		}
		if term == *old {
			return nil
		}
		return tx.UpdateTerm(ctx, rq.Info, old, &term)
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, s.termView(rq, &term))
}

func (s *Server) deleteTerm(ctx *fasthttp.RequestCtx, rq *handler.Request, tax string) {
	args, err := requestArgs(ctx, rq.Route)
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	var out any
	commits, err := s.db.WriteTx(ctx, func(tx *store.Tx) error {
		old, err := loadTerm(ctx, rq, tx, tax)
		if err != nil {
			return err
		}
		if !can(rq, schema.CapManageCategories) {
			return cannot(rq, "rest_cannot_delete", "Sorry, you are not allowed to delete this term.")
		}
		if !args.Bool("force") {
			return &schema.Error{Code: schema.CodeNotAllowed, CMSCode: "rest_trash_not_supported", Status: 501,
				Message: "Terms do not support trashing. Set 'force' to true to delete."}
		}
		prev := s.termView(rq, old)
		if err := tx.DeleteTerm(ctx, rq.Info, old); err != nil {
			return err
		}
		out = map[string]any{"deleted": true, "previous": prev}
		return nil
	})
	if err != nil {
		s.Fail(ctx, rq, err)
		return
	}
	s.Written(ctx, rq, commits, 200, out)
}
