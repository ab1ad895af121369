// Command custom-plugins is minisched with two plugins of its own: a Score
// plugin (LabelScore) and a Reserve plugin (Licenses). Build it, then enable
// them with the configuration beside this file:
//
//	go run ./examples/custom-plugins --scheduler-config examples/custom-plugins/scheduler-config.yaml
//
// Their results show in the dashboard like any other plugin's.
package main

import (
	"minisched/app"
	"minisched/examples/custom-plugins/labelscore"
	"minisched/examples/custom-plugins/licenses"
)

func main() {
	app.Main(
		app.WithPlugin(labelscore.Name, labelscore.New),
		app.WithPlugin(licenses.Name, licenses.New),
	)
}
