package app_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"minisched/app"
)

// TestCommandLine: the command line behaves like a Kubernetes tool's:
// flags anywhere among the arguments, written --name, help that shows
// them so, and exit status 2 for a command line it cannot take.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// wantCode is the exit status asked for (0: none), wantErr what
		// the error says otherwise, wantStderr what the command printed.
		wantCode   int
		wantErr    string
		wantStderr string
	}{
		{name: "an unknown flag", args: []string{"--no-such-flag"}, wantCode: 2, wantStderr: "unknown flag: --no-such-flag"},
		{name: "an argument the command does not take", args: []string{"extra"}, wantCode: 2, wantStderr: `unexpected argument "extra"`},
		{name: "a flag's bad value", args: []string{"--max-nodes", "many"}, wantCode: 2, wantStderr: `invalid argument "many"`},
		{name: "replay takes its flags after the file", args: []string{"replay", "no-such.recording.gz", "--addr", "127.0.0.1:0"}, wantErr: "reading the recording"},
		{name: "replay's unknown flag", args: []string{"replay", "x.gz", "--bogus"}, wantCode: 2, wantStderr: "unknown flag: --bogus"},
		{name: "scenario run takes -v and flags after its files", args: []string{"scenario", "run", "no-such.yaml", "-v", "3", "--output", "json"}, wantErr: "no-such.yaml"},
		{name: "scenario run's unknown flag", args: []string{"scenario", "run", "--bogus"}, wantCode: 2, wantStderr: "unknown flag: --bogus"},
		{name: "scenario diff's unknown flag", args: []string{"scenario", "diff", "--bogus"}, wantCode: 2, wantStderr: "unknown flag: --bogus"},
		{name: "whatif's unknown flag", args: []string{"whatif", "--bogus"}, wantCode: 2, wantStderr: "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := app.Run(context.Background(), tt.args, &bytes.Buffer{}, &stderr)
			var exit *app.ExitError
			switch {
			case tt.wantCode != 0:
				if !errors.As(err, &exit) || exit.Code != tt.wantCode {
					t.Errorf("%v: %v, want exit status %d", tt.args, err, tt.wantCode)
				}
			case err == nil || !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("%v: %v, want an error about %q", tt.args, err, tt.wantErr)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("%v printed %q, want %q", tt.args, stderr.String(), tt.wantStderr)
			}
		})
	}
	t.Run("help names the flags --name", func(t *testing.T) {
		for _, args := range [][]string{{"--help"}, {"replay", "--help"}, {"scenario", "run", "-h"}, {"scenario", "diff", "--help"}, {"whatif", "--help"}} {
			var stderr bytes.Buffer
			err := app.Run(context.Background(), args, &bytes.Buffer{}, &stderr)
			if !errors.Is(err, pflag.ErrHelp) || !strings.Contains(stderr.String(), "      --") {
				t.Errorf("%v: %v\n%s", args, err, stderr.String())
			}
		}
	})
}
