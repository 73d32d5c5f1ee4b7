package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"vitrine/schema"
)

// Annotations describe how an ability behaves (WordPress's meta.annotations). They choose the
// method of its run route: GET for a read-only ability, DELETE for a destructive and idempotent
// one, POST for any other.
type Annotations struct {
	// Readonly: the ability does not change anything.
	Readonly bool `json:"readonly"`
	// Destructive: the ability may destroy or overwrite; otherwise it only adds.
	Destructive bool `json:"destructive"`
	// Idempotent: running it again with the same input changes nothing more.
	Idempotent bool `json:"idempotent"`
}

// Method is the HTTP method of the run route for an ability with these annotations.
func (a Annotations) Method() string {
	switch {
	case a.Readonly:
		return http.MethodGet
	case a.Destructive && a.Idempotent:
		return http.MethodDelete
	}
	return http.MethodPost
}

// Category groups abilities (WordPress's ability categories).
type Category struct {
	Slug        string
	Label       string
	Description string
}

// Ability is one thing an agent may do, as WordPress's Abilities API describes it: a name
// (namespace/name), words for people, a category, JSON Schemas of its input and output, and how
// it behaves. It runs as its user, through the origin's own routes (Run), so it never does more
// than its user may; Cap is the capability it needs, checked before it runs for a clear answer.
type Ability struct {
	Name        string
	Label       string
	Description string
	Category    string
	// Input and Output are JSON Schema documents (the 2020-12 dialect; the keywords WordPress's
	// schemas use). An input schema with a "default" gives the input of a run that sends none.
	Input, Output string
	Annotations   Annotations
	Cap           schema.Capability
	// Run does the ability with an input that passed the input schema, and returns its output,
	// which must pass the output schema. Its errors are answered as they are (*schema.Error).
	Run func(r *Run, input json.RawMessage) (any, error)

	input, output       *jsonschema.Schema
	inputDoc, outputDoc json.RawMessage // compact, in the order written
	inputDefault        json.RawMessage // nil when the input schema has no default
	inputSchema         any             // the decoded input schema, which coercion walks
}

// Permitted reports whether user may run the ability.
func (a *Ability) Permitted(user *schema.User) bool { return user != nil && user.Role.Can(a.Cap) }

// Registry is the set of abilities and categories, fixed at construction, in registration
// order. It is safe for concurrent use.
type Registry struct {
	abilities  []*Ability
	byName     map[string]*Ability
	categories []Category
	bySlug     map[string]*Category
}

var (
	abilityName  = regexp.MustCompile(`^[a-z0-9-]+/[a-z0-9-]+$`)
	categorySlug = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
)

// NewRegistry compiles the abilities' schemas and returns their registry. A malformed name, an
// unknown category, a missing callback or a schema that does not compile is a programming
// error: NewRegistry returns it, and the origin panics with it at start-up.
func NewRegistry(categories []Category, abilities []*Ability) (*Registry, error) {
	r := &Registry{byName: map[string]*Ability{}, bySlug: map[string]*Category{}}
	for i := range categories {
		c := categories[i]
		if !categorySlug.MatchString(c.Slug) || c.Label == "" || c.Description == "" || r.bySlug[c.Slug] != nil {
			return nil, fmt.Errorf("agents: category %q: a slug of lowercase words and dashes, a label and a description, once", c.Slug)
		}
		r.categories = append(r.categories, c)
		r.bySlug[c.Slug] = &r.categories[len(r.categories)-1]
	}
	for _, a := range abilities {
		switch {
		case !abilityName.MatchString(a.Name):
			return nil, fmt.Errorf("agents: ability name %q is not namespace/name in lowercase letters, digits and dashes", a.Name)
		case r.byName[a.Name] != nil:
			return nil, fmt.Errorf("agents: ability %s registered twice", a.Name)
		case a.Label == "" || a.Description == "":
			return nil, fmt.Errorf("agents: ability %s needs a label and a description", a.Name)
		case r.bySlug[a.Category] == nil:
			return nil, fmt.Errorf("agents: ability %s: unknown category %q", a.Name, a.Category)
		case a.Run == nil || a.Cap == "":
			return nil, fmt.Errorf("agents: ability %s needs Run and Cap", a.Name)
		}
		var err error
		if a.input, a.inputDoc, a.inputSchema, err = compile(a.Name+"/input", a.Input); err != nil {
			return nil, err
		}
		if a.output, a.outputDoc, _, err = compile(a.Name+"/output", a.Output); err != nil {
			return nil, err
		}
		if m, ok := a.inputSchema.(map[string]any); ok {
			if d, ok := m["default"]; ok {
				a.inputDefault, _ = json.Marshal(d)
			}
		}
		r.abilities = append(r.abilities, a)
		r.byName[a.Name] = a
	}
	return r, nil
}

