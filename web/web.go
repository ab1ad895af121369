// Package web holds the dashboard: plain ES modules, CSS and vendored
// libraries, embedded in the binary. There is no build step.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// FS returns the dashboard's files, index.html at the root.
func FS() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}
