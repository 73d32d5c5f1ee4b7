package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Errors of the package, wrapped with detail.
var (
	// ErrUnsupported: the machine cannot run a fleet (not root, no /dev/net/tun, no iproute2).
	ErrUnsupported = errors.New("fleet: unsupported here")
	// ErrInvalid: a configuration or link setting that cannot be applied.
	ErrInvalid = errors.New("fleet: invalid")
	// ErrNotFound: an unknown region, edge or place.
	ErrNotFound = errors.New("fleet: not found")
	// ErrExists: a fleet with the same prefix is already on the machine.
	ErrExists = errors.New("fleet: already exists")
)

// netnsDir is where iproute2 keeps named network namespaces.
const netnsDir = "/var/run/netns"

// Supported reports why this machine cannot run a fleet, or nil: root, /dev/net/tun and the ip
// command are needed.
func Supported() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: network namespaces and TAP devices need root", ErrUnsupported)
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("%w: /dev/net/tun: %v", ErrUnsupported, err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: iproute2's ip command: %v", ErrUnsupported, err)
	}
	return nil
}

// ipCmd runs the ip command.
func ipCmd(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("fleet: ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// addNamespace creates a named network namespace with its loopback up.
func addNamespace(ctx context.Context, ns string) error {
	if err := ipCmd(ctx, "netns", "add", ns); err != nil {
		return err
	}
	// Nothing but the fleet's own frames on its links: no IPv6 (router solicitations, DAD).
	inNamespace(ns, func() error {
		for _, p := range []string{"all", "default"} {
			os.WriteFile("/proc/sys/net/ipv6/conf/"+p+"/disable_ipv6", []byte("1"), 0)
		}
		return nil
	})
	return ipCmd(ctx, "-n", ns, "link", "set", "lo", "up")
}

// namespaces lists the named network namespaces starting with prefix.
func namespaces(prefix string) ([]string, error) {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// inNamespace runs fn on an OS thread switched into the named network namespace ("" for the
// process's own): sockets fn opens, TAP devices it creates and processes it starts live there.
// The thread is switched back afterwards; if that fails it stays locked and the runtime
// discards it when the goroutine ends.
func inNamespace(ns string, fn func() error) error {
	if ns == "" {
		return fn()
	}
	target, err := unix.Open(filepath.Join(netnsDir, ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: namespace %s: %v", ErrNotFound, ns, err)
	}
	defer unix.Close(target)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("fleet: own namespace: %w", err)
			return
		}
		defer unix.Close(self)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("fleet: enter namespace %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(self, unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("fleet: leave namespace %s: %w", ns, err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// DialIn opens a connection whose socket lives in the named network namespace ("" for the
// caller's own). addr must be an IP address and port: nothing is resolved inside a namespace.
func DialIn(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNamespace(ns, func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// ListenIn listens in the named network namespace ("" for the caller's own).
func ListenIn(ns, network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := inNamespace(ns, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// ListenPacketIn opens a packet socket (UDP) in the named network namespace.
func ListenPacketIn(ns, network, addr string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := inNamespace(ns, func() error {
		var err error
		pc, err = net.ListenPacket(network, addr)
		return err
	})
	return pc, err
}

// OpenTAP creates a TAP device named name in the named network namespace and returns it open,
// non-blocking (reads go through the runtime's poller, so Close interrupts them), without
// packet information: each read is one Ethernet frame. The device exists as long as the file
// is open. It is created down and without addresses.
func OpenTAP(ns, name string) (*os.File, error) {
	var f *os.File
	err := inNamespace(ns, func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("fleet: /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(name)
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("%w: TAP name %q: %v", ErrInvalid, name, err)
		}
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			return fmt.Errorf("fleet: create TAP %s in %s: %w", name, ns, err)
		}
		f = os.NewFile(uintptr(fd), "tap:"+name)
		return nil
	})
	return f, err
}

// startIn starts cmd with its process in the named network namespace.
func startIn(ns string, cmd *exec.Cmd) error {
	return inNamespace(ns, cmd.Start)
}

// pidsIn lists the processes in a named network namespace (`ip netns pids`).
func pidsIn(ctx context.Context, ns string) []int {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// Cleanup removes what a fleet with this prefix left on the machine, whoever started it: the
// processes in its namespaces (SIGTERM, then SIGKILL after grace), the namespaces, and the host
// ends of its host links. It returns what it removed. Safe to call when nothing is left.
func Cleanup(ctx context.Context, prefix string, grace time.Duration) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("%w: an empty prefix would name every namespace", ErrInvalid)
	}
	nss, err := namespaces(prefix)
	if err != nil {
		return nil, err
	}
	var removed []string
	var pids []int
	for _, ns := range nss {
		pids = append(pids, pidsIn(ctx, ns)...)
	}
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(p, syscall.SIGKILL) == nil {
			removed = append(removed, fmt.Sprintf("process %d (killed)", p))
		} else {
			removed = append(removed, fmt.Sprintf("process %d", p))
		}
	}
	var errs []error
	for _, ns := range nss {
		if err := ipCmd(ctx, "netns", "del", ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "namespace "+ns)
	}
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, prefix+"h-") {
			if err := ipCmd(ctx, "link", "del", i.Name); err != nil {
				// A host end of a veth pair goes when its peer's namespace is destroyed, which
				// the kernel does after `ip netns del` returns: one listed a moment ago may be
				// gone now (seen: "Cannot find device"). Only a link still there is a failure.
				if _, gone := net.InterfaceByName(i.Name); gone != nil {
					removed = append(removed, "link "+i.Name+" (with its namespace)")
					continue
				}
				errs = append(errs, err)
				continue
			}
			removed = append(removed, "link "+i.Name)
		}
	}
	return removed, errors.Join(errs...)
}
