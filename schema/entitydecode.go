package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DecodeEntity decodes a replicated entity's JSON into v, a pointer to a zero value, with exactly
// the result (value and error) of json.Unmarshal(data, v). The hot kinds of the replica's apply
// path (*Product, *Variant, *Category, *Currency, *Post) are decoded without reflection by a
// scanner that accepts the form json.Marshal writes and anything close to it; whatever it does
// not handle (a key in another case or unknown to the type, a repeated key, a value of an
// unexpected type, a lone surrogate or invalid UTF-8 in a string, a malformed document…) is
// handed whole to encoding/json, on a zeroed v, so the two never differ. Other types go to
// encoding/json directly.
//
// The strings of a fast-decoded entity share one allocation (they live and die with the entity),
// and enumerated values (statuses, availabilities) are the package's constants.
func DecodeEntity(data []byte, v any) error { return DecodeEntityInterned(data, v, nil) }

// DecodeEntityInterned decodes as DecodeEntity does, with the same result, except that a
// fast-decoded product's or variant's price map and a variant's option list are in's shared
// copies (see Interner): values equal to what DecodeEntity returns, which must never be modified.
// A nil in decodes as DecodeEntity.
func DecodeEntityInterned(data []byte, v any, in *Interner) error {
	var ok bool
	switch e := v.(type) {
	case *Product:
		if ok = decodeFast(data, in, e, decodeProduct); !ok {
			*e = Product{}
		}
	case *Variant:
		if ok = decodeFast(data, in, e, decodeVariant); !ok {
			*e = Variant{}
		}
	case *Category:
		if ok = decodeFast(data, nil, e, decodeCategory); !ok {
			*e = Category{}
		}
	case *Currency:
		if ok = decodeFast(data, nil, e, decodeCurrency); !ok {
			*e = Currency{}
		}
	case *Post:
		if ok = decodeFast(data, nil, e, decodePost); !ok {
			*e = Post{}
		}
	}
	if ok {
		return nil
	}
	return json.Unmarshal(data, v)
}

// decodeFast runs an entity's decoder over the whole of data; the entity's decoder compacts its
// strings on success.
func decodeFast[T any](data []byte, in *Interner, v *T, f func(*decoder, *T) bool) bool {
	d := decoder{b: data, in: in}
	if !f(&d, v) {
		return false
	}
	d.ws()
	return d.i == len(d.b) // else trailing data: encoding/json's error
}

// decoder scans one JSON document. Every method returns false on input it does not handle; the
// caller then gives up and lets encoding/json decode the document.
type decoder struct {
	b []byte
	i int
	// scratch holds the unescaped strings of the document (at most len(b) bytes in all), until
	// compact copies them with the others.
	scratch []byte
	// in, when set, supplies shared price maps and option lists (DecodeEntityInterned).
	in *Interner
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, or 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) lit(w string) bool {
	if len(d.b)-d.i >= len(w) && string(d.b[d.i:d.i+len(w)]) == w {
		d.i += len(w)
		return true
	}
	return false
}

// null consumes a null literal if one is next.
func (d *decoder) null() bool {
	return d.peek() == 'n' && d.lit("null")
}

