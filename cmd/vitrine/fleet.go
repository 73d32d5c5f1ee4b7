package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"vitrine/deploy/fleet"
)

const fleetUsage = `vitrine fleet: a multi-region fleet on this machine, in network namespaces (root).

Usage:
  vitrine fleet up [flags]            build the core and the regions, wait until every process is ready
  vitrine fleet status [--json]       processes, readiness, links and their counters
  vitrine fleet link <region> [flags] change a region's link live (--delay, --jitter, --loss, --rate, --partition)
  vitrine fleet restart <region> <n>  restart edge n of a region (SIGTERM, start, wait ready)
  vitrine fleet down                  stop everything, remove the namespaces and links (also after a crash)

Run "vitrine fleet <command> -h" for a command's flags.
`

// runFleet is `vitrine fleet`. `up` starts `vitrine fleet supervise` detached (setsid): the
// supervisor owns the TAP devices, the wires and the processes, writes <dir>/fleet.json and
// answers on <dir>/control.sock; the other commands talk to it there.
func runFleet(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, fleetUsage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "up":
		return runFleetUp(ctx, args[1:])
	case "supervise": // started by `vitrine fleet up`
		return runFleetSupervise(ctx, args[1:])
	case "down":
		return runFleetDown(ctx, args[1:])
	case "status":
		return runFleetStatus(ctx, args[1:])
	case "link":
		return runFleetLink(ctx, args[1:])
	case "restart":
		return runFleetRestart(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Print(fleetUsage)
		return nil
	}
	fmt.Fprint(os.Stderr, fleetUsage)
	return fmt.Errorf("unknown fleet command %q", args[0])
}

// fleetDir is the --dir flag every fleet command has.
func (f flags) fleetDir() *string {
	return f.String("dir", "VITRINE_FLEET_DIR", filepath.Join(".vitrine", "fleet"), "the fleet's folder: data, logs, fleet.json, control.sock")
}

// fleetUpFlags are the flags of `fleet up` (and of the supervisor it starts).
type fleetUpFlags struct {
	dir, prefix, regions, binary, loss, rate, edgeArgs *string
	edges, products, posts                             *int
	delay, jitter, readyTimeout, stopTimeout           *time.Duration
	seed, noMirror                                     *bool
}

func (f flags) fleetUp() fleetUpFlags {
	return fleetUpFlags{
		dir:          f.fleetDir(),
		prefix:       f.String("prefix", "VITRINE_FLEET_PREFIX", "vt-", "first letters of every namespace and link the fleet creates"),
		regions:      f.String("regions", "VITRINE_FLEET_REGIONS", strings.Join(fleet.DefaultRegions, ","), "comma-separated region names"),
		binary:       f.String("binary", "VITRINE_FLEET_BINARY", "", "vitrine binary the fleet's processes run (default this one)"),
		edges:        f.Int("edges", "VITRINE_FLEET_EDGES", 2, "edges per region"),
		delay:        f.Duration("delay", "VITRINE_FLEET_DELAY", fleet.DefaultLink.Delay, "one-way delay between the core and each region"),
		jitter:       f.Duration("jitter", "VITRINE_FLEET_JITTER", 0, "delay jitter (uniform, ±)"),
		loss:         f.String("loss", "VITRINE_FLEET_LOSS", "0", "packet loss per direction, e.g. 1% or 0.01"),
		rate:         f.String("rate", "VITRINE_FLEET_RATE", "0", "bandwidth per direction, e.g. 100mbit (0: unbounded)"),
		seed:         f.EnvBool("seed", "VITRINE_FLEET_SEED", true, "create and seed the demo store (tenant demo, host demo.localhost)"),
		products:     f.Int("products", "VITRINE_FLEET_PRODUCTS", 0, "products of the demo store (0: vitrine seed's default)"),
		posts:        f.Int("posts", "VITRINE_FLEET_POSTS", 0, "posts of the demo store (0: vitrine seed's default)"),
		edgeArgs:     f.String("edge-args", "VITRINE_FLEET_EDGE_ARGS", "", "extra flags of every edge, space-separated (e.g. \"--drain-delay 2s\")"),
		readyTimeout: f.Duration("ready-timeout", "VITRINE_FLEET_READY_TIMEOUT", 3*time.Minute, "how long each process has to become ready"),
		stopTimeout:  f.Duration("stop-timeout", "VITRINE_FLEET_STOP_TIMEOUT", 20*time.Second, "how long a process has to drain and stop before SIGKILL"),
		noMirror:     f.EnvBool("no-mirror", "VITRINE_FLEET_NO_MIRROR", false, "edges read the central JetStream domain through the leaf node even if `vitrine mirror` exists"),
	}
}

