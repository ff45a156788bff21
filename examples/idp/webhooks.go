package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/visid/visid/events"
	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
	"github.com/visid/visid/webhooks"
)

// webhookAdd is "idp webhook add --tenant T --url U [--types T1,T2] [--allow-http-loopback]
// [--allow-private-targets]".
func webhookAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp webhook add", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant whose events are sent (required)")
	rawURL := fs.String("url", "", "the https URL that receives the events (required)")
	types := fs.String("types", "", "the event types to send, comma-separated (default: all)")
	loopback := fs.Bool("allow-http-loopback", false, "allow an http URL on 127.0.0.1, [::1] or localhost (development only; needs --allow-private-targets too)")
	private := fs.Bool("allow-private-targets", false, "allow a URL whose host is or resolves to a loopback, private, link-local or other internal address (development only; idp serve needs -webhook-allow-private-targets to deliver there)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("webhook add: unexpected argument %q; the URL goes in --url", pos[0])}
	}
	if err := checkTenantFlag("webhook add", *tenant); err != nil {
		return err
	}
	if *rawURL == "" {
		return &cli.UsageError{Msg: "webhook add needs --url, such as: idp webhook add --tenant acme --url https://app.example.com/visid-events"}
	}
	if err := webhooks.CheckURL(*rawURL, *loopback); err != nil {
		return webhookURLError(*rawURL, *loopback, err)
	}
	var list []store.EventType
	for _, t := range strings.Split(*types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			list = append(list, store.EventType(t))
		}
	}
	known := webhooks.EventTypes()
	for _, t := range list {
		if !slices.Contains(known, t) {
			return &cli.UsageError{Msg: fmt.Sprintf("--types: %q is not an event type; the types are %s", t, joinTypes(known))}
		}
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	secret, e, err := webhooks.AddEndpoint(ctx, d.Webhooks, webhooks.EndpointSpec{Tenant: *tenant, URL: *rawURL, Types: list,
		AllowLoopbackHTTP: *loopback, AllowPrivateTargets: *private})
	if errors.Is(err, store.ErrNotFound) {
		return noTenant(*tenant)
	}
	if errors.Is(err, webhooks.ErrPrivateTarget) {
		msg := strings.TrimSuffix(strings.TrimPrefix(err.Error(), "webhooks: "), ": "+store.ErrInvalid.Error())
		return &cli.UsageError{Msg: "--url: " + strings.Replace(msg, "AllowPrivateTargets", "--allow-private-targets", 1)}
	}
	if err != nil {
		return fmt.Errorf("adding a webhook endpoint to tenant %q: %w", *tenant, err)
	}
	fmt.Fprintf(stdout, "webhook_id=%s\nwebhook_secret=%s\nurl=%s\ntypes=%s\n", e.ID, secret, e.URL, typesOrAll(e.Types))
	return nil
}

// webhookList is "idp webhook list --tenant T".
func webhookList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp webhook list", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant whose endpoints to list (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("webhook list: unexpected argument %q; the tenant goes in --tenant", pos[0])}
	}
	if err := checkTenantFlag("webhook list", *tenant); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	if err := requireTenant(ctx, d.Tenants, *tenant); err != nil {
		return err
	}
	list, err := d.Webhooks.List(ctx, *tenant)
	if err != nil {
		return fmt.Errorf("listing the webhook endpoints of tenant %q: %w", *tenant, err)
	}
	for _, e := range list {
		fmt.Fprintln(stdout, webhookLine(e))
	}
	return nil
}

// webhookLine is the line of webhook list about e. status is delivering, retrying (attempts
// failed; the next is due at next_attempt, a UTC time) or failing (delivery gave up:
// next_attempt=on-resume, nothing is sent until idp webhook resume); a delivering endpoint's
// next_attempt is now.
func webhookLine(e store.WebhookEndpoint) string {
	status, next := "delivering", "now"
	switch {
	case e.Delivery.Failing:
		status, next = "failing", "on-resume"
	case e.Delivery.Attempts > 0:
		status = "retrying"
		if !e.Delivery.NextAttempt.IsZero() {
			next = e.Delivery.NextAttempt.UTC().Format(time.RFC3339)
		}
	}
	return fmt.Sprintf("webhook_id=%s url=%s types=%s status=%s cursor=%s attempts=%d next_attempt=%s last_error=%q",
		e.ID, e.URL, typesOrAll(e.Types), status, e.Delivery.Cursor, e.Delivery.Attempts, next, e.Delivery.LastError)
}