// compile parses and compiles one schema document.
func compile(loc, doc string) (*jsonschema.Schema, json.RawMessage, any, error) {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("agents: schema %s: %w", loc, err)
	}
	c := jsonschema.NewCompiler()
	url := "vitrine:///" + loc + ".json"
	if err := c.AddResource(url, v); err != nil {
		return nil, nil, nil, fmt.Errorf("agents: schema %s: %w", loc, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("agents: schema %s: %w", loc, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(doc)); err != nil {
		return nil, nil, nil, fmt.Errorf("agents: schema %s: %w", loc, err)
	}
	return sch, compact.Bytes(), v, nil
}

// Abilities returns every ability, in registration order.
func (r *Registry) Abilities() []*Ability { return r.abilities }

// Ability returns the ability named name, or nil.
func (r *Registry) Ability(name string) *Ability { return r.byName[name] }

// Categories returns every category, in registration order.
func (r *Registry) Categories() []Category { return r.categories }

// Category returns the category of slug, or nil.
func (r *Registry) Category(slug string) *Category { return r.bySlug[slug] }

// Names returns the ability names, in registration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.abilities))
	for i, a := range r.abilities {
		out[i] = a.Name
	}
	return out
}

// errInvalidInput is WordPress's ability_invalid_input: reason names the failing field.
func errInvalidInput(name, reason string) *schema.Error {
	return &schema.Error{Code: schema.CodeInvalid, CMSCode: "ability_invalid_input", Field: "input",
		Message: fmt.Sprintf("Ability %q has invalid input. Reason: %s", name, reason)}
}

// CheckInput checks a run's input (raw JSON; nil when the run sent none) against the ability's input
// schema, as WordPress's validate_input does after normalize_input: no input takes the schema's
// default. It returns the input the ability runs with, or ability_invalid_input (400) naming the
// first failing field the way WordPress names request parameters: "input[title]".
func (a *Ability) CheckInput(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		if a.inputDefault == nil {
			return nil, errInvalidInput(a.Name, "input is not of type object.")
		}
		raw = a.inputDefault
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errInvalidInput(a.Name, "input is not valid JSON.")
	}
	if err := a.input.Validate(v); err != nil {
		return nil, errInvalidInput(a.Name, reason(err))
	}
	return raw, nil
}

// CheckOutput checks an ability's output against its output schema (ability_invalid_output, a
// 500: an output that fails its schema is a bug).
func (a *Ability) CheckOutput(out []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err == nil {
		err = a.output.Validate(v)
	}
	if err != nil {
		return fmt.Errorf("agents: ability %s has invalid output: %s", a.Name, reason(err))
	}
	return nil
}

// reason words the first leaf failure of a validation as WordPress's rest_validate_value_from_schema
// does.
func reason(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "input is not valid."
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	param := paramName(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("%s is not of type %s.", param, strings.Join(k.Want, ","))
	case *kind.Required:
		return fmt.Sprintf("%s is a required property of %s.", k.Missing[0], param)
	case *kind.AdditionalProperties:
		return fmt.Sprintf("%s is not a valid property of Object.", paramName(append(slices.Clone(ve.InstanceLocation), k.Properties[0])))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return fmt.Sprintf("%s is not one of %s.", param, wordList(want))
	case *kind.Const:
		return fmt.Sprintf("%s is not %v.", param, k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d %s long.", param, k.Want, plural(k.Want, "character"))
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d %s long.", param, k.Want, plural(k.Want, "character"))
	case *kind.Pattern:
		return fmt.Sprintf("%s does not match pattern %s.", param, k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("%s must be greater than or equal to %s", param, ratString(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be less than or equal to %s", param, ratString(k.Want))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s", param, ratString(k.Want))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s", param, ratString(k.Want))
	case *kind.MultipleOf:
		return fmt.Sprintf("%s must be a multiple of %s.", param, ratString(k.Want))
	case *kind.MinItems:
		return fmt.Sprintf("%s must contain at least %d %s.", param, k.Want, plural(k.Want, "item"))
	case *kind.MaxItems:
		return fmt.Sprintf("%s must contain at most %d %s.", param, k.Want, plural(k.Want, "item"))
	case *kind.UniqueItems:
		return fmt.Sprintf("%s has duplicate items.", param)
	case *kind.MinProperties:
		return fmt.Sprintf("%s must contain at least %d %s.", param, k.Want, plural(k.Want, "property"))
	case *kind.MaxProperties:
		return fmt.Sprintf("%s must contain at most %d %s.", param, k.Want, plural(k.Want, "property"))
	}
	return fmt.Sprintf("%s is invalid.", param)
}

// paramName names a value of the input the way WordPress names nested request parameters.
func paramName(loc []string) string {
	var b strings.Builder
	b.WriteString("input")
	for _, s := range loc {
		b.WriteString("[" + s + "]")
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	if strings.HasSuffix(word, "y") {
		return word[:len(word)-1] + "ies"
	}
	return word + "s"
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// wordList joins words as WordPress's %l does: "a, b, and c", "a and b", "a".
func wordList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	case 2:
		return words[0] + " and " + words[1]
	}
	return strings.Join(words[:len(words)-1], ", ") + ", and " + words[len(words)-1]
}