// object scans an object, calling field for each key with the decoder placed before the value.
// A key with escapes is not handled. The key aliases the input.
func (d *decoder) object(field func(key string) bool) bool {
	if d.peek() != '{' {
		return false
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		if d.peek() != '"' {
			return false
		}
		start := d.i + 1
		j := start
		ascii := true
		for j < len(d.b) && d.b[j] != '"' && d.b[j] != '\\' && d.b[j] >= 0x20 {
			ascii = ascii && d.b[j] < 0x80
			j++
		}
		if j >= len(d.b) || d.b[j] != '"' || !ascii && !utf8.Valid(d.b[start:j]) {
			return false // encoding/json would replace invalid UTF-8 in a map key
		}
		key := unsafe.String(unsafe.SliceData(d.b[start:]), j-start)
		d.i = j + 1
		if d.peek() != ':' {
			return false
		}
		d.i++
		if !field(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// array scans an array, calling elem with the decoder placed before each element. It reports
// whether the array was empty through n.
func (d *decoder) array(elem func() bool) (n int, ok bool) {
	if d.peek() != '[' {
		return 0, false
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return 0, true
	}
	for {
		if !elem() {
			return 0, false
		}
		n++
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return n, true
		default:
			return 0, false
		}
	}
}

// once records a field's bit in seen; false for a field given twice.
func once(seen *uint64, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}

// rawString scans a string and returns its value, which aliases d.b when it has no escapes
// (alias true). A control character, a lone surrogate or invalid UTF-8 is not handled.
func (d *decoder) rawString() (s string, alias, ok bool) {
	if d.peek() != '"' {
		return "", false, false
	}
	start := d.i + 1
	ascii := true
	j := start
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			return d.escaped(start)
		}
		if c < 0x20 {
			return "", false, false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if j >= len(d.b) {
		return "", false, false
	}
	raw := d.b[start:j]
	if !ascii && !utf8.Valid(raw) {
		return "", false, false
	}
	d.i = j + 1
	return unsafe.String(unsafe.SliceData(raw), len(raw)), true, true
}

func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// escaped decodes a string with escapes from its first byte at start, into d.scratch.
func (d *decoder) escaped(start int) (string, bool, bool) {
	if d.scratch == nil {
		d.scratch = make([]byte, 0, len(d.b))
	}
	at := len(d.scratch)
	buf := d.scratch[at:]
	raw := false
	for j := start; j < len(d.b); {
		c := d.b[j]
		switch {
		case c == '"':
			if raw && !utf8.Valid(buf) {
				return "", false, false
			}
			d.i = j + 1
			if len(buf) <= cap(d.scratch)-at { // always: unescaping never lengthens a string
				d.scratch = d.scratch[:at+len(buf)]
			}
			return unsafe.String(unsafe.SliceData(buf), len(buf)), false, true
		case c < 0x20:
			return "", false, false
		case c != '\\':
			if c >= 0x80 {
				raw = true
			}
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(d.b) {
			return "", false, false
		}
		switch e := d.b[j+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r := hex4(d.b[j+2:])
			if r < 0 {
				return "", false, false
			}
			if utf16.IsSurrogate(r) {
				// Only a valid pair is handled; encoding/json turns a lone half into U+FFFD.
				if j+7 >= len(d.b) || d.b[j+6] != '\\' || d.b[j+7] != 'u' {
					return "", false, false
				}
				r2 := hex4(d.b[j+8:])
				dec := utf16.DecodeRune(r, r2)
				if r2 < 0 || dec == utf8.RuneError {
					return "", false, false
				}
				buf = utf8.AppendRune(buf, dec)
				j += 12
				continue
			}
			buf = utf8.AppendRune(buf, r)
			j += 6
			continue
		default:
			return "", false, false
		}
		j += 2
	}
	return "", false, false
}

// str decodes a string field into *dst (null leaves it empty). The string may alias the input
// until the entity's strings are compacted.
func (d *decoder) str(dst *string) bool {
	if d.null() {
		return true
	}
	s, _, ok := d.rawString()
	*dst = s
	return ok
}

// ownedString decodes a string that must not alias the input or the scratch buffer (a map
// value).
func (d *decoder) ownedString() (string, bool) {
	s, _, ok := d.rawString()
	return strings.Clone(s), ok
}

// enum decodes a string field whose usual values are consts: a match takes the constant.
func (d *decoder) enum(dst *string, consts ...string) bool {
	if d.null() {
		return true
	}
	s, _, ok := d.rawString()
	for _, c := range consts {
		if s == c {
			s = c
			break
		}
	}
	*dst = s
	return ok
}

// compact copies the entity's strings that alias the document or the scratch buffer into one
// allocation, so that the entity keeps nothing of its JSON and no slack.
func (d *decoder) compact(ps []*string) {
	within := func(s string, b []byte) bool {
		if len(s) == 0 || cap(b) == 0 {
			return false
		}
		p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b[:1])))
		return p >= lo && p < lo+uintptr(cap(b))
	}
	aliases := func(s string) bool { return within(s, d.b) || within(s, d.scratch) }
	n := 0
	for _, p := range ps {
		if aliases(*p) {
			n += len(*p)
		}
	}
	if n == 0 {
		return
	}
	block := make([]byte, 0, n)
	for _, p := range ps {
		if aliases(*p) {
			off := len(block)
			block = append(block, *p...)
			*p = unsafe.String(unsafe.SliceData(block[off:]), len(*p))
		}
	}
}

