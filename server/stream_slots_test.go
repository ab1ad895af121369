package server

import (
	"errors"
	"net/http"
	"testing"
)

func TestStreamSlots(t *testing.T) {
	l := &streamSlots{perClient: map[string]int{}, maxTotal: 3, maxEach: 2}
	open := func(client string) int {
		err := l.open(client)
		var he *httpError
		switch {
		case err == nil:
			return http.StatusOK
		case errors.As(err, &he):
			return he.code
		}
		t.Fatalf("open(%s): %v", client, err)
		return 0
	}
	steps := []struct {
		name, client string
		close        bool
		want         int
	}{
		{"first of a", "a", false, 200},
		{"second of a", "a", false, 200},
		{"third of a is one too many", "a", false, 429},
		{"first of b", "b", false, 200},
		{"c finds the server full", "c", false, 503},
		{"a closes one", "a", true, 0},
		{"now c fits", "c", false, 200},
	}
	for _, s := range steps {
		if s.close {
			l.close(s.client)
			continue
		}
		if got := open(s.client); got != s.want {
			t.Errorf("%s: %d, want %d", s.name, got, s.want)
		}
	}
	l.close("a")
	l.close("b")
	l.close("c")
	if l.total != 0 || len(l.perClient) != 0 {
		t.Errorf("after every close: total %d, per client %v", l.total, l.perClient)
	}
}
