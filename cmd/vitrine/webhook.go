package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"vitrine/origin/store"
	"vitrine/origin/webhooks"
)

// runWebhook is `vitrine webhook create|list|update|delete|rotate|test|deliveries|redeliver`: a
// store's webhook endpoints, as the admin API (/api/admin/webhooks) manages them. A new or
// rotated secret is printed once. Test events and redeliveries are queued in the database; a
// running origin's dispatcher sends them.
func runWebhook(ctx context.Context, args []string) error {
	verbs := map[string]bool{"create": true, "list": true, "update": true, "delete": true, "rotate": true, "test": true, "deliveries": true, "redeliver": true}
	if len(args) == 0 || !verbs[args[0]] {
		return fmt.Errorf("usage: vitrine webhook create|list|update|delete|rotate|test|deliveries|redeliver -tenant SLUG " +
			"[-url URL] [-events k1,k2] [-allowlist CIDR,CIDR] [-description TEXT] [-enabled true|false] [-id UUID] " +
			"[-overlap DURATION] [-delivery UUID] [-state S] [-kind K] [-limit N]")
	}
	verb := args[0]
	f := newFlags("webhook " + verb)
	c := f.common()
	tenant := f.FlagSet.String("tenant", "", "tenant slug (required)")
	url := f.FlagSet.String("url", "", "create, update: the endpoint's URL (https; http only to an allowlisted address)")
	events := f.FlagSet.String("events", "", "create, update: comma-separated event kinds (empty: every kind)")
	allow := f.FlagSet.String("allowlist", "", "create, update: comma-separated CIDRs deliveries may go to")
	desc := f.FlagSet.String("description", "", "create, update: what the endpoint is for")
	enabled := f.FlagSet.String("enabled", "", "update: true or false")
	id := f.FlagSet.String("id", "", "the endpoint's id (from list)")
	overlap := f.FlagSet.Duration("overlap", webhooks.DefaultOverlap, "rotate: how long the old secret keeps signing too")
	delivery := f.FlagSet.String("delivery", "", "redeliver: the delivery's id (from deliveries)")
	state := f.FlagSet.String("state", "", "deliveries: pending, delivered, failed or cancelled")
	kind := f.FlagSet.String("kind", "", "deliveries: only this event kind")
	limit := f.FlagSet.Int("limit", 20, "deliveries: how many, newest first")
	secret := f.Secret("secret", "VITRINE_SECRET", "server secret (the origin's: it seals endpoint secrets)")
	if err := f.Parse(args[1:]); err != nil {
		return err
	}
	key, err := parseSecret(*secret)
	if err != nil {
		return err
	}
	db, err := c.openDB(ctx, false, store.Config{})
	if err != nil {
		return err
	}
	defer db.Close()
	t, err := db.TenantBySlug(ctx, *tenant)
	if err != nil {
		return err
	}
	svc, err := webhooks.NewService(nil, db, key, nil)
	if err != nil {
		return err
	}
	set := func(name string) bool {
		found := false
		f.FlagSet.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
		return found
	}
	input := func() (webhooks.EndpointInput, error) {
		var in webhooks.EndpointInput
		if set("url") {
			in.URL = url
		}
		if set("events") {
			list := splitComma(*events)
			in.Events = &list
		}
		if set("allowlist") {
			list := splitComma(*allow)
			in.IPAllowlist = &list
		}
		if set("description") {
			in.Description = desc
		}
		if set("enabled") {
			b, err := strconv.ParseBool(*enabled)
			if err != nil {
				return in, fmt.Errorf("-enabled: %w", err)
			}
			in.Enabled = &b
		}
		return in, nil
	}
	show := func(e *webhooks.Endpoint) {
		kinds := "all"
		if len(e.Events) > 0 {
			kinds = strings.Join(e.Events, ",")
		}
		fmt.Printf("endpoint %s %s\n  kinds: %s\n  allowlist: %s\n  enabled: %v %s\n", e.ID, e.URL, kinds, strings.Join(e.IPAllowlist, ","), e.Enabled, e.DisabledReason)
		if e.Secret != "" {
			fmt.Printf("signing secret (shown once):\n%s\n", e.Secret)
		}
	}
	switch verb {
	case "create":
		in, err := input()
		if err != nil {
			return err
		}
		e, err := svc.Create(ctx, t, in)
		if err != nil {
			return err
		}
		show(e)
	case "update":
		in, err := input()
		if err != nil {
			return err
		}
		e, err := svc.Update(ctx, t, *id, in)
		if err != nil {
			return err
		}
		show(e)
	case "delete":
		if err := svc.Delete(ctx, t, *id); err != nil {
			return err
		}
		fmt.Printf("endpoint %s deleted\n", *id)
	case "rotate":
		e, err := svc.Rotate(ctx, t, *id, *overlap)
		if err != nil {
			return err
		}
		show(e)
	case "test":
		q, err := svc.SendTest(ctx, t, *id)
		if err != nil {
			return err
		}
		fmt.Printf("test event %s queued as delivery %s\n", q.EventID, q.DeliveryID)
	case "redeliver":
		q, err := svc.Redeliver(ctx, t, *id, *delivery)
		if err != nil {
			return err
		}
		fmt.Printf("event %s queued again as delivery %s\n", q.EventID, q.DeliveryID)
	case "list":
		l, err := svc.List(ctx, t)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tURL\tKINDS\tALLOWLIST\tENABLED\tFAILING SINCE")
		for _, e := range l.Data {
			kinds, failing := "all", ""
			if len(e.Events) > 0 {
				kinds = strings.Join(e.Events, ",")
			}
			if e.FailingSince != nil {
				failing = e.FailingSince.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%v\t%s\n", e.ID, e.URL, kinds, strings.Join(e.IPAllowlist, ","), e.Enabled, failing)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		for _, n := range l.Notices {
			fmt.Printf("notice: %s %s at %s: %s\n", n.Kind, n.EndpointID, n.At.Format(time.RFC3339), n.Reason)
		}
	case "deliveries":
		list, total, err := svc.Deliveries(ctx, t, *id, webhooks.DeliveryFilter{State: *state, Kind: *kind, Limit: max(1, min(*limit, 100))})
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "%d deliveries\nID\tEVENT\tKIND\tSTATE\tATTEMPTS\tLAST ANSWER\n", total)
		for _, d := range list {
			last := ""
			if n := len(d.Log); n > 0 {
				a := d.Log[n-1]
				last = strconv.Itoa(a.ResponseStatus) + " " + a.Error
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.EventID, d.Kind, d.State, d.Attempts, last)
		}
		return w.Flush()
	}
	return nil
}

func splitComma(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