// int64 decodes an integer; a fraction, an exponent or an overflow is not handled (encoding/json
// refuses them for an integer field).
func (d *decoder) int64(dst *int64) bool {
	if d.null() {
		return true
	}
	if d.i >= len(d.b) {
		return false
	}
	neg := d.b[d.i] == '-'
	j := d.i
	if neg {
		j++
	}
	if j >= len(d.b) || d.b[j] < '0' || d.b[j] > '9' {
		return false
	}
	var n uint64
	digits := j
	if d.b[j] == '0' {
		j++
	} else {
		for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
			if n > (1<<63)/10 {
				return false
			}
			n = n*10 + uint64(d.b[j]-'0')
			j++
		}
	}
	if j-digits > 19 {
		return false
	}
	if j < len(d.b) && (d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E' || d.b[j] >= '0' && d.b[j] <= '9') {
		return false
	}
	switch {
	case neg && n <= 1<<63:
		*dst = int64(-n)
	case !neg && n < 1<<63:
		*dst = int64(n)
	default:
		return false
	}
	d.i = j
	return true
}

// uint64 decodes an unsigned integer as encoding/json does into a uint64 (null leaves dst as it
// is); a sign, a fraction, an exponent or a value past the type's range is not handled.
func (d *decoder) uint64(dst *uint64) bool {
	if d.null() {
		return true
	}
	j := d.i
	if j >= len(d.b) || d.b[j] < '0' || d.b[j] > '9' {
		return false
	}
	var n uint64
	if d.b[j] == '0' {
		j++
	} else {
		for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
			v := uint64(d.b[j] - '0')
			if n > (^uint64(0)-v)/10 {
				return false
			}
			n = n*10 + v
			j++
		}
	}
	if j < len(d.b) && (d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E' || d.b[j] >= '0' && d.b[j] <= '9') {
		return false
	}
	*dst, d.i = n, j
	return true
}

func (d *decoder) int(dst *int) bool {
	var n int64
	if !d.int64(&n) || int64(int(n)) != n {
		return false
	}
	*dst = int(n)
	return true
}

func decodeInt[T ~int64](d *decoder, dst *T) bool {
	n := int64(*dst)
	if !d.int64(&n) {
		return false
	}
	*dst = T(n)
	return true
}

func (d *decoder) bool(dst *bool) bool {
	switch d.peek() {
	case 't':
		*dst = true
		return d.lit("true")
	case 'f':
		*dst = false
		return d.lit("false")
	case 'n':
		return d.lit("null")
	}
	return false
}

// time decodes a time as encoding/json does: time.Time's UnmarshalJSON on the literal. A string
// with escapes or bytes outside printable ASCII is not handled.
func (d *decoder) time(dst *time.Time) bool {
	if d.null() {
		return true
	}
	if d.peek() != '"' {
		return false
	}
	j := d.i + 1
	for j < len(d.b) && d.b[j] != '"' {
		if c := d.b[j]; c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
		j++
	}
	if j >= len(d.b) {
		return false
	}
	if err := dst.UnmarshalJSON(d.b[d.i : j+1]); err != nil {
		return false
	}
	d.i = j + 1
	return true
}