func (u fleetUpFlags) config() (fleet.Config, error) {
	loss, err := parseLoss(*u.loss)
	if err != nil {
		return fleet.Config{}, err
	}
	rate, err := parseRate(*u.rate)
	if err != nil {
		return fleet.Config{}, err
	}
	bin := *u.binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fleet.Config{}, err
		}
	}
	return fleet.Config{Dir: *u.dir, Binary: bin, Prefix: *u.prefix, Regions: splitList(*u.regions), EdgesPerRegion: *u.edges,
		Link: fleet.Link{Delay: *u.delay, Jitter: *u.jitter, Loss: loss, Rate: rate}, Seed: *u.seed, Products: *u.products,
		Posts: *u.posts, EdgeArgs: strings.Fields(*u.edgeArgs), ReadyTimeout: *u.readyTimeout, StopTimeout: *u.stopTimeout,
		NoMirror: *u.noMirror}, nil
}

// parseLoss reads "10%" or "0.1".
func parseLoss(s string) (float64, error) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("loss %q: want a percentage (10%%) or a probability (0.1)", s)
	}
	if pct {
		v /= 100
	}
	if v < 0 || v > 1 {
		return 0, fmt.Errorf("loss %q: out of 0-100%%", s)
	}
	return v, nil
}

// parseRate reads bits per second: "100mbit", "1gbit", "500kbit", "64000" (0: unbounded).
func parseRate(in string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(in))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("rate %q: want bits per second such as 100mbit, 1gbit or 64000", in)
	}
	return int64(v * float64(mult)), nil
}

