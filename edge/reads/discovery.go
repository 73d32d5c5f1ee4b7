package reads

import (
	"time"

	"vitrine/schema"
)

// answerDiscovery answers the CMS index and the namespace roots, and reports whether the route
// was one of them. Both are built from the route table by package schema; the only tenant data
// they show is the registry entry (name, timezone, canonical base URL), so they depend on the
// Site counter alone, and the index expires when the tenant's UTC offset next changes.
func answerDiscovery(req *Request, args *schema.Args, info *schema.Tenant) (Response, bool) {
	switch req.Route.Name {
	case "cms.index":
		d := deps(req.Tenant, nil)
		body, until, err := schema.CMSIndex(info, time.Now())
		if err != nil {
			return Response{Err: err}, true
		}
		return Response{Status: 200, Body: body, Deps: d, Expires: until}, true
	case "cms.namespace":
		d := deps(req.Tenant, nil)
		body, err := schema.CMSNamespaceIndex(info, args.Str("namespace"))
		if err != nil {
			return Response{Err: err}, true
		}
		return Response{Status: 200, Body: body, Deps: d}, true
	}
	return Response{}, false
}
