package main

import (
	"slices"
	"testing"
)

func TestSplitCPUs(t *testing.T) {
	cases := []struct {
		spec        string
		cores       []int
		server, gen []int
		wantErr     bool
	}{
		{"", []int{0, 1}, []int{0}, []int{1}, false},
		{"", []int{0, 1, 2, 3}, []int{0, 1}, []int{2, 3}, false},
		{"", []int{0}, nil, nil, false}, // one CPU: nothing to split
		{"none", []int{0, 1}, nil, nil, false},
		{"1/0", []int{0, 1}, []int{1}, []int{0}, false},
		{"0-1/2,3", nil, []int{0, 1}, []int{2, 3}, false},
		{"0", nil, nil, nil, true},
		{"a/1", nil, nil, nil, true},
		{"2-1/0", nil, nil, nil, true},
	}
	for _, c := range cases {
		server, gen, err := splitCPUs(c.spec, c.cores)
		if (err != nil) != c.wantErr || !slices.Equal(server, c.server) || !slices.Equal(gen, c.gen) {
			t.Errorf("splitCPUs(%q, %v) = %v, %v, %v; want %v, %v, error %v", c.spec, c.cores, server, gen, err, c.server, c.gen, c.wantErr)
		}
	}
}

func TestBenchScenariosRegistered(t *testing.T) {
	reg, err := benchScenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"reads", "baselines", "freshness", "writes"} {
		if _, ok := reg.Lookup(name); !ok {
			t.Errorf("scenario %q is not registered", name)
		}
	}
}