// ids decodes an array of integers into an exactly sized slice; null leaves it nil, [] makes it
// empty.
func decodeIDs[T ~int64](d *decoder, dst *[]T) bool {
	if d.null() {
		return true
	}
	var buf [16]T
	out := buf[:0]
	if _, ok := d.array(func() bool {
		var v int64
		if d.peek() == 'n' {
			return false
		}
		if !d.int64(&v) {
			return false
		}
		out = append(out, T(v))
		return true
	}); !ok {
		return false
	}
	*dst = append(make([]T, 0, len(out)), out...)
	return true
}

// prices decodes a Prices map: null leaves it nil, {} makes it empty; a later key wins, as with
// encoding/json. With an interner, a map of at most maxSharedPrices codes is its shared copy.
func (d *decoder) prices(dst *Prices) bool {
	if d.null() {
		return true
	}
	var buf [8]pricePair
	pairs := buf[:0] // sorted by code, while the map may still be shared
	var m Prices     // the map itself, once it will not be
	if d.in == nil {
		m = Prices{}
	}
	if !d.object(func(key string) bool {
		var v int64
		if d.peek() == 'n' || !d.int64(&v) {
			return false
		}
		if m != nil {
			m[currencyKey(key)] = v
			return true
		}
		i := 0
		for i < len(pairs) && pairs[i].code < key {
			i++
		}
		if i < len(pairs) && pairs[i].code == key {
			pairs[i].amount = v
			return true
		}
		pairs = slices.Insert(pairs, i, pricePair{code: key, amount: v})
		if len(pairs) > maxSharedPrices {
			m = make(Prices, len(pairs))
			for _, p := range pairs {
				m[currencyKey(p.code)] = p.amount
			}
		}
		return true
	}) {
		return false
	}
	if m == nil {
		m = d.in.sharedPrices(pairs)
	}
	*dst = m
	return true
}

// maxSharedPrices is the most codes a shared price map has: a larger one (never seen in a real
// catalog) is its entity's own, so that keeping the codes sorted stays cheap.
const maxSharedPrices = 16

// currencyKey returns the currency code key as an owned string, common codes as constants.
func currencyKey(k string) string {
	switch k {
	case "USD":
		return "USD"
	case "EUR":
		return "EUR"
	case "GBP":
		return "GBP"
	case "JPY":
		return "JPY"
	case "CAD":
		return "CAD"
	case "AUD":
		return "AUD"
	case "CHF":
		return "CHF"
	}
	return string([]byte(k))
}

// stringMap decodes a map[string]string: null leaves it nil, {} makes it empty. Keys with
// escapes and null values are not handled.
func (d *decoder) stringMap(dst *map[string]string) bool {
	if d.null() {
		return true
	}
	m := map[string]string{}
	if !d.object(func(key string) bool {
		if d.peek() != '"' {
			return false
		}
		v, ok := d.ownedString()
		if !ok {
			return false
		}
		m[string([]byte(key))] = v
		return true
	}) {
		return false
	}
	*dst = m
	return true
}

// skipObject scans over one object without decoding it and returns its bytes; their validity is
// left to the caller.
func (d *decoder) skipObject() ([]byte, bool) {
	if d.peek() != '{' {
		return nil, false
	}
	start, depth := d.i, 0
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case '"':
			for d.i++; d.i < len(d.b) && d.b[d.i] != '"'; d.i++ {
				if d.b[d.i] == '\\' {
					d.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				d.i++
				return d.b[start:d.i], true
			}
		}
		d.i++
	}
	return nil, false
}

// nested decodes a pointer-to-struct field with encoding/json (its own document: the same
// result as in place, since the pointer starts nil).
func nested[T any](d *decoder, dst **T) bool {
	if d.null() {
		return true
	}
	raw, ok := d.skipObject()
	if !ok {
		return false
	}
	return json.Unmarshal(raw, dst) == nil
}

