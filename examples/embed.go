// Package examples holds what ships with minisched for learners: the bundled
// scenarios of the learning path, one per lesson.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed scenarios/*.yaml
var scenarios embed.FS

// Scenarios returns the bundled scenarios, one *.yaml file each.
func Scenarios() fs.FS {
	sub, err := fs.Sub(scenarios, "scenarios")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}