func runFleetUp(ctx context.Context, args []string) error {
	f := newFlags("fleet up")
	u := f.fleetUp()
	if err := f.Parse(args); err != nil {
		return err
	}
	if _, err := u.config(); err != nil {
		return err
	}
	dir, err := filepath.Abs(*u.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = fleet.Call(cctx, dir, fleet.Request{Op: "status"})
	cancel()
	if err == nil {
		return fmt.Errorf("a fleet is already up in %s (vitrine fleet status; vitrine fleet down)", dir)
	}
	os.Remove(filepath.Join(dir, fleet.StateFile))
	os.Remove(filepath.Join(dir, fleet.ControlFile))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "logs", "supervisor.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	st, _ := logFile.Stat()
	offset := st.Size()
	// The supervisor gets the same flags (its working directory is ours, so relative paths
	// mean the same) and a session of its own: it outlives this command.
	cmd := exec.Command(self, append([]string{"fleet", "supervise"}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintf(os.Stderr, "fleet supervisor started (pid %d, log %s)\n", cmd.Process.Pid, logPath)
	for {
		offset = copyNew(os.Stderr, logPath, offset)
		if s, err := fleet.ReadState(dir); err == nil && s.Ready {
			printFleetUp(os.Stdout, s)
			return nil
		}
		select {
		case err := <-exited:
			copyNew(os.Stderr, logPath, offset)
			return fmt.Errorf("the fleet supervisor exited (%v): see %s; clean up with vitrine fleet down", err, logPath)
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			fmt.Fprintln(os.Stderr, "interrupted: the supervisor is taking the fleet down")
			<-exited
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// copyNew writes what path holds past offset, whole lines only, and returns the new offset.
func copyNew(w io.Writer, path string, offset int64) int64 {
	fh, err := os.Open(path)
	if err != nil {
		return offset
	}
	defer fh.Close()
	b, _ := io.ReadAll(io.NewSectionReader(fh, offset, 1<<30))
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		w.Write(b[:i+1])
		return offset + int64(i+1)
	}
	return offset
}

func runFleetSupervise(ctx context.Context, args []string) error {
	f := newFlags("fleet supervise")
	u := f.fleetUp()
	if err := f.Parse(args); err != nil {
		return err
	}
	cfg, err := u.config()
	if err != nil {
		return err
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return err
	}
	cfg.Progress = func(msg string) { fmt.Printf("%s fleet: %s\n", time.Now().Format("15:04:05.000"), msg) }
	// Written first, so that `fleet down` finds the prefix and this process if Up never ends.
	if err := fleet.WriteState(cfg.Dir, fleet.State{Prefix: cfg.Prefix, Dir: cfg.Dir, Binary: cfg.Binary, Supervisor: os.Getpid()}); err != nil {
		return err
	}
	start := time.Now()
	fl, err := fleet.Up(ctx, cfg)
	if err != nil {
		cfg.Progress("up failed: " + err.Error())
		return err
	}
	sock := filepath.Join(cfg.Dir, fleet.ControlFile)
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fl.Down(context.WithoutCancel(ctx))
		return err
	}
	os.Chmod(sock, 0o600)
	fl.MarkReady(os.Getpid())
	if err := fleet.WriteState(cfg.Dir, fl.State()); err != nil {
		fl.Down(context.WithoutCancel(ctx))
		return err
	}
	cfg.Progress(fmt.Sprintf("up in %s; control socket %s", time.Since(start).Round(time.Millisecond), sock))
	err = fl.Serve(ctx, ln)
	cfg.Progress(fmt.Sprintf("going down (%v)", err))
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	derr := fl.Down(dctx)
	os.Remove(sock)
	os.Remove(filepath.Join(cfg.Dir, fleet.StateFile))
	cfg.Progress(fmt.Sprintf("down (%v)", derr))
	return derr
}

func runFleetDown(ctx context.Context, args []string) error {
	f := newFlags("fleet down")
	dirFlag := f.fleetDir()
	prefix := f.String("prefix", "VITRINE_FLEET_PREFIX", "vt-", "prefix to clean up when fleet.json is gone")
	if err := f.Parse(args); err != nil {
		return err
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return err
	}
	st, stErr := fleet.ReadState(dir)
	if stErr == nil && st.Prefix != "" {
		*prefix = st.Prefix
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, callErr := fleet.Call(cctx, dir, fleet.Request{Op: "down"})
	cancel()
	alive := func() bool { return fleet.Alive(st.Supervisor) }
	switch {
	case callErr == nil:
		fmt.Fprintf(os.Stderr, "the supervisor (pid %d) is stopping the fleet…\n", st.Supervisor)
	case alive():
		fmt.Fprintf(os.Stderr, "the supervisor (pid %d) does not answer (%v): SIGTERM\n", st.Supervisor, callErr)
		syscall.Kill(st.Supervisor, syscall.SIGTERM)
	default:
		fmt.Fprintf(os.Stderr, "no supervisor running: cleaning up %s*\n", *prefix)
	}
	for deadline := time.Now().Add(3 * time.Minute); alive(); {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "the supervisor (pid %d) did not stop: SIGKILL\n", st.Supervisor)
			syscall.Kill(st.Supervisor, syscall.SIGKILL)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	removed, err := fleet.Cleanup(ctx, *prefix, 10*time.Second)
	for _, r := range removed {
		fmt.Fprintln(os.Stderr, "removed", r)
	}
	os.Remove(filepath.Join(dir, fleet.ControlFile))
	os.Remove(filepath.Join(dir, fleet.StateFile))
	if err != nil {
		return err
	}
	fmt.Printf("fleet down (logs kept in %s)\n", filepath.Join(dir, "logs"))
	return nil
}

func runFleetStatus(ctx context.Context, args []string) error {
	f := newFlags("fleet status")
	dirFlag := f.fleetDir()
	asJSON := f.FlagSet.Bool("json", false, "print the status as JSON")
	if err := f.Parse(args); err != nil {
		return err
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return err
	}
	st, err := fleetCall(ctx, dir, fleet.Request{Op: "status"})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	printFleetStatus(os.Stdout, st)
	return nil
}

// fleetCall sends a request to the supervisor of the fleet in dir and returns the fleet's
// status, or an error saying what is known without a supervisor.
func fleetCall(ctx context.Context, dir string, req fleet.Request) (fleet.Status, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	resp, err := fleet.Call(cctx, dir, req)
	if err != nil {
		if st, serr := fleet.ReadState(dir); serr == nil {
			return fleet.Status{}, fmt.Errorf("the fleet's supervisor (pid %d) does not answer on %s (%v): run vitrine fleet down to clean up", st.Supervisor, filepath.Join(dir, fleet.ControlFile), err)
		}
		return fleet.Status{}, fmt.Errorf("no fleet in %s (vitrine fleet up --dir %s)", dir, dir)
	}
	if resp.Error != "" {
		return fleet.Status{}, errors.New(resp.Error)
	}
	if resp.Status == nil {
		return fleet.Status{}, fmt.Errorf("the supervisor answered no status")
	}
	return *resp.Status, nil
}

func runFleetLink(ctx context.Context, args []string) error {
	f := newFlags("fleet link")
	dirFlag := f.fleetDir()
	delay := f.FlagSet.Duration("delay", 0, "one-way delay")
	jitter := f.FlagSet.Duration("jitter", 0, "delay jitter (uniform, ±)")
	loss := f.FlagSet.String("loss", "", "packet loss, e.g. 10% or 0.1")
	rate := f.FlagSet.String("rate", "", "bandwidth, e.g. 100mbit (0: unbounded)")
	partition := f.FlagSet.String("partition", "", "on cuts the region off from the core (both ways), off reconnects it")
	direction := f.FlagSet.String("direction", "both", "both, to-region or to-core")
	f.FlagSet.Usage = func() {
		fmt.Fprintln(f.FlagSet.Output(), "Usage: vitrine fleet link <region> [flags] (flags not given keep their value)")
		f.FlagSet.PrintDefaults()
	}
	var region string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		region, args = args[0], args[1:]
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if region == "" && f.NArg() > 0 {
		region = f.Arg(0)
	}
	if region == "" {
		f.FlagSet.Usage()
		return flag.ErrHelp
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return err
	}
	st, err := fleetCall(ctx, dir, fleet.Request{Op: "status"})
	if err != nil {
		return err
	}
	var cur *fleet.LinkStatus
	for i := range st.Links {
		if st.Links[i].Region == region {
			cur = &st.Links[i]
		}
	}
	if cur == nil {
		return fmt.Errorf("no region %q in the fleet", region)
	}
	l := cur.ToRegion.Link
	if *direction == "to-core" {
		l = cur.ToCore.Link
	}
	req := fleet.Request{Op: "link", Region: region, Direction: *direction}
	var ferr error
	f.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "delay":
			l.Delay, req.Link = *delay, &l
		case "jitter":
			l.Jitter, req.Link = *jitter, &l
		case "loss":
			v, err := parseLoss(*loss)
			ferr = errors.Join(ferr, err)
			l.Loss, req.Link = v, &l
		case "rate":
			v, err := parseRate(*rate)
			ferr = errors.Join(ferr, err)
			l.Rate, req.Link = v, &l
		case "partition":
			on := false
			switch *partition {
			case "on", "true", "1":
				on = true
			case "off", "false", "0":
			default:
				ferr = errors.Join(ferr, fmt.Errorf("--partition %q: want on or off", *partition))
			}
			req.Partition = &on
		}
	})
	if ferr != nil {
		return ferr
	}
	if st, err = fleetCall(ctx, dir, req); err != nil {
		return err
	}
	for _, ls := range st.Links {
		if ls.Region == region {
			printLink(os.Stdout, ls)
		}
	}
	return nil
}

func runFleetRestart(ctx context.Context, args []string) error {
	f := newFlags("fleet restart")
	dirFlag := f.fleetDir()
	var pos []string
	for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = append(pos, args[0]), args[1:]
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	pos = append(pos, f.Args()...)
	if len(pos) != 2 {
		return fmt.Errorf("usage: vitrine fleet restart <region> <edge number>")
	}
	n, err := strconv.Atoi(pos[1])
	if err != nil {
		return fmt.Errorf("edge number %q: %w", pos[1], err)
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := fleetCall(ctx, dir, fleet.Request{Op: "restart", Region: pos[0], Edge: n}); err != nil {
		return err
	}
	fmt.Printf("%s-edge-%d restarted and ready in %s\n", pos[0], n, time.Since(start).Round(time.Millisecond))
	return nil
}

// printFleetUp prints where everything is and how to reach it.
func printFleetUp(w io.Writer, s fleet.State) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nfleet up (prefix %s, supervisor pid %d)\n\n", s.Prefix, s.Supervisor)
	fmt.Fprintf(tw, "origin\t%s\tops %s\tcore (namespace %s)\n", s.Origin.URL(), s.Origin.Ops, s.Core.Namespace)
	fmt.Fprintf(tw, "database\t%s\t\t\n", s.Database)
	fmt.Fprintf(tw, "hub NATS\t%s\t\t\n", s.NATS)
	var first fleet.Endpoint
	for _, r := range s.Regions {
		mode := "edges read the central domain through the leaf node"
		if r.Mirror {
			mode = "edges read the region's mirrors"
		}
		fmt.Fprintf(tw, "%s NATS leaf\t%s\t\tnamespace %s; %s\n", r.Name, r.NATS, r.Namespace, mode)
		for _, e := range r.Edges {
			if first.Addr == "" {
				first = e
			}
			fmt.Fprintf(tw, "%s\t%s\tops %s\t\n", e.Name, e.URL(), e.Ops)
		}
	}
	tw.Flush()
	host := s.Tenant
	if host == "" {
		host = "<store host>"
	}
	fmt.Fprintf(w, "\nThe host reaches the origin and every edge directly (host links %s…, not through the wires:\nthey play the regions' local clients). A region reaches the core only through its wire.\n", s.Prefix+"h-")
	if s.Tenant != "" {
		fmt.Fprintf(w, "Demo store: Host %s; administrator %s, application password %s\n", s.Tenant, s.AdminLogin, s.AdminPassword)
	}
	if first.Addr != "" {
		fmt.Fprintf(w, "\n  curl -s -H 'Host: %s' '%s/api/products?per_page=2'\n", host, first.URL())
		fmt.Fprintf(w, "  ip netns exec %s curl -s -H 'Host: %s' '%s/api/products?per_page=2'\n", first.Namespace, host, first.URL())
		fmt.Fprintf(w, "  vitrine fleet link %s --delay 100ms --loss 5%%       # or --partition=on\n", first.Region)
	}
	fmt.Fprintf(w, "  vitrine fleet status\n  vitrine fleet down\n\nLogs: %s\n", filepath.Join(s.Dir, "logs"))
}

func printFleetStatus(w io.Writer, st fleet.Status) {
	s := st.State
	fmt.Fprintf(w, "fleet %s (dir %s, supervisor pid %d, up since %s)\n\n", s.Prefix, s.Dir, s.Supervisor, s.Created.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESS\tNAMESPACE\tPID\tSTATE\tREADY\tRESTARTS")
	for _, p := range st.Processes {
		state := "running"
		if !p.Running {
			state = "exited: " + p.Exit
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%d\n", p.Name, p.Namespace, p.PID, state, p.Ready, p.Restarts)
	}
	tw.Flush()
	for _, ls := range st.Links {
		fmt.Fprintln(w)
		printLink(w, ls)
	}
}

func printLink(w io.Writer, ls fleet.LinkStatus) {
	fmt.Fprintf(w, "link %s\n", ls.Region)
	for _, d := range []struct {
		name string
		l    fleet.LaneStatus
	}{{"core→" + ls.Region, ls.ToRegion}, {ls.Region + "→core", ls.ToCore}} {
		part := "off"
		if d.l.Partitioned {
			part = "ON"
		}
		c := d.l.Counters
		fmt.Fprintf(w, "  %-10s %s, partition %s\n", d.name, d.l.Link, part)
		fmt.Fprintf(w, "  %-10s in %d frames %d bytes, delivered %d frames %d bytes, lost %d, partitioned %d, overflow %d\n",
			"", c.In.Frames, c.In.Bytes, c.Delivered.Frames, c.Delivered.Bytes, c.Lost, c.Partitioned, c.Overflow)
		keys := make([]string, 0, len(c.Ports))
		for k := range c.Ports {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return c.Ports[keys[i]].Bytes > c.Ports[keys[j]].Bytes })
		var parts []string
		for i, k := range keys {
			if i == 8 {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d frames %d bytes", k, c.Ports[k].Frames, c.Ports[k].Bytes))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  %-10s by service port: %s\n", "", strings.Join(parts, "; "))
		}
	}
}