// decodeImages and decodeOptions decode slices of small structs into exactly sized slices.
func decodeImages(d *decoder, dst *[]Image) bool {
	if d.null() {
		return true
	}
	var buf [8]Image
	out := buf[:0]
	if _, ok := d.array(func() bool {
		var im Image
		var seen uint64
		if !d.object(func(key string) bool {
			switch key {
			case "url":
				return once(&seen, 0) && d.str(&im.URL)
			case "alt":
				return once(&seen, 1) && d.str(&im.Alt)
			case "width":
				return once(&seen, 2) && d.int(&im.Width)
			case "height":
				return once(&seen, 3) && d.int(&im.Height)
			}
			return false
		}) {
			return false
		}
		out = append(out, im)
		return true
	}); !ok {
		return false
	}
	*dst = append(make([]Image, 0, len(out)), out...)
	return true
}

func decodeOptions(d *decoder, dst *[]Option) bool {
	if d.null() {
		return true
	}
	var buf [8]Option
	out := buf[:0]
	if _, ok := d.array(func() bool {
		var o Option
		var seen uint64
		if !d.object(func(key string) bool {
			switch key {
			case "name":
				return once(&seen, 0) && d.str(&o.Name)
			case "value":
				return once(&seen, 1) && d.str(&o.Value)
			}
			return false
		}) {
			return false
		}
		out = append(out, o)
		return true
	}); !ok {
		return false
	}
	if d.in != nil && len(out) > 0 {
		*dst = d.in.sharedOptions(out)
		return true
	}
	*dst = append(make([]Option, 0, len(out)), out...)
	return true
}

func decodeProduct(d *decoder, p *Product) bool {
	var seen uint64
	if !d.object(func(key string) bool {
		switch key {
		case "id":
			return once(&seen, 0) && decodeInt(d, &p.ID)
		case "slug":
			return once(&seen, 1) && d.str(&p.Slug)
		case "title":
			return once(&seen, 2) && d.str(&p.Title)
		case "description":
			return once(&seen, 3) && d.str(&p.Description)
		case "status":
			return once(&seen, 4) && d.enum((*string)(&p.Status), string(ProductActive), string(ProductDraft), string(ProductArchived))
		case "featured":
			return once(&seen, 5) && d.bool(&p.Featured)
		case "prices":
			return once(&seen, 6) && d.prices(&p.Prices)
		case "images":
			return once(&seen, 7) && decodeImages(d, &p.Images)
		case "category_ids":
			return once(&seen, 8) && decodeIDs(d, &p.CategoryIDs)
		case "created_at":
			return once(&seen, 9) && d.time(&p.CreatedAt)
		case "updated_at":
			return once(&seen, 10) && d.time(&p.UpdatedAt)
		case "version":
			return once(&seen, 11) && d.int64(&p.Version)
		}
		return false
	}) {
		return false
	}
	var buf [32]*string
	ps := append(buf[:0], &p.Slug, &p.Title, &p.Description, (*string)(&p.Status))
	for k := range p.Images {
		ps = append(ps, &p.Images[k].URL, &p.Images[k].Alt)
	}
	d.compact(ps)
	return true
}

