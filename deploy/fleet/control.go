package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// File names in a fleet's directory.
const (
	StateFile   = "fleet.json"   // the fleet's State, written by its owner
	ControlFile = "control.sock" // the owner's control socket
)

// Request is a command sent to a fleet's owner over its control socket (one JSON object per
// connection, answered by one Response).
type Request struct {
	// Op is "status", "link" (SetLink and/or Partition of Region), "restart" (RestartEdge of
	// Region's Edge) or "down".
	Op     string `json:"op"`
	Region string `json:"region,omitempty"`
	Edge   int    `json:"edge,omitempty"`
	// Link, when set, replaces the region's link; Direction "to-region" or "to-core" limits
	// it to one direction (default both).
	Link      *Link  `json:"link,omitempty"`
	Direction string `json:"direction,omitempty"`
	// Partition, when set, cuts or restores the region's wire.
	Partition *bool `json:"partition,omitempty"`
}

// Response answers a Request: Error is empty on success; Status comes with "status" and
// "link" (the fleet after the change).
type Response struct {
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
}

// Serve answers requests on ln until ctx ends or a "down" request arrives; it returns
// ErrDownRequested in the latter case, after answering it. The caller then calls Down.
func (f *Fleet) Serve(ctx context.Context, ln net.Listener) error {
	downc := make(chan struct{}, 1)
	var requested atomic.Bool
	go func() {
		select {
		case <-ctx.Done():
		case <-downc:
		}
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if requested.Load() {
				return ErrDownRequested
			}
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			var req Request
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if err := json.NewDecoder(bufio.NewReader(c)).Decode(&req); err != nil {
				json.NewEncoder(c).Encode(Response{Error: "bad request: " + err.Error()})
				return
			}
			c.SetReadDeadline(time.Time{})
			resp := f.handle(ctx, req)
			json.NewEncoder(c).Encode(resp)
			if req.Op == "down" && resp.Error == "" {
				requested.Store(true)
				select {
				case downc <- struct{}{}:
				default:
				}
			}
		}()
	}
}

// ErrDownRequested is returned by Serve when a client asked for the fleet to go down.
var ErrDownRequested = errors.New("fleet: down requested")

func (f *Fleet) handle(ctx context.Context, req Request) Response {
	var err error
	switch req.Op {
	case "status", "down":
	case "link":
		err = f.applyLink(req)
	case "restart":
		err = f.RestartEdge(ctx, req.Region, req.Edge)
	default:
		err = fmt.Errorf("%w: op %q", ErrInvalid, req.Op)
	}
	if err != nil {
		return Response{Error: err.Error()}
	}
	st := f.Status()
	return Response{Status: &st}
}

func (f *Fleet) applyLink(req Request) error {
	if req.Link != nil {
		var err error
		switch req.Direction {
		case "", "both":
			err = f.SetLink(req.Region, *req.Link)
		case "to-region":
			err = f.SetLinkDirection(req.Region, ToRegion, *req.Link)
		case "to-core":
			err = f.SetLinkDirection(req.Region, ToCore, *req.Link)
		default:
			err = fmt.Errorf("%w: direction %q: want both, to-region or to-core", ErrInvalid, req.Direction)
		}
		if err != nil {
			return err
		}
	}
	if req.Partition != nil {
		return f.Partition(req.Region, *req.Partition)
	}
	return nil
}

// Call sends a request to the owner of the fleet in dir and returns its answer; an error
// reaching the socket means no owner is running.
func Call(ctx context.Context, dir string, req Request) (Response, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", filepath.Join(dir, ControlFile))
	if err != nil {
		return Response{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return Response{}, err
	}
	var resp Response
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		return Response{}, err
	}
	return resp, nil
}

// WriteState writes s to <dir>/fleet.json atomically.
func WriteState(dir string, s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, StateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, StateFile))
}

// ReadState reads <dir>/fleet.json.
func ReadState(dir string) (State, error) {
	var s State
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}
