package fleet

import (
	"fmt"
	"net/netip"
	"regexp"
)

// Ports of the fleet's services, the same in every namespace (each service has its own address).
const (
	PortPostgres   = 5432
	PortNATS       = 4222
	PortNATSHTTP   = 8222
	PortLeafnodes  = 7422
	PortOrigin     = 8081
	PortOriginOps  = 9091
	PortRelayOps   = 9092
	PortEdge       = 8080
	PortEdgeOps    = 9093
	PortMirrorOps  = 9094
	maxRegions     = 60
	maxEdges       = 200
	coreName       = "core"
	regionTAPName  = "wire"
	hostVethInside = "host"
)

// validName is a region's or prefix's shape: short enough for interface names (15 bytes).
var (
	validRegion = regexp.MustCompile(`^[a-z][a-z0-9]{0,5}$`)
	validPrefix = regexp.MustCompile(`^[a-z][a-z0-9]{0,4}-$`)
)

// plan is the fleet's names and addresses (see the package doc).
type plan struct {
	prefix  string
	regions []string
	edges   int
}

func (p plan) coreNS() string        { return p.prefix + coreName }
func (p plan) regionNS(i int) string { return p.prefix + p.regions[i-1] }
func (p plan) hostVeth(k int) string { return p.prefix + "h-" + p.placeName(k) }
func (p plan) coreTAP(i int) string  { return "w-" + p.regions[i-1] }
func (p plan) nsOf(k int) string     { return p.prefix + p.placeName(k) }
func (p plan) coreAddr() netip.Addr  { return addr4(0, 1) }
func (p plan) regionAddr(i int) netip.Addr {
	return addr4(i, 1)
}
func (p plan) edgeAddr(i, j int) netip.Addr { return addr4(i, 10+j) }

// placeName is "core" for k 0, else region k's name.
func (p plan) placeName(k int) string {
	if k == 0 {
		return coreName
	}
	return p.regions[k-1]
}

// wireAddrs are the core side and region side addresses of region i's wire (a /30).
func (p plan) wireAddrs(i int) (core, region netip.Addr) { return addr4(254, 4*i+1), addr4(254, 4*i+2) }

// hostAddrs are the host side and namespace side addresses of host link k (a /30).
func (p plan) hostAddrs(k int) (host, inside netip.Addr) { return addr4(253, 4*k+1), addr4(253, 4*k+2) }

// regionNet is region i's own /24 (10.77.0.0/24 for the core, i = 0).
func (p plan) regionNet(i int) string { return fmt.Sprintf("10.77.%d.0/24", i) }

func addr4(c, d int) netip.Addr { return netip.AddrFrom4([4]byte{10, 77, byte(c), byte(d)}) }

func (p plan) validate() error {
	if !validPrefix.MatchString(p.prefix) {
		return fmt.Errorf("%w: prefix %q: want 1-5 lower-case letters or digits and a dash", ErrInvalid, p.prefix)
	}
	if len(p.regions) == 0 || len(p.regions) > maxRegions {
		return fmt.Errorf("%w: %d regions: want 1 to %d", ErrInvalid, len(p.regions), maxRegions)
	}
	if p.edges < 1 || p.edges > maxEdges {
		return fmt.Errorf("%w: %d edges per region: want 1 to %d", ErrInvalid, p.edges, maxEdges)
	}
	seen := map[string]bool{coreName: true}
	for _, r := range p.regions {
		if !validRegion.MatchString(r) {
			return fmt.Errorf("%w: region %q: want a lower-case letter and up to 5 letters or digits", ErrInvalid, r)
		}
		if seen[r] {
			return fmt.Errorf("%w: region %q named twice (or named core)", ErrInvalid, r)
		}
		seen[r] = true
	}
	return nil
}