// webhookByID is "idp webhook delete|resume --tenant T <webhook id>".
func webhookByID(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp webhook "+sub, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the endpoint's tenant (required)")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) != 1 || !strings.HasPrefix(pos[0], "webhook_") {
		return &cli.UsageError{Msg: fmt.Sprintf("webhook %s takes one webhook id (webhook_…, as webhook add and list print it), such as: idp webhook %s --tenant acme webhook_01k…", sub, sub)}
	}
	if err := checkTenantFlag("webhook "+sub, *tenant); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	switch sub {
	case "delete":
		err = d.Webhooks.Delete(ctx, *tenant, pos[0])
	default:
		err = d.Webhooks.Resume(ctx, *tenant, pos[0])
	}
	if errors.Is(err, store.ErrNotFound) {
		if terr := requireTenant(ctx, d.Tenants, *tenant); terr != nil {
			return terr
		}
		return fmt.Errorf("there is no webhook endpoint %q in tenant %q", pos[0], *tenant)
	}
	if err != nil {
		return fmt.Errorf("webhook %s %s: %w", sub, pos[0], err)
	}
	fmt.Fprintf(stdout, "webhook_id=%s\n%s=true\n", pos[0], map[string]string{"delete": "deleted", "resume": "resumed"}[sub])
	return nil
}

// eventsCmd is "idp events --tenant T [--after C] [--follow]": the tenant's events, one JSON
// object a line (the body a webhook endpoint would get), oldest first.
func eventsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idp events", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant whose events to print (required)")
	after := fs.String("after", "", "print the events after this cursor (default: from the start of the log)")
	follow := fs.Bool("follow", false, "keep printing new events until interrupted")
	db := fs.String("db", defaultDB, dbUsage)
	pos, err := cli.ParseInterspersed(fs, args, usage, stderr)
	if err != nil {
		return cli.AnswerHelp(err, usage, stdout)
	}
	if len(pos) > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("events: unexpected argument %q; the tenant goes in --tenant", pos[0])}
	}
	if err := checkTenantFlag("events", *tenant); err != nil {
		return err
	}
	d, err := openAdminDB(ctx, *db, stderr)
	if err != nil {
		return err
	}
	defer d.close()
	if err := requireTenant(ctx, d.Tenants, *tenant); err != nil {
		return err
	}
	printEvent := func(e store.Event) error {
		body, err := webhooks.Body(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", body)
		return err
	}
	if *follow {
		_, err := events.Follower{Events: d.Events, Tenant: *tenant, MaxWait: time.Second}.Follow(ctx, *after, printEvent)
		if errors.Is(err, store.ErrInvalid) {
			return &cli.UsageError{Msg: fmt.Sprintf("--after %q is not an event cursor (the cursor of an event printed before)", *after)}
		}
		if errors.Is(err, context.Canceled) {
			return nil // interrupted: the way --follow ends
		}
		return err
	}
	cursor := *after
	for {
		page, err := d.Events.List(ctx, *tenant, cursor, 500)
		if errors.Is(err, store.ErrInvalid) {
			return &cli.UsageError{Msg: fmt.Sprintf("--after %q is not an event cursor (the cursor of an event printed before)", *after)}
		}
		if err != nil {
			return fmt.Errorf("listing the events of tenant %q: %w", *tenant, err)
		}
		for _, e := range page {
			if err := printEvent(e); err != nil {
				return err
			}
		}
		if len(page) < 500 {
			return nil
		}
		cursor = page[len(page)-1].Cursor
	}
}

func joinTypes(list []store.EventType) string {
	s := make([]string, len(list))
	for i, t := range list {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func typesOrAll(list []store.EventType) string {
	if len(list) == 0 {
		return "all"
	}
	return strings.ReplaceAll(joinTypes(list), ", ", ",")
}