func decodeVariant(d *decoder, v *Variant) bool {
	var seen uint64
	if !d.object(func(key string) bool {
		switch key {
		case "id":
			return once(&seen, 0) && decodeInt(d, &v.ID)
		case "product_id":
			return once(&seen, 1) && decodeInt(d, &v.ProductID)
		case "sku":
			return once(&seen, 2) && d.str(&v.SKU)
		case "title":
			return once(&seen, 3) && d.str(&v.Title)
		case "options":
			return once(&seen, 4) && decodeOptions(d, &v.Options)
		case "prices":
			return once(&seen, 5) && d.prices(&v.Prices)
		case "availability":
			return once(&seen, 6) && d.enum((*string)(&v.Availability), string(InStock), string(LowStock), string(OutOfStock))
		case "position":
			return once(&seen, 7) && d.int(&v.Position)
		case "created_at":
			return once(&seen, 8) && d.time(&v.CreatedAt)
		case "updated_at":
			return once(&seen, 9) && d.time(&v.UpdatedAt)
		case "version":
			return once(&seen, 10) && d.int64(&v.Version)
		}
		return false
	}) {
		return false
	}
	var buf [32]*string
	ps := append(buf[:0], &v.SKU, &v.Title, (*string)(&v.Availability))
	if d.in == nil { // shared options own their strings, and are never written
		for k := range v.Options {
			ps = append(ps, &v.Options[k].Name, &v.Options[k].Value)
		}
	}
	d.compact(ps)
	return true
}

func decodeCategory(d *decoder, c *Category) bool {
	var seen uint64
	if !d.object(func(key string) bool {
		switch key {
		case "id":
			return once(&seen, 0) && decodeInt(d, &c.ID)
		case "parent_id":
			return once(&seen, 1) && decodeInt(d, &c.ParentID)
		case "slug":
			return once(&seen, 2) && d.str(&c.Slug)
		case "name":
			return once(&seen, 3) && d.str(&c.Name)
		case "description":
			return once(&seen, 4) && d.str(&c.Description)
		case "position":
			return once(&seen, 5) && d.int(&c.Position)
		case "created_at":
			return once(&seen, 6) && d.time(&c.CreatedAt)
		case "updated_at":
			return once(&seen, 7) && d.time(&c.UpdatedAt)
		case "version":
			return once(&seen, 8) && d.int64(&c.Version)
		}
		return false
	}) {
		return false
	}
	d.compact([]*string{&c.Slug, &c.Name, &c.Description})
	return true
}

func decodeCurrency(d *decoder, c *Currency) bool {
	var seen uint64
	if !d.object(func(key string) bool {
		switch key {
		case "code":
			return once(&seen, 0) && d.str(&c.Code)
		case "name":
			return once(&seen, 1) && d.str(&c.Name)
		case "symbol":
			return once(&seen, 2) && d.str(&c.Symbol)
		case "exponent":
			return once(&seen, 3) && d.int(&c.Exponent)
		case "rate":
			return once(&seen, 4) && d.str(&c.Rate)
		case "created_at":
			return once(&seen, 5) && d.time(&c.CreatedAt)
		case "updated_at":
			return once(&seen, 6) && d.time(&c.UpdatedAt)
		case "version":
			return once(&seen, 7) && d.int64(&c.Version)
		}
		return false
	}) {
		return false
	}
	d.compact([]*string{&c.Code, &c.Name, &c.Symbol, &c.Rate})
	return true
}

