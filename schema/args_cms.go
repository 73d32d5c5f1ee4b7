package schema

import (
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The argument shapes of CMS collections beyond scalars and lists: date-times and taxonomy
// filters. ParseArgs (routes.go) dispatches to them by ArgType.

var cmsDate = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}(:?\d{2})?)?$`)

// ParseCMSDate parses WordPress's date-time format (rest_parse_date): YYYY-MM-DD, T or a space,
// HH:MM:SS, optional fraction (dropped: WordPress keeps seconds), optional zone (Z, ±HH, ±HHMM,
// ±HH:MM). It reports whether the value carried a zone; a value without one is returned as its
// wall clock in UTC, to be placed in the site's zone by the caller (ArgValue.TimeIn).
func ParseCMSDate(s string) (t time.Time, zoned, ok bool) {
	m := cmsDate.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, false, false
	}
	base := m[1] + "-" + m[2] + "-" + m[3] + "T" + m[4] + ":" + m[5] + ":" + m[6]
	zone := strings.ToUpper(m[8])
	switch {
	case zone == "":
		t, err := time.Parse("2006-01-02T15:04:05", base)
		return t, false, err == nil && inYears(t)
	case zone == "Z":
	case len(zone) == 3: // +02
		zone += ":00"
	case !strings.Contains(zone, ":"): // +0200
		zone = zone[:3] + ":" + zone[3:]
	}
	t, err := time.Parse(time.RFC3339, base+zone)
	if err != nil || !inYears(t.UTC()) {
		return time.Time{}, false, false
	}
	return t.UTC(), true, true
}

// inYears keeps dates after the zero time (which reads as "not sent") and within year 9999
// (in UTC), which every layer can write back.
func inYears(t time.Time) bool { return t.After(time.Time{}) && t.Year() <= 9999 }

// TimeIn returns an ArgDateTime's instant: the value itself when it carried a zone, else its
// wall clock read in loc (the site's zone, as WordPress reads zone-less dates).
func (v ArgValue) TimeIn(loc *time.Location) time.Time {
	if v.Zoned || v.Time.IsZero() {
		return v.Time
	}
	if loc == nil {
		loc = time.UTC
	}
	t := v.Time
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
}

// parseTermFilter reads a taxonomy filter: the ids in the list form under the argument's own
// name, else in the object form's name[terms]; then the object keys name[operator] and
// name[include_children] (accepted beside the list form too, which is how cache keys write a
// non-default operator). WordPress
// refuses unknown object keys; get cannot enumerate the query, so they are ignored here.
func parseTermFilter(d *Arg, raw string, given bool, get func(string) (string, bool)) (ArgValue, string) {
	v := ArgValue{Str: "OR", Given: given}
	if given {
		for i, part := range splitList(raw) {
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return ArgValue{}, d.Name + "[" + strconv.Itoa(i) + "] is not of type integer."
			}
			v.Ints = append(v.Ints, n)
		}
		if msg := checkItems(d, len(v.Ints)); msg != "" {
			return ArgValue{}, msg
		}
	} else if terms, ok := get(d.Name + "[terms]"); ok {
		v.Given = true
		for i, part := range splitList(terms) {
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return ArgValue{}, d.Name + "[terms][" + strconv.Itoa(i) + "] is not of type integer."
			}
			v.Ints = append(v.Ints, n)
		}
		if msg := checkItems(d, len(v.Ints)); msg != "" {
			return ArgValue{}, msg
		}
	}
	if op, ok := get(d.Name + "[operator]"); ok {
		if !d.TermOperator {
			return ArgValue{}, termQueryInvalid(d.Name, "operator")
		}
		if op != "OR" && op != "AND" {
			return ArgValue{}, d.Name + "[operator] is not one of OR and AND."
		}
		v.Str, v.Given = op, true
	}
	if ch, ok := get(d.Name + "[include_children]"); ok {
		if !d.TermChildren {
			return ArgValue{}, termQueryInvalid(d.Name, "include_children")
		}
		switch strings.ToLower(strings.TrimSpace(ch)) {
		case "true", "1":
			v.Bool = true
		case "false", "0", "":
		default:
			return ArgValue{}, d.Name + "[include_children] is not of type boolean."
		}
		v.Given = true
	}
	return v, ""
}

// termQueryInvalid is WordPress's message for an object key a taxonomy filter does not take
// (operator on an _exclude form, include_children on a flat taxonomy): the filter matches
// neither of its oneOf schemas, and the object one's error is the reason.
func termQueryInvalid(name, key string) string {
	return name + " is not a valid Term ID Taxonomy Query. Reason: " + key + " is not a valid property of Object."
}

// appendKeyCMS appends the normalised value of the CMS argument types to a cache key, in a form
// that parses back to the same value: a date-time as RFC 3339 in UTC, or its wall clock when it
// carried no zone; a term filter as its ids, then its object keys when they differ from the
// defaults ("categories=3&categories[operator]=AND").
func appendKeyCMS(dst []byte, name string, t ArgType, v ArgValue) []byte {
	switch t {
	case ArgDateTime:
		switch {
		case v.Time.IsZero():
		case v.Zoned:
			dst = v.Time.UTC().AppendFormat(dst, "2006-01-02T15:04:05Z")
		default:
			dst = v.Time.AppendFormat(dst, "2006-01-02T15:04:05")
		}
	case ArgTermFilter:
		for j, n := range v.Ints {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, n, 10)
		}
		if v.Str == "AND" {
			dst = append(append(append(dst, '&'), name...), "[operator]=AND"...)
		}
		if v.Bool {
			dst = append(append(append(dst, '&'), name...), "[include_children]=true"...)
		}
	}
	return dst
}

// cmsPageArg is the page argument of CMS collections, as WordPress declares it: a minimum and no
// maximum (a page past the last is the collection's own error). Offsets come from PageOffset,
// which cannot overflow.
func cmsPageArg() Arg {
	return Arg{Name: "page", Type: ArgInt, Default: "1", HasMin: true, Min: 1, Description: "Current page of the collection."}
}

// MaxOffset bounds the offset of a collection page: past the end of any collection, and small
// enough that adding a page's length to it never overflows an int.
const MaxOffset = math.MaxInt32

// PageOffset returns the offset of a page of perPage items, (page-1)*perPage, or MaxOffset when
// that is larger: a page number of any size is a page past the last, never an overflow. Pages
// below 1 (and perPage below 1) give 0.
func PageOffset(page, perPage int64) int {
	if page < 1 || perPage < 1 {
		return 0
	}
	if page-1 > MaxOffset/perPage {
		return MaxOffset
	}
	return int(min((page-1)*perPage, MaxOffset))
}

// Route returns the route the arguments were parsed for.
func (a *Args) Route() *Route { return a.route }

// CollectionHeaders are the headers of a page of a CMS collection at url: X-WP-Total,
// X-WP-TotalPages and, when there is another page, the Link of PageLinks.
func CollectionHeaders(url string, r *Route, query func(name string) (string, bool), page, total, totalPages int) [][2]string {
	h := [][2]string{{"X-WP-Total", strconv.Itoa(total)}, {"X-WP-TotalPages", strconv.Itoa(totalPages)}}
	if link := PageLinks(url, r, query, page, totalPages); link != "" {
		h = append(h, [2]string{"Link", link})
	}
	return h
}

// PageLinks renders a CMS collection's Link header as WordPress does: rel="prev" and rel="next"
// URLs on base (the collection's rest URL) carrying the caller's arguments declared by r (values
// query-escaped; a taxonomy filter's object keys too) and the other page number. query returns a
// request's query parameter. It is "" on a single page.
func PageLinks(base string, r *Route, query func(name string) (string, bool), page, totalPages int) string {
	var q strings.Builder
	for _, a := range r.Args {
		if a.Name == "page" {
			continue
		}
		names := []string{a.Name}
		if a.Type == ArgTermFilter {
			names = append(names, a.Name+"[terms]", a.Name+"[operator]", a.Name+"[include_children]")
		}
		for _, n := range names {
			if v, ok := query(n); ok {
				q.WriteString("&" + url.QueryEscape(n) + "=" + url.QueryEscape(v))
			}
		}
	}
	link := func(n int, rel string) string {
		return "<" + base + q.String() + "&page=" + strconv.Itoa(n) + `>; rel="` + rel + `"`
	}
	var parts []string
	if page > 1 && totalPages > 0 {
		parts = append(parts, link(min(page-1, totalPages), "prev"))
	}
	if page < totalPages {
		parts = append(parts, link(page+1, "next"))
	}
	return strings.Join(parts, ", ")
}
