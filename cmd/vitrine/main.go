// Command vitrine runs every part of Vitrine: `vitrine dev` runs the whole system in one process;
// `nats`, `origin`, `relay` and `edge` run the parts as separate processes; the other commands
// administer a deployment. Configuration comes from flags, each with a VITRINE_* environment
// variable as its default (DATABASE_URL is honoured too).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `vitrine: a multi-tenant headless store API.

Usage:
  vitrine dev                 run everything in one process (embedded NATS, migrations, demo store)
  vitrine nats                run the embedded nats-server (JetStream) standalone
  vitrine origin              run the origin (write API)
  vitrine relay               run the relay (outboxes to JetStream)
  vitrine edge                run an edge node
  vitrine mirror              keep a region's leaf node mirrors of the central streams (sync/region)
  vitrine migrate             create the database if needed and apply migrations
  vitrine replica rebuild     republish the state stream from the database
  vitrine tenant create       register a tenant
  vitrine tenant update       change a tenant's name, domains, currencies, status or rate limit
  vitrine user create         create a staff user and print its application password
  vitrine user password       create a new application password for a user
  vitrine user app-password   create, list or revoke a user's application passwords
  vitrine key                 create, list, roll or revoke a store's server keys (esk_…)
  vitrine webhook             create, list, update, delete, rotate, test a store's webhook endpoints; their deliveries
  vitrine seed                fill an empty tenant with a demo catalog
  vitrine import              import a Shopify product CSV export into a tenant's catalog
  vitrine bench <scenario>    run the bench suite (reads, baselines, …, or all) and write a report
  vitrine fleet               run a multi-region fleet here in network namespaces (up, status, link, down)
  vitrine version             print the build: version, VCS revision, Go release, change schema
  vitrine probe <url>         GET a health endpoint: exit 0 on a 2xx answer, 1 otherwise (images without a shell)

Run "vitrine <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "vitrine:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return flag.ErrHelp
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "dev":
		return runDev(ctx, rest)
	case "nats":
		return runNATS(ctx, rest)
	case "origin":
		return runOrigin(ctx, rest)
	case "relay":
		return runRelay(ctx, rest)
	case "edge":
		return runEdge(ctx, rest)
	case "mirror":
		return runMirror(ctx, rest)
	case "migrate":
		return runMigrate(ctx, rest)
	case "replica":
		if len(rest) > 0 && rest[0] == "rebuild" {
			return runRebuild(ctx, rest[1:])
		}
	case "tenant":
		if len(rest) > 0 && rest[0] == "create" {
			return runTenantCreate(ctx, rest[1:])
		}
		if len(rest) > 0 && rest[0] == "update" {
			return runTenantUpdate(ctx, rest[1:])
		}
	case "user":
		if len(rest) > 0 && rest[0] == "create" {
			return runUserCreate(ctx, rest[1:])
		}
		if len(rest) > 0 && rest[0] == "password" {
			return runUserPassword(ctx, rest[1:])
		}
		if len(rest) > 0 && rest[0] == "app-password" {
			return runUserAppPassword(ctx, rest[1:])
		}
	case "key":
		return runKey(ctx, rest)
	case "webhook":
		return runWebhook(ctx, rest)
	case "seed":
		return runSeed(ctx, rest)
	case "import":
		return runImport(ctx, rest)
	case "bench":
		return runBench(ctx, rest)
	case "fleet":
		return runFleet(ctx, rest)
	case "bench-fixed-server": // started by `vitrine bench`; not in the usage text
		return runBenchFixedServer(ctx, rest)
	case "bench-bare-origin": // started by `vitrine bench`; not in the usage text
		return runBenchBareOrigin(ctx, rest)
	case "bench-follower": // started by `vitrine bench`; not in the usage text
		return runBenchFollower(ctx, rest)
	case "probe":
		return runProbe(ctx, rest)
	case "version", "-version", "--version":
		return runVersion(os.Stdout, rest)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", joinArgs(args))
}

func joinArgs(args []string) string {
	if len(args) > 2 {
		args = args[:2]
	}
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}