func decodePost(d *decoder, p *Post) bool {
	var seen uint64
	if !d.object(func(key string) bool {
		switch key {
		case "id":
			return once(&seen, 0) && decodeInt(d, &p.ID)
		case "type":
			return once(&seen, 1) && d.enum(&p.Type, "post", "page", TypeAttachment)
		case "slug":
			return once(&seen, 2) && d.str(&p.Slug)
		case "status":
			return once(&seen, 3) && d.enum((*string)(&p.Status), string(StatusPublish), string(StatusDraft), string(StatusInherit), string(StatusPrivate), string(StatusFuture), string(StatusPending), string(StatusTrash))
		case "password":
			return once(&seen, 4) && d.str(&p.Password)
		case "title":
			return once(&seen, 5) && d.str(&p.Title)
		case "content":
			return once(&seen, 6) && d.str(&p.Content)
		case "excerpt":
			return once(&seen, 7) && d.str(&p.Excerpt)
		case "author":
			return once(&seen, 8) && decodeInt(d, &p.Author)
		case "featured_media":
			return once(&seen, 9) && decodeInt(d, &p.FeaturedMedia)
		case "comment_status":
			return once(&seen, 10) && d.enum(&p.CommentStatus, "open", "closed")
		case "ping_status":
			return once(&seen, 11) && d.enum(&p.PingStatus, "open", "closed")
		case "format":
			return once(&seen, 12) && d.enum(&p.Format, "standard")
		case "meta":
			return once(&seen, 13) && d.stringMap(&p.Meta)
		case "sticky":
			return once(&seen, 14) && d.bool(&p.Sticky)
		case "template":
			return once(&seen, 15) && d.str(&p.Template)
		case "categories":
			return once(&seen, 16) && decodeIDs(d, &p.Categories)
		case "tags":
			return once(&seen, 17) && decodeIDs(d, &p.Tags)
		case "parent":
			return once(&seen, 18) && decodeInt(d, &p.Parent)
		case "menu_order":
			return once(&seen, 19) && d.int(&p.MenuOrder)
		case "pattern_categories":
			return once(&seen, 20) && decodeIDs(d, &p.PatternCategories)
		case "menu_item":
			return once(&seen, 21) && nested(d, &p.MenuItem)
		case "attachment":
			return once(&seen, 22) && nested(d, &p.Attachment)
		case "design":
			return once(&seen, 23) && nested(d, &p.Design)
		case "embeds":
			return once(&seen, 24) && d.stringMap(&p.Embeds)
		case "date_gmt":
			return once(&seen, 25) && d.time(&p.DateGMT)
		case "date_floating":
			return once(&seen, 26) && d.bool(&p.DateFloating)
		case "modified_gmt":
			return once(&seen, 27) && d.time(&p.ModifiedGMT)
		case "protected":
			return once(&seen, 28) && d.bool(&p.Protected)
		case "revision_count":
			return once(&seen, 29) && d.int(&p.RevisionCount)
		case "latest_revision":
			return once(&seen, 30) && decodeInt(d, &p.LatestRevision)
		case "version":
			return once(&seen, 31) && d.int64(&p.Version)
		}
		return false
	}) {
		return false
	}
	d.compact([]*string{&p.Type, &p.Slug, (*string)(&p.Status), &p.Password, &p.Title, &p.Content,
		&p.Excerpt, &p.CommentStatus, &p.PingStatus, &p.Format, &p.Template})
	return true
}

// decodeChangeFast parses a change's envelope as decodeChangeJSON would, for the form the relay
// writes: exact keys, each once, a head's digest included (a head follows every publish, so a
// reflective decode of it cost every follower as much as the change itself), data an object. It
// reports false for anything else. Data is copied out of b.
func decodeChangeFast(b []byte) (*Change, bool) {
	d := decoder{b: b}
	c := &Change{}
	var seen uint64
	ok := d.object(func(key string) bool {
		switch key {
		case "schema":
			return once(&seen, 0) && d.peek() != 'n' && d.int(&c.Schema)
		case "log":
			return once(&seen, 1) && d.peek() == '"' && d.ownedStr(&c.Log)
		case "kind":
			return once(&seen, 2) && d.ownedEnum((*string)(&c.Kind), string(KindProduct), string(KindVariant),
				string(KindPost), string(KindHead), string(KindCategory), string(KindCurrency), string(KindTenant))
		case "id":
			return once(&seen, 3) && d.peek() == '"' && d.ownedStr(&c.ID)
		case "vis":
			return once(&seen, 4) && d.ownedEnum((*string)(&c.Vis), string(Pub), string(Priv))
		case "version":
			return once(&seen, 5) && d.peek() != 'n' && d.int64(&c.Version)
		case "txn_first":
			return once(&seen, 6) && d.peek() != 'n' && d.int64(&c.TxnFirst)
		case "txn_last":
			return once(&seen, 7) && d.peek() != 'n' && d.int64(&c.TxnLast)
		case "deleted":
			return once(&seen, 8) && d.peek() != 'n' && d.bool(&c.Deleted)
		case "digest":
			if !once(&seen, 10) {
				return false
			}
			if d.null() {
				return true
			}
			c.Digest = &LogDigest{}
			return d.logDigest(c.Digest)
		case "data":
			if !once(&seen, 9) {
				return false
			}
			raw, ok := d.skipObject()
			if !ok || !validJSON(raw) && !json.Valid(raw) {
				return false
			}
			c.Data = append(json.RawMessage(nil), raw...)
			return true
		}
		return false
	})
	if !ok {
		return nil, false
	}
	d.ws()
	return c, d.i == len(d.b)
}

// logDigest decodes a head's digest object: exact keys, each once.
func (d *decoder) logDigest(g *LogDigest) bool {
	var seen uint64
	return d.object(func(key string) bool {
		switch key {
		case "pub_count":
			return once(&seen, 0) && d.int64(&g.PubCount)
		case "pub_sum":
			return once(&seen, 1) && d.uint64(&g.PubSum)
		case "priv_count":
			return once(&seen, 2) && d.int64(&g.PrivCount)
		case "priv_sum":
			return once(&seen, 3) && d.uint64(&g.PrivSum)
		}
		return false
	})
}

// ownedEnum decodes a string that does not alias the input: one of consts, or a copy.
func (d *decoder) ownedEnum(dst *string, consts ...string) bool {
	if d.peek() != '"' {
		return false
	}
	s, _, ok := d.rawString()
	for _, c := range consts {
		if s == c {
			*dst = c
			return ok
		}
	}
	*dst = strings.Clone(s)
	return ok
}

// ownedStr decodes a string that does not alias the input.
func (d *decoder) ownedStr(dst *string) bool {
	s, ok := d.ownedString()
	*dst = s
	return ok
}

// validJSON reports whether b is one JSON value with optional white space around it, as
// json.Valid does, without its per-byte state machine. It may report false for valid input it
// does not handle (nesting deeper than 512): callers confirm a false with json.Valid.
func validJSON(b []byte) bool {
	d := decoder{b: b}
	if !d.validValue(0) {
		return false
	}
	d.ws()
	return d.i == len(b)
}

func (d *decoder) validValue(depth int) bool {
	if depth > 512 {
		return false
	}
	switch d.peek() {
	case '{':
		d.i++
		if d.peek() == '}' {
			d.i++
			return true
		}
		for {
			if d.peek() != '"' || !d.validString() || d.peek() != ':' {
				return false
			}
			d.i++
			if !d.validValue(depth + 1) {
				return false
			}
			switch d.peek() {
			case ',':
				d.i++
			case '}':
				d.i++
				return true
			default:
				return false
			}
		}
	case '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			return true
		}
		for {
			if !d.validValue(depth + 1) {
				return false
			}
			switch d.peek() {
			case ',':
				d.i++
			case ']':
				d.i++
				return true
			default:
				return false
			}
		}
	case '"':
		return d.validString()
	case 't':
		return d.lit("true")
	case 'f':
		return d.lit("false")
	case 'n':
		return d.lit("null")
	}
	return d.validNumber()
}

// validString scans a string: no control characters, only JSON's escapes. Bytes above 0x7f are
// not checked (encoding/json accepts invalid UTF-8 in a valid document).
func (d *decoder) validString() bool {
	d.i++
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return false
			}
			switch d.b[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if hex4(d.b[d.i+2:]) < 0 {
					return false
				}
				d.i += 6
			default:
				return false
			}
		default:
			d.i++
		}
	}
	return false
}

// validNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) validNumber() bool {
	digits := func() bool {
		start := d.i
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
		}
		return d.i > start
	}
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i >= len(d.b):
		return false
	case d.b[d.i] == '0':
		d.i++
	case d.b[d.i] >= '1' && d.b[d.i] <= '9':
		digits()
	default:
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if !digits() {
			return false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return false
		}
	}
	return true
}
